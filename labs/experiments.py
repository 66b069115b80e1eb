"""The runs recorded in MLflow: filter them, compare throughput and efficiency against D for the three
implementations (pmap, shard_map, jit), and overlay loss curves."""

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts
from labs.ui import tracking as tracking_ui
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note
from labs.ui.i18n import texts
from labs.ui.links import url_choice
from pmap_core.tracking import (
    DIVERGED_METRIC,
    FALLBACK_TRACKING_URI,
    check_tracking_uri,
    experiments,
    redact_uri,
    server_reachable,
    store_locked,
    tracking_uri,
)
from pmap_core.train import models
from pmap_core.train.advice import DEFAULT_IMPL, TOLERANCE
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError

T = texts("experiments")
ALL = "all"
TABLE_COLUMNS = ["run_name", "status", "start_time", "model", "impl", "setup", "devices", "num_processes",
                 "global_batch", "scaling", "throughput", "steady_throughput", "scaling_ratio", "efficiency",
                 "final_loss", DIVERGED_METRIC, "tags.backend", "tags.simulated", "run_id", "experiment_id"]
# How the table shows its numbers (printf formats of st.column_config.NumberColumn), not raw floats.
NUMBER_FORMATS = {"throughput": "%,.0f", "steady_throughput": "%,.0f", "scaling_ratio": "%.2f",
                  "efficiency": "%.2f", "final_loss": "%.4g", DIVERGED_METRIC: "%d"}
THROUGHPUTS = ("steady_throughput", "throughput")  # the two throughputs a chart can show against D
IMPL_COLORS = alt.Scale(domain=list(IMPLEMENTATIONS), scheme="set1")  # the same hue everywhere


def read_runs(uri: str) -> pd.DataFrame | None:
    """Every run in the store, or None (with an error shown) when the store cannot be read.

    What a store says (its URI, its errors) is shown redacted and as plain text, never as markdown.
    """
    try:
        check_tracking_uri(uri)
    except LabInputError as error:
        st.error(T("store.refused"), icon="🛑")
        st.code(str(error), language=None, wrap_lines=True)
        return None
    if not server_reachable(uri):
        st.error(T("store.unreachable", fallback=FALLBACK_TRACKING_URI), icon="🔌")
        return None
    if store_locked(uri, write=False):
        st.error(T("store.locked", fallback=FALLBACK_TRACKING_URI), icon="🔒")
        return None
    try:
        with st.spinner(T("loading")):
            return experiments.load_runs(uri)
    except Exception as error:  # noqa: BLE001 - any failure of the store is shown, not raised
        st.error(T("store.unreadable"), icon="🛑")
        st.code(redact_uri(f"{type(error).__name__}: {error}")[:300], language=None, wrap_lines=True)
        return None


def runs_table(frame: pd.DataFrame, ui: str | None) -> None:
    """The runs, one a row: headers in the page's language, numbers rounded to what they mean, and
    each run's link into MLflow's UI."""
    frame = tracking_ui.with_run_links(frame, ui, after="run_name").drop(columns=["experiment_id"], errors="ignore")
    config = {column: T(f"col.{column}") for column in frame.columns if T.has(f"col.{column}")}
    config |= {column: st.column_config.NumberColumn(config.get(column, column), format=fmt)
               for column, fmt in NUMBER_FORMATS.items() if column in frame.columns}
    config[tracking_ui.LINK_COLUMN] = tracking_ui.link_column(T)
    st.dataframe(frame, hide_index=True, width="stretch", column_config=config)


def group_label(row: pd.Series) -> str:
    """The runs a line joins: same model, batch and scaling (and training state, where it is not the plain step)."""
    setup = row.get("setup")
    extra = f" · {setup}" if isinstance(setup, str) and setup != experiments.PLAIN_SETUP else ""
    return f"{row['model']} · B={row['global_batch']} · {row['scaling']}{extra}"


def against_devices(frame: pd.DataFrame, y: str, y_title: str, title: str) -> alt.Chart:
    """Every run as a point coloured by its implementation (shaped by its group); a line through the
    median of each implementation and group at each D."""
    color = alt.Color("impl:N", title=T("axis.impl"), scale=IMPL_COLORS)
    x = alt.X("devices:Q", title="D", scale=alt.Scale(domainMin=1))
    points = alt.Chart(frame, title=title).mark_point(size=70, opacity=0.8, filled=True).encode(
        x=x, y=alt.Y(f"{y}:Q", title=y_title), color=color, shape=alt.Shape("group:N", title=T("axis.group")),
        tooltip=["run_name", "run_id", "impl", "devices", alt.Tooltip(f"{y}:Q", format=",.4g")],
    )
    medians = frame.groupby(["group", "impl", "devices"], as_index=False)[y].median()
    lines = alt.Chart(medians).mark_line().encode(x=x, y=f"{y}:Q", color=color,
                                                  strokeDash=alt.StrokeDash("group:N", title=T("axis.group")))
    return points + lines


def scaling_charts(table: pd.DataFrame) -> None:
    st.subheader(T("scaling.heading"))
    frame = table.assign(group=table.apply(group_label, axis=1), devices=table["devices"].astype(int))
    which = url_choice(T, "throughput", THROUGHPUTS, THROUGHPUTS[0], radio=True)
    left, right = st.columns(2)
    measured = frame[frame[which].notna()]  # S(D) is the ratio of the steady figure
    left.altair_chart(against_devices(measured, which, T(f"axis.{which}"), T(f"scaling.{which}")), width="stretch")
    with_efficiency = frame[frame["efficiency"].notna()]
    ideal = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(strokeDash=[4, 4]).encode(y="y:Q")
    right.altair_chart(against_devices(with_efficiency, "efficiency", T("axis.efficiency"), T("scaling.efficiency"))
                       + ideal, width="stretch")
    st.caption(T("scaling.note"))
    hardware_note(T)
    impl_table(table, which)


def impl_table(table: pd.DataFrame, metric: str) -> None:
    """The implementations side by side at each D: the median of `metric`, the fastest, and how the
    default implementation compares with it."""
    st.subheader(T("impl.heading"))
    wide = experiments.impl_comparison(table, metric)
    impls = [i for i in IMPLEMENTATIONS if i in wide.columns]
    if len(impls) < 2:
        st.info(T("impl.single"), icon="ℹ️")
        return
    st.caption(T("impl.metric", metric=T(f"col.{metric}")))
    share = f"{DEFAULT_IMPL}_share"
    config = {"model": T("col.model"), "global_batch": T("col.global_batch"), "scaling": T("col.scaling"),
              "devices": T("col.devices"), "fastest": T("col.fastest"), "runs": T("col.runs")}
    config |= {i: st.column_config.NumberColumn(i, format=NUMBER_FORMATS[metric]) for i in impls}
    config[share] = st.column_config.NumberColumn(T("col.default_share", default=DEFAULT_IMPL), format="%.2f")
    st.dataframe(wide, hide_index=True, width="stretch", column_config=config)
    st.caption(T("impl.note", default=DEFAULT_IMPL, tolerance=round(TOLERANCE * 100),
                 threshold=1 - TOLERANCE))
    st.markdown(T("impl.mlflow"))


def loss_curves(runs: pd.DataFrame, uri: str) -> None:
    st.subheader(T("loss.heading"))
    trainings = experiments.compared_runs(runs)
    impl = trainings["impl"].map(lambda value: f" · {value}" if isinstance(value, str) else "")  # same names in each
    names = dict(zip(trainings["run_id"], trainings["run_name"] + impl + " · " + trainings["run_id"].str[:8],
                     strict=True))
    chosen = st.multiselect(T("loss.choose"), list(names), default=list(names)[:3], format_func=names.get,
                            key="experiments.loss_runs")
    if not chosen:
        st.info(T("loss.none"), icon="👆")
        return
    history = experiments.loss_histories(chosen, uri)
    if history.empty:
        st.info(T("loss.empty"), icon="ℹ️")
        return
    history = history.assign(run=history["run_id"].map(names))
    positive = bool((history["loss"] > 0).all())
    chart = charts.line(history.drop(columns=["run_id"]), "step", "loss", x_title=T("axis.step"),
                        y_title=T("axis.loss"), color="run", color_title=T("axis.run"))
    chart = chart.mark_line().encode(y=alt.Y("loss:Q", title=T("axis.loss"),
                                             scale=alt.Scale(type="log" if positive else "linear")))
    st.altair_chart(chart, width="stretch")


st.title(T("title"))
st.markdown(T("intro"))

uri = tracking_uri()
st.caption(T("store.uri"))
st.code(redact_uri(uri), language=None)
st.markdown(T("store.ui_command"))
st.code(experiments.ui_command(uri), language="bash")

runs = read_runs(uri)
if runs is not None and runs.empty:
    st.info(T("empty"), icon="🌱")
    st.code("python -m pmap_core train --model linear --devices 8 --global-batch 256 --steps 300\n"
            "python -m pmap_core sweep --model mlp --global-batch 512 --steps 200\n"
            "python -m pmap_core sweep --model linear --steps 200 --impl all", language="bash")
elif runs is not None:
    cols = st.columns(3)
    with cols[0]:
        model = url_choice(T, "model", [ALL, *models.MODELS], ALL)
    batches = sorted({int(b) for b in runs["global_batch"].dropna()})
    with cols[1]:
        batch = url_choice(T, "batch", [ALL, *map(str, batches)], ALL)
    with cols[2]:
        impl = url_choice(T, "impl", [ALL, *IMPLEMENTATIONS], ALL)
    st.caption(T("impl.legacy", legacy=experiments.LEGACY_IMPL))
    if model != ALL:
        runs = runs[runs["model"] == model]
    if batch != ALL:
        runs = runs[runs["global_batch"] == int(batch)]
    if impl != ALL:
        runs = experiments.filter_impl(runs, impl)
    compared = experiments.compared_runs(runs)  # a sweep's parent sums up its runs: it is not one of them
    st.caption(T("count", runs=len(compared), sweeps=len(runs) - len(compared)))
    if runs.empty:
        st.info(T("filtered_empty"), icon="🔎")
    else:
        ui = tracking_ui.mlflow_ui(T, uri)
        if not compared.empty:
            tracking_ui.experiment_buttons(T, ui, list(zip(compared["experiment_id"], compared["run_id"],
                                                           strict=True)))
        shown = [c for c in TABLE_COLUMNS if c in runs.columns]
        runs_table(runs[shown], ui)
        diverged = int(compared[DIVERGED_METRIC].notna().sum()) if DIVERGED_METRIC in compared else 0
        if diverged:
            st.caption(T("diverged", runs=diverged))
        table = experiments.scaling_table(runs)
        if table.empty:
            st.info(T("scaling.none"), icon="ℹ️")
        else:
            scaling_charts(table)
        loss_curves(runs, uri)

show_code(T, experiments.load_runs, experiments.loss_histories, experiments.compared_runs,
          experiments.scaling_table, experiments.filter_impl, experiments.impl_comparison)
