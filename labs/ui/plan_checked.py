"""The Plan page's check on this server's devices: the top plans of the lab's transformer compiled
(`planner.check.check_top`), each one's memory per device and bytes per mesh axis, the planner's beside the
compiler's, as charts and tables, with the reasons they differ and the command that trains each plan."""

from __future__ import annotations

import dataclasses
import shlex

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts, heavy_jobs
from labs.ui.blocks import dataframe
from labs.ui.i18n import Texts
from labs.ui.visitor import literal
from pmap_core.concepts.planner import check
from pmap_core.train.mesh import AXES

CHECKED = "plan.checked"      # session state: the Checked of the last Check click
CHECK_COUNT = 3              # plans compiled by the Check button


@dataclasses.dataclass(frozen=True)
class Checked:
    devices: int
    plans: tuple


def run_check(T: Texts, devices: int) -> None:
    with heavy_jobs.heavy_job(T), st.spinner(T("checking", d=devices, count=CHECK_COUNT)):
        plans = check.check_top(devices, CHECK_COUNT)
    st.session_state[CHECKED] = Checked(devices, tuple(plans))


def axis_order(axis: str) -> int:
    return AXES.index(axis) if axis in AXES else len(AXES)


def checked_frames(kept: Checked) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each checked plan's memory per device, and each mesh axis's bytes per step: the planner's beside the
    compiler's (None where the compiler reports none)."""
    memory = pd.DataFrame([{"rank": i + 1, "layout": c.layout.label(), "predicted_bytes": c.prediction.memory.total,
                            "compiled_peak_bytes": c.compiled_peak_bytes, "memory_ratio": c.memory_ratio}
                           for i, c in enumerate(kept.plans)])
    sent = pd.DataFrame([{"rank": i + 1, "axis": axis, "predicted_sent": c.predicted_bytes.get(axis, 0.0),
                          "hlo_sent": c.hlo_bytes.get(axis, 0.0), "axis_ratio": c.axis_ratios.get(axis)}
                         for i, c in enumerate(kept.plans)
                         for axis in sorted({*c.predicted_bytes, *c.hlo_bytes}, key=axis_order)])
    return memory, sent


def side_by_side(T: Texts, rows: list[tuple[str, float | None, float | None]], x_title: str, y_title: str,
                 title: str) -> alt.Chart:
    """Bars of the planner's figure beside the compiler's, for each plan (or plan and axis)."""
    names = {"predicted": T("series.predicted"), "compiler": T("series.compiler")}
    frame = pd.DataFrame([{"what": what, "which": names[which], "bytes": value}
                          for what, predicted, compiler in rows
                          for which, value in (("predicted", predicted), ("compiler", compiler))
                          if value is not None])
    return charts.bar(frame, "what", "bytes", x_title=x_title, y_title=y_title, color="which",
                      color_title=T("axis.which"), stack=False, title=title).encode(xOffset="which:N")


def show_checked(T: Texts, kept: Checked) -> None:
    memory, sent = checked_frames(kept)
    left, right = st.columns(2)
    left.altair_chart(side_by_side(T, [(f"#{r.rank}", r.predicted_bytes, r.compiled_peak_bytes)
                                    for r in memory.itertuples()], T("axis.plan"), T("axis.bytes"),
                                   T("chart.check_memory")), width="stretch")
    if sent.empty:
        right.caption(T("check.no_comm"))
    else:
        right.altair_chart(side_by_side(T, [(f"#{r.rank} {r.axis}", r.predicted_sent, r.hlo_sent)
                                         for r in sent.itertuples()], T("axis.plan_axis"), T("axis.bytes_sent"),
                                        T("chart.check_comm")), width="stretch")
    dataframe(T, memory)
    if memory["compiled_peak_bytes"].isna().any():
        st.caption(T("check.no_peak"))
    if not sent.empty:
        dataframe(T, sent)
    for i, c in enumerate(kept.plans):
        st.markdown(T("check.plan", rank=i + 1, layout=c.layout.label()))
        for code in c.reasons:
            st.markdown("- " + (T(f"reason.{code}") if T.has(f"reason.{code}") else literal(code)))
        if not c.reasons:
            st.caption(T("check.no_reasons"))
        st.code(shlex.join(check.train_command(c.layout, kept.devices)), language="bash")
