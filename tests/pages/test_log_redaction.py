"""What the lab logs for the operator never carries a tracking URI's credentials."""

import logging

from labs.ui.visitor import log


def test_a_logged_traceback_quoting_a_uri_with_credentials_is_redacted(caplog):
    uri = "https://student:s3cret-token@mlflow.example/?token=abc123"
    with caplog.at_level(logging.ERROR, logger="pmap_lab"):
        try:
            raise ConnectionError(f"cannot reach {uri}")
        except ConnectionError:
            log.exception("lab %s failed for %s", "training", uri)
    (record,) = [r for r in caplog.records if r.name == "pmap_lab"]
    written = logging.Formatter().format(record)
    assert "ConnectionError" in written and "mlflow.example" in written
    assert "s3cret-token" not in written and "abc123" not in written
    assert record.exc_info[0] is ConnectionError  # the traceback itself is kept for the operator
