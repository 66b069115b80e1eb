"""The Plan page's ranking: the plans that fit as a table, each plan's memory and step time in parts as charts,
the verdict on the first in sentences chosen by the case its figures fall in (`planner.view.read_verdict`), the
published runs predicted beside what their papers reported as a table, and the labels these share with the page."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts
from labs.ui.blocks import dataframe
from labs.ui.i18n import Texts
from labs.ui.plan_inputs import plain
from pmap_core.concepts.planner import search
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import NODE, Prediction

GB = pv.GB
TOP = 10                     # plans in the table
CHARTED = 5                  # plans in the charts


def level_label(T: Texts, level: str) -> str:
    return T("level.node") if level == NODE else T("level.cluster")


def part_label(T: Texts, name: str, prediction: Prediction) -> str:
    """A step-time part (`search.step_parts`): compute, the bubble, or an axis's exposed communication with its
    level and link."""
    if name == search.COMPUTE:
        return T("part.compute")
    if name == search.BUBBLE:
        return T("part.bubble")
    comm = prediction.comm_on(name)
    return T("part.axis", axis=name, level=level_label(T, comm.level), link=comm.link)


def memory_label(T: Texts, part: str) -> str:
    """A part of a device's memory (`predict.Memory`'s fields, as `view.memory_parts` lists them)."""
    return T(f"mem.{part}") if T.has(f"mem.{part}") else part


def axes_of(layout) -> str:
    return pv.layout_key(layout).replace(",", " × ")


def ranking_frame(plans) -> pd.DataFrame:
    return pd.DataFrame([{"rank": i + 1, "layout": axes_of(p.layout), "zero": p.layout.zero, "remat": p.layout.remat,
                          "microbatches": p.layout.microbatches, "virtual": p.layout.virtual,
                          "memory_gb": p.prediction.memory.total / GB, "step_s": p.prediction.step_s,
                          "mfu_pct": 100 * p.prediction.mfu} for i, p in enumerate(plans)])


def memory_chart(T: Texts, plans, budget: float, hardware_name: str) -> alt.LayerChart:
    frame = pd.DataFrame([{"plan": f"#{i + 1}", "layout": p.layout.label(), "part": memory_label(T, part),
                           "gb": held / GB, "order": k}
                          for i, p in enumerate(plans) for k, (part, held) in enumerate(pv.memory_parts(p.prediction))])
    bars = charts.bar(frame, "plan", "gb", x_title=T("axis.plan"), y_title=T("axis.memory_gb"), color="part",
                      color_title=T("axis.part"), order="order", title=T("chart.memory"))
    limit = pd.DataFrame({"gb": [budget / GB], "what": [T("rule.memory", name=hardware_name)]})
    rule = alt.Chart(limit).mark_rule(color="crimson", strokeDash=[6, 4], size=2).encode(
        y=alt.Y("gb:Q"), tooltip=charts.tooltips(limit))
    return alt.layer(bars, rule)


def step_chart(T: Texts, plans, overlap: float) -> alt.Chart:
    rows = []
    for i, plan in enumerate(plans):
        p = plan.prediction
        for k, (name, seconds) in enumerate(pv.parts(p, overlap).items()):
            rows.append({"plan": f"#{i + 1}", "layout": p.layout.label(), "part": part_label(T, name, p),
                         "seconds": seconds, "order": k})
    return charts.bar(pd.DataFrame(rows), "plan", "seconds", x_title=T("axis.plan"), y_title=T("axis.seconds"),
                      color="part", color_title=T("axis.part"), order="order", title=T("chart.step"))


def verdict_lines(T: Texts, reading: pv.Reading, result: search.PlanResult) -> list[str]:
    """The verdict as sentences, each chosen by the case the figures fall in (`view.read_verdict`)."""
    first = reading.first
    lines = [T("verdict.first", layout=first.layout.label(), step=first.step_s, mfu=first.mfu,
               memory=first.memory.total / GB, budget=first.memory_budget / GB)]
    if reading.standing == pv.SINGLE:
        lines.append(T("verdict.single", d=result.devices))
    elif reading.standing == pv.ONLY:
        lines.append(T("verdict.only", d=result.devices, unfit=len(result.unfit)))
    elif reading.standing == pv.TIE:
        lines.append(T("verdict.tie", runner=reading.runner.layout.label()))
    else:
        runner = reading.runner
        gap = dict(runner=runner.layout.label(), gap=runner.step_s - first.step_s, part=reading.separating_s)
        if reading.by == pv.BY_COMPUTE:
            lines.append(T("verdict.by_compute", remat=runner.layout.remat, first_remat=first.layout.remat, **gap))
        elif reading.by == pv.BY_BUBBLE:
            lines.append(T("verdict.by_bubble", bubble=runner.bubble, first_bubble=first.bubble, **gap))
        else:
            c = reading.axis_comm
            lines.append(T("verdict.by_axis", axis=c.axis, size=c.size, level=level_label(T, c.level),
                           link=plain(result.hardware, c.link), **gap))
    if reading.bound == pv.BOUND_MEMORY:
        lines.append(T("bound.memory", faster=reading.faster.label(), saved=reading.bound_s,
                       need=reading.faster_bytes / GB, budget=first.memory_budget / GB))
    elif reading.bound == pv.BOUND_NOTHING:
        lines.append(T("bound.nothing", compute=first.compute_s))
    elif reading.bound == pv.BOUND_BUBBLE:
        layout = first.layout
        lines.append(T("bound.bubble", seconds=reading.bound_s, step=first.step_s, bubble=first.bubble,
                       p=layout.stage, v=layout.virtual, m=layout.microbatches))
    else:
        c = reading.bound_comm
        lines.append(T("bound.axis", axis=c.axis, size=c.size, level=level_label(T, c.level),
                       link=plain(result.hardware, c.link), seconds=reading.bound_s, step=first.step_s,
                       sent=c.bytes / GB))
    return lines


def show_ranking(T: Texts, result: search.PlanResult, overlap: float) -> None:
    if not result.plans:
        least = result.unfit[0].prediction
        st.warning(T("none_fit", d=result.devices, least=least.memory.total / GB, layout=least.layout.label(),
                     budget=least.memory_budget / GB), icon="🧱")
        dataframe(T, ranking_frame(result.unfit[:TOP]))
        return
    shown = result.plans[:TOP]
    dataframe(T, ranking_frame(shown))
    st.caption(T("ranked.count", shown=len(shown), fitting=len(result.plans), unfit=len(result.unfit)))
    charted = result.plans[:CHARTED]
    left, right = st.columns(2)
    left.altair_chart(memory_chart(T, charted, result.hardware.memory_bytes, result.hardware.name), width="stretch")
    right.altair_chart(step_chart(T, charted, overlap), width="stretch")
    st.subheader(T("verdict.heading"))
    for line in verdict_lines(T, pv.read_verdict(result), result):
        st.markdown(line)


def published_frame(T: Texts, rows: tuple[pv.PublishedRow, ...]) -> pd.DataFrame:
    frame = []
    for row in rows:
        run, best, as_run = row.run, row.best.prediction, row.as_run.prediction
        frame.append({
            "run": run.key, "model": row.model.name, "hardware": row.hardware.name, "devices": run.devices,
            "paper_layout": f"TP{run.model_axis} CP{run.seq_axis} PP{run.stage_axis} DP{run.data_axis}",
            "seq_len": run.seq_len, "reported_pct": 100 * run.utilisation,
            "reported_kind": T("counts.hfu") if run.counts_recompute else T("counts.mfu"),
            "best_variant": best.layout.label(), "best_memory_gb": best.memory.total / GB,
            "best_mfu_pct": 100 * best.mfu, "best_hfu_pct": 100 * best.hfu if run.counts_recompute else None,
            "as_run_variant": as_run.layout.label(), "as_run_memory_gb": as_run.memory.total / GB,
            "as_run_mfu_pct": 100 * as_run.mfu, "as_run_hfu_pct": 100 * as_run.hfu if run.counts_recompute else None,
            "source": run.source})
    return pd.DataFrame(frame)
