"""Parallel basics: cut a batch of B samples into D shards of b = B / D, then compute on them."""

import pandas as pd
import streamlit as st

from labs import charts, ui
from labs.i18n import texts
from pmap_core import sharding

T = texts("basics")
PAGE_MAX_BATCH = 4_096  # the sample chart stays readable and quick
SHOWN_SAMPLES = 256


@st.cache_data(show_spinner=False, max_entries=256)
def cached_parallel_mean(batch: int, devices: int, policy: str) -> sharding.ParallelMean:
    return sharding.parallel_mean(batch, devices, policy)


def owner_frame(result: sharding.ParallelMean) -> pd.DataFrame:
    """One row per sample (and per padded slot): which device holds it."""
    plan = result.plan
    rows = [(i, T("chart.dropped") if d < 0 else f"{T('chart.owner')} {d}") for i, d in enumerate(plan.owner)]
    rows += [(plan.batch + i, T("chart.pad")) for i in range(plan.padded)]
    return pd.DataFrame(rows[:SHOWN_SAMPLES], columns=["sample", "device"])


st.title(T("title"))
st.markdown(T("intro"))
st.markdown(T("formula_intro"))
st.latex(r"b = \frac{B}{D}")

available = ui.runtime_info().device_count
left, right = st.columns(2)
with left:
    batch = ui.url_int(T, "batch", 12, 1, PAGE_MAX_BATCH, slider=False)
    devices = ui.url_int(T, "devices", min(4, available), 1, available)
with right:
    policy = ui.url_choice(T, "policy", sharding.POLICIES, "error", radio=True)
    st.markdown(T("policy.explain"))

with ui.guard(T):
    result = cached_parallel_mean(batch, devices, policy)
    plan = result.plan

    st.subheader(T("plan.heading"))
    st.latex(rf"b = \frac{{{plan.batch}}}{{{plan.devices}}} \;\rightarrow\; {plan.per_device}")
    cols = st.columns(4)
    cols[0].metric(T("metric.per_device"), plan.per_device)
    cols[1].metric(T("metric.dropped"), plan.dropped)
    cols[2].metric(T("metric.padded"), plan.padded)
    cols[3].metric(T("metric.shape"), str(result.sharded_shape))
    owners = owner_frame(result)
    st.altair_chart(charts.device_strip(owners, "sample", "device", x_title=T("chart.sample"),
                                        device_title=T("chart.owner")), width="stretch")
    if len(plan.owner) + plan.padded > SHOWN_SAMPLES:
        st.caption(T("chart.first_samples", shown=SHOWN_SAMPLES, total=len(plan.owner) + plan.padded))

    st.subheader(T("compute.heading"))
    st.markdown(T("compute.explain"))
    per_device = pd.DataFrame({
        "device": range(plan.devices),
        "real": result.device_counts,
        "sum": result.device_sums,
    })
    chart_left, chart_right = st.columns(2)
    chart_left.altair_chart(charts.bar(per_device, "device", "real", x_title=T("chart.owner"),
                                       y_title=T("chart.real")), width="stretch")
    chart_right.altair_chart(charts.bar(per_device, "device", "sum", x_title=T("chart.owner"),
                                        y_title=T("chart.partial")), width="stretch")
    cols = st.columns(3)
    cols[0].metric(T("metric.parallel"), f"{result.parallel_mean:.6f}")
    cols[1].metric(T("metric.single"), f"{result.single_device_mean:.6f}")
    cols[2].metric(T("metric.diff"), f"{result.max_abs_diff:.2e}")
    if plan.dropped:
        st.caption(T("drop_note", kept=plan.kept))
    if result.max_abs_diff <= 1e-5 * max(1.0, abs(result.single_device_mean)):
        st.success(T("check.ok", diff=result.max_abs_diff))
    else:
        st.error(T("check.bad", diff=result.max_abs_diff))

ui.show_code(T, sharding.plan_shards, sharding.shard_batch, sharding.per_sample_loss,
             sharding._masked_mean_fn, sharding.parallel_mean)
