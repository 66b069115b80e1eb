"""The Plan page's compute model and its validation: how the planner times compute (each operation at its own rate,
or every FLOP at one share of peak), every published run it knows predicted as the paper ran it beside what the paper
reported (a table, a scatter plot against the identity line, the mean absolute error, the worst row, the constants
fitted and on which rows), and, where the page's setting is a published run's, why the planner's first plan beats
the paper's layout (`planner.view.published_gap`)."""

from __future__ import annotations

import dataclasses

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui.blocks import dataframe
from labs.ui.i18n import Texts
from labs.ui.links import url_bool, url_float
from pmap_core.concepts.planner import HARDWARE, MODELS, PUBLISHED, compute, search
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import DEFAULT_ASSUMPTIONS, predict


def compute_choice(T: Texts) -> float | None:
    """None: each operation at its own rate (the default); with the toggle on, one share of peak for every FLOP."""
    if not url_bool(T, "flat", False):
        st.caption(T("compute.by_operation"))
        return None
    return url_float(T, "achievable", pv.FLAT_ACHIEVABLE, 0.01, 1.0, step=0.05)


@st.cache_data(show_spinner=False, max_entries=8)
def validated(assumptions) -> tuple[pv.Validated, ...]:
    return pv.validate(assumptions)


def frame(T: Texts, rows: tuple[pv.Validated, ...]) -> pd.DataFrame:
    return pd.DataFrame([{
        "run": r.run.key, "model": MODELS[r.run.model].name, "devices": r.run.devices,
        "paper_layout": f"TP{r.run.model_axis} CP{r.run.seq_axis} PP{r.run.stage_axis} DP{r.run.data_axis}",
        "as_run_plan": r.prediction.layout.label(), "reported_kind": counts_label(T, r.counts),
        "reported_pct": 100 * r.reported, "predicted_pct": 100 * r.predicted, "error_points": 100 * r.error,
        "source": r.run.source} for r in rows])


def scatter(T: Texts, table: pd.DataFrame) -> alt.Chart:
    """Predicted against reported, one point a run, and the identity line (a perfect prediction)."""
    low = min(table["reported_pct"].min(), table["predicted_pct"].min()) - 2
    high = max(table["reported_pct"].max(), table["predicted_pct"].max()) + 2
    x = alt.X(field="reported_pct", type="quantitative", title=T("validation.reported"),
              scale=alt.Scale(domain=[low, high]))
    y = alt.Y(field="predicted_pct", type="quantitative", title=T("validation.predicted"),
              scale=alt.Scale(domain=[low, high]))
    points = alt.Chart(table).mark_circle(size=80).encode(
        x=x, y=y, color=alt.Color(field="reported_kind", type="nominal", title=T("validation.counts")),
        tooltip=[alt.Tooltip(field=name, type=kind) for name, kind in (
            ("run", "nominal"), ("reported_pct", "quantitative"), ("predicted_pct", "quantitative"))])
    identity = alt.Chart(pd.DataFrame({"reported_pct": [low, high], "predicted_pct": [low, high]})).mark_line(
        strokeDash=[4, 4], color="gray").encode(x=x, y=y)
    return (identity + points).properties(title=T("validation.chart"))


def term_label(T: Texts, term: str) -> str:
    """A step part (`planner.view.time_parts`) in words: a kind of compute, the bubble, or an axis's exposed
    communication."""
    labels = {"matmul": T("term.matmul"), "attention": T("term.attention"), "elementwise": T("term.elementwise"),
              "recompute": T("term.recompute"), "head": T("term.head"), "optimizer": T("term.optimizer"),
              search.BUBBLE: T("term.bubble")}
    return labels.get(term) or T("term.axis", axis=term)


def counts_label(T: Texts, counts: str) -> str:
    return T("counts.hfu") if counts == "hfu" else T("counts.mfu")


def matching_run(model_key: str, hardware_key: str, devices: int, seq_len: int, tokens: int):
    """The published run whose setting is the page's, if any."""
    return next((run for run in PUBLISHED.values() if (run.model, run.hardware, run.devices, run.seq_len,
                                                       run.global_batch_tokens) == (model_key, hardware_key, devices,
                                                                                   seq_len, tokens)), None)


def show_gap(T: Texts, result: search.PlanResult, run) -> None:
    """Why the first plan beats the paper's layout as run, in one sentence from the numbers; where it splits the
    sequence, the same plan under the contiguous layout's causal imbalance."""
    gap = pv.published_gap(result, run)
    if gap is None:
        st.caption(T("gap.none", run=run.key))
        return
    counts = counts_label(T, "hfu" if run.counts_recompute else "mfu")
    st.markdown(T("gap.sentence", first=gap.first.layout.label(), paper=gap.paper.layout.label(),
                  points=100 * gap.points, counts=counts, term=term_label(T, gap.term), first_s=gap.first_s,
                  paper_s=gap.paper_s))
    layout = gap.first.layout
    if layout.seq > 1:
        contiguous = predict(result.model, dataclasses.replace(layout, context="contiguous"), result.workload,
                             result.hardware, result.assumptions)
        again = pv.separating(contiguous, gap.paper, run, result.assumptions.overlap)
        st.markdown(T("gap.contiguous", seq=layout.seq, imbalance=compute.imbalance(
            result.workload.seq_len, layout.seq, "contiguous"), mfu=100 * pv.utilisation(contiguous, run),
            term=term_label(T, again.term), first_s=again.first_s, paper_s=again.paper_s))
        if again.term == search.BUBBLE:
            st.markdown(T("gap.why_bubble"))


def show(T: Texts, assumptions, result: search.PlanResult | None, setting: tuple) -> None:
    """The validation table and scatter, its errors and its fitted constants; the first plan beside a published
    layout where the page's setting is that run's."""
    rows = validated(dataclasses.replace(DEFAULT_ASSUMPTIONS, overlap=assumptions.overlap))
    table = frame(T, rows)
    st.altair_chart(scatter(T, table), width="stretch")
    dataframe(T, table)
    bad = pv.worst(rows)
    st.markdown(T("validation.errors", mae=100 * pv.mean_absolute_error(rows), rows=len(rows), worst=bad.run.key,
                  error=100 * bad.error))
    fitted = {key: sum(run.hardware == key for run in PUBLISHED.values()) for key, _ in pv.FITTED}
    st.markdown(T("validation.fitted", a100=HARDWARE["a100"].matmul_share, a100_rows=fitted["a100"],
                  h100=HARDWARE["h100"].matmul_share, h100_rows=fitted["h100"], overlap=assumptions.overlap))
    st.markdown(T("validation.counting"))
    run = matching_run(*setting)
    if run is not None and result is not None:
        show_gap(T, result, run)
