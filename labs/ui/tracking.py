"""Where a training's MLflow run went, or why none was started, and links into MLflow's own UI.

A tracking URI comes from the environment and a fallback path from the store: both are shown
redacted and as plain text, never as markdown. A link into MLflow's UI is built by
`pmap_core.tracking` from the setting PMAP_LAB_MLFLOW_UI_URL and store ids only (never from what a
user typed), and drawn as a link button or a table's link column, never as markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from labs.ui.i18n import Texts
from labs.ui.visitor import literal
from pmap_core import LabInputError
from pmap_core import tracking as core
from pmap_core.tracking import check_tracking_uri, experiments, redact_uri, tracking_uri

if TYPE_CHECKING:
    from pmap_core.tracking.callback import TrackedSweep, TrackedTraining

LINK_COLUMN = "mlflow"  # a table's column of links to each run's page in MLflow's UI
RUN_ICON = "📈"


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
    `where`), the fallback store under `tracking.fell_back`, or what failed under `tracking.failed`;
    then a link to the run in MLflow's UI (and, for a sweep, one that compares its runs)."""
    if tracked.error:
        st.error(T("tracking.failed"), icon="📦")
        st.code(tracked.error, language=None, wrap_lines=True)
        return
    if tracked.fell_back_to:
        st.warning(T("tracking.fell_back", store=literal(tracked.fell_back_to)), icon="📦")
    st.caption(T("tracking.where", **where))
    st.code(f"{tracked.run_id}\n{redact_uri(tracked.tracking_uri)}", language=None)
    open_in_mlflow(T, tracked)


@st.cache_data(show_spinner=False, max_entries=1000)
def _experiment_of(run_id: str, uri: str) -> str | None:
    """The run's experiment id; a run never moves, so the answer is kept (a miss is asked again)."""
    found = experiments.experiment_of(run_id, uri)
    if found is None:
        raise LookupError(run_id)  # not cached: the run may be there on the next rerun
    return found


def experiment_of(run_id: str | None, uri: str) -> str | None:
    if not run_id:
        return None
    try:
        return _experiment_of(run_id, uri)
    except Exception:  # noqa: BLE001 - no run, or a store that fails: no link, the run's id is shown above
        return None


def mlflow_ui(T: Texts, uri: str) -> str | None:
    """The address of MLflow's UI for the store `uri`, or None (saying why) when PMAP_LAB_MLFLOW_UI_URL
    is set to something that is no plain http(s) address."""
    ui = core.mlflow_ui_url(uri)
    if ui is None:
        st.caption(T("mlflow.bad_setting", name=core.MLFLOW_UI_URL_ENV))
    return ui


def open_in_mlflow(T: Texts, tracked: TrackedTraining | TrackedSweep) -> None:
    """The run's page in MLflow's UI, in its Model-training view; for a sweep, also its runs compared."""
    if tracked.fell_back_to:  # MLflow's UI shows the configured store, not the fallback
        st.caption(T("mlflow.fallback"))
        st.code(core.ui_command(tracked.tracking_uri), language="bash")
        return
    run_buttons(T, tracked.run_id, tracked.tracking_uri, [run for run in getattr(tracked, "child_run_ids", ()) if run])


def run_buttons(T: Texts, run_id: str | None, uri: str, compared: Sequence[str] = ()) -> None:
    """A button that opens run `run_id` of the store `uri` in MLflow's UI, in its Model-training view,
    and one that compares the runs `compared` (a sweep's) there; nothing when the run is not found."""
    ui = mlflow_ui(T, uri)
    experiment = experiment_of(run_id, uri)
    link = core.run_link(ui, experiment, run_id)
    if link is None:
        return
    compare = core.compare_link(ui, [(experiment, run) for run in compared])
    left, right = st.columns(2)
    left.link_button(T("mlflow.open_run"), link, icon=RUN_ICON, width="stretch")
    if compare is not None:
        right.link_button(T("mlflow.compare_sweep", runs=len(compared)), compare, icon=RUN_ICON, width="stretch")
    st.caption(T("mlflow.needs_ui"))


def with_run_links(frame: pd.DataFrame, ui: str | None, after: str) -> pd.DataFrame:
    """`frame` (columns `experiment_id` and `run_id`) with a LINK_COLUMN after its column `after`:
    each run's page in MLflow's UI, or nothing for a row without a run."""
    missing = [None] * len(frame)
    links = [core.run_link(ui, experiment, run) for experiment, run in
             zip(frame.get("experiment_id", missing), frame.get("run_id", missing), strict=True)]
    linked = frame.copy()
    position = list(frame.columns).index(after) + 1 if after in frame.columns else len(frame.columns)
    linked.insert(position, LINK_COLUMN, pd.Series(links, index=frame.index, dtype=object))
    return linked


def link_column(T: Texts) -> st.column_config.LinkColumn:
    """How a table draws LINK_COLUMN: one "Open in MLflow" link a row (a plain label, not the address)."""
    return st.column_config.LinkColumn(T("mlflow.column"), display_text=T("mlflow.open_run"),
                                       help=T("mlflow.needs_ui"))


def experiment_buttons(T: Texts, ui: str | None, runs: Sequence[tuple[str, str]]) -> None:
    """The experiment's runs in MLflow's UI, and the runs a page shows compared there ((experiment id,
    run id) pairs, newest first: the first MAX_COMPARED_RUNS of them)."""
    experiment_ids = list(dict.fromkeys(experiment for experiment, _ in runs))
    experiment = core.experiment_link(ui, experiment_ids[0]) if len(experiment_ids) == 1 else None
    compare = core.compare_link(ui, runs)
    if experiment is None and compare is None:
        return
    left, right = st.columns(2)
    if experiment is not None:
        left.link_button(T("mlflow.open_experiment"), experiment, icon=RUN_ICON, width="stretch")
    if compare is not None:
        compared = min(len(runs), core.MAX_COMPARED_RUNS)
        label = "mlflow.compare_shown" if compared == len(runs) else "mlflow.compare_newest"
        right.link_button(T(label, runs=compared), compare, icon=RUN_ICON, width="stretch")
    st.caption(T("mlflow.needs_ui"))
