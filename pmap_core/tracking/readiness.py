"""Whether a deployment can hold a class, checked the way the class uses it (`python -m pmap_core store check`,
docs/DEPLOY.md "Readiness" and "Before class"): each problem is one line.

- The tracking store takes a run: a tag written to a run of the check's own and read back through MLflow's
  API. A probe of `/health` is not enough: `mlflow server` answers it while its database is down and its API
  answers 503, and every training would go to the fallback store.
- The teacher key has a length the app accepts: `pmap-lab app` refuses to start with another one, but under
  `streamlit run` the server starts and every page shows only the refusal.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Mapping

from pmap_core.tracking.probes import server_reachable, store_locked
from pmap_core.tracking.uris import check_tracking_uri, redact_uri
from pmap_core.validation import TEACHER_KEY_ENV, LabInputError, check_teacher_key

CHECK_EXPERIMENT = "pmap-lab-checks"  # apart from the lab's runs: no page lists it
CHECK_RUN = "readiness"  # one run, made on the first check and tagged on each one after
CHECKED_TAG = "pmap_lab.checked"
_WHY_CHARS = 300


class NotReady(Exception):
    """What keeps a deployment from holding a class, in one line."""


def _first_line(error: BaseException) -> str:
    """The error in one line: MLflow's messages run over several, and over HTTP they bury the answer (`too many
    503 error responses`) at the end of urllib3's."""
    text = " ".join(str(error).split())
    cause = re.search(r"failed with exception .*\(Caused by \w+\('(.+?)'\)\)", text)
    if cause:
        text = text[:cause.start()] + "failed: " + cause.group(1)
    return redact_uri(f"{type(error).__name__}: {text}")[:_WHY_CHARS]


def check_store(uri: str) -> str:
    """Write a tag to the check's own run in the store `uri` and read it back; the run's id. A NotReady when the
    store is refused, does not answer, is locked, or does not take the write."""
    from mlflow.tracking import MlflowClient

    from pmap_core.tracking import mlflow_backend
    from pmap_core.tracking.uris import store_uri

    shown = redact_uri(uri)
    try:
        check_tracking_uri(uri)
    except LabInputError as error:
        raise NotReady(f"the tracking store {shown} cannot be used: {error}") from None
    if not server_reachable(uri):
        raise NotReady(f"the tracking store {shown} does not answer")
    if store_locked(uri):
        raise NotReady(f"the tracking store {shown} is locked by another process")
    for name, value in mlflow_backend.HTTP_ENV_DEFAULTS.items():  # a failing server is known in seconds
        os.environ.setdefault(name, value)
    logging.getLogger("mlflow").setLevel(logging.ERROR)  # its retries and warnings would add lines
    stamp = uuid.uuid4().hex
    try:
        client = MlflowClient(store_uri(uri))
        experiment = mlflow_backend.experiment_id(client, CHECK_EXPERIMENT)
        found = client.search_runs([experiment], f"attributes.run_name = '{CHECK_RUN}'", max_results=1)
        if found:
            run_id = found[0].info.run_id
        else:
            run_id = client.create_run(experiment, run_name=CHECK_RUN).info.run_id
            client.set_terminated(run_id)
        client.set_tag(run_id, CHECKED_TAG, stamp)
        read = client.get_run(run_id).data.tags.get(CHECKED_TAG)
    except Exception as error:  # noqa: BLE001 - whatever the store answered is the one line
        raise NotReady(f"the tracking store {shown} does not take a run: {_first_line(error)}") from None
    if read != stamp:
        raise NotReady(f"the tracking store {shown} did not give back what was written to it")
    return run_id


def check_teacher_key_setting(environ: Mapping[str, str]) -> None:
    """A NotReady when PMAP_LAB_TEACHER_KEY in `environ` has a length the app refuses."""
    try:
        check_teacher_key(environ.get(TEACHER_KEY_ENV, ""))
    except LabInputError as error:
        raise NotReady(f"{error}: every page would show only the refusal; set a longer one or unset it") from None


def read_env_file(path: str) -> dict[str, str]:
    """The variables of an environment file as systemd's EnvironmentFile= reads the simple ones (`NAME=value`
    lines, `#` comments, a value in quotes), so that the check sees what the service gets."""
    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 - read at once
    except OSError as error:
        raise NotReady(f"cannot read the environment file {path}: {error.strerror}") from None
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        name, value = (part.strip() for part in line.split("=", 1))
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name] = value
    return values
