"""Where a training's MLflow run went, or why none was started. A tracking URI comes from the
environment and a fallback path from the store: both are shown redacted and as plain text, never
as markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from labs.ui.i18n import Texts
from labs.ui.visitor import literal
from pmap_core import LabInputError
from pmap_core.tracking import check_tracking_uri, redact_uri, tracking_uri

if TYPE_CHECKING:
    from pmap_core.tracking.callback import TrackedSweep, TrackedTraining


def usable_tracking_uri(T: Texts) -> str | None:
    """The tracking URI, or None (with the reason shown as plain text, under the page's
    `tracking.refused`) when no run could be stored there."""
    try:
        return check_tracking_uri(tracking_uri())
    except LabInputError as error:
        st.error(T("tracking.refused"), icon="🛑")
        st.code(str(error), language=None, wrap_lines=True)
        return None


def show_tracking(T: Texts, tracked: TrackedTraining | TrackedSweep, **where: object) -> None:
    """Where the run went: its id and store under the page's `tracking.where` (formatted with
    `where`), the fallback store under `tracking.fell_back`, or what failed under `tracking.failed`."""
    if tracked.error:
        st.error(T("tracking.failed"), icon="📦")
        st.code(tracked.error, language=None, wrap_lines=True)
        return
    if tracked.fell_back_to:
        st.warning(T("tracking.fell_back", store=literal(tracked.fell_back_to)), icon="📦")
    st.caption(T("tracking.where", **where))
    st.code(f"{tracked.run_id}\n{redact_uri(tracked.tracking_uri)}", language=None)
