"""A visitor of the app is shown no error details: Streamlit's option is set to none here, and the
README tells a developer how to turn them on."""

from __future__ import annotations

import tomllib

from harness.processes import ROOT


def test_visitors_are_shown_no_traceback():
    """Streamlit shows a visitor no error details (its default is the full traceback); a
    developer turns them on with --client.showErrorDetails=full, as the README says."""
    from streamlit.config import ShowErrorDetailsConfigOptions

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    shown = config.get("client", {}).get("showErrorDetails")
    assert shown == ShowErrorDetailsConfigOptions.NONE, f"client.showErrorDetails = {shown!r}"
    assert "--client.showErrorDetails=full" in (ROOT / "README.md").read_text()
