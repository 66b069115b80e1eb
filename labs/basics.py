"""Parallel basics: cut a batch of B samples into D shards of b = B / D, then compute on them."""

import pandas as pd
import streamlit as st

from labs.ui import charts, shared_cache
from labs.ui.blocks import show_code
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_int
from labs.ui.visitor import guard
from pmap_core.concepts import sharding

T = texts("basics")
PAGE_MAX_BATCH = 4_096  # the sample chart stays readable and quick
SHOWN_CELLS = 256  # beyond this, the grid shows the first cells only


@st.cache_data(show_spinner=False, max_entries=256)
def cached_parallel_mean(batch: int, devices: int, policy: str) -> sharding.ParallelMean:
    return sharding.parallel_mean(batch, devices, policy)


def owner_frame(result: sharding.ParallelMean) -> pd.DataFrame:
    """One cell per slot of the (D, b) shards: the sample it holds; dropped samples get a row of their own."""
    plan = result.plan
    device = T("chart.owner")
    cells = [(f"{device} {d}", i - d * plan.per_device, f"{device} {d}", str(i))
             for i, d in enumerate(plan.owner) if d >= 0]
    cells += [(f"{device} {plan.devices - 1}", plan.per_device - plan.padded + k, T("chart.pad"), "")
              for k in range(plan.padded)]
    cells += [(T("chart.dropped"), k, T("chart.dropped"), str(plan.kept + k)) for k in range(plan.dropped)]
    return pd.DataFrame(cells[:SHOWN_CELLS], columns=["row", "slot", "holder", "sample"])


shared_cache.start_warm_up()  # a link may open this lab first: the others still warm up
st.title(T("title"))
st.markdown(T("intro"))
st.markdown(T("formula_intro"))
st.latex(r"b = \frac{B}{D}")

left, right = st.columns(2)
with left:
    batch = url_int(T, "batch", 12, 1, PAGE_MAX_BATCH, slider=False)
    devices = url_devices(T, 4)
with right:
    policy = url_choice(T, "policy", sharding.POLICIES, "error", radio=True)
    st.markdown(T("policy.explain"))

with guard(T):
    result = cached_parallel_mean(batch, devices, policy)
    plan = result.plan

    st.subheader(T("plan.heading"))
    fraction = rf"\frac{{{plan.batch}}}{{{plan.devices}}}"
    rounded = {"pad": rf"\left\lceil {fraction} \right\rceil", "drop": rf"\left\lfloor {fraction} \right\rfloor"}
    shown = rounded.get(plan.policy, fraction) if plan.batch % plan.devices else fraction
    st.latex(rf"b = {shown} = {plan.per_device}")
    cols = st.columns(4)
    cols[0].metric(T("metric.per_device"), plan.per_device)
    cols[1].metric(T("metric.dropped"), plan.dropped)
    cols[2].metric(T("metric.padded"), plan.padded)
    cols[3].metric(T("metric.shape"), str(result.sharded_shape))
    owners = owner_frame(result)
    st.altair_chart(charts.heatmap(owners, "slot", "row", "holder", text="sample", by_device=True,
                                   x_title=T("chart.slot"), y_title="", value_title=T("chart.holder")),
                    width="stretch")
    cells = plan.devices * plan.per_device + plan.dropped
    if cells > SHOWN_CELLS:
        st.caption(T("chart.first_cells", shown=SHOWN_CELLS, total=cells))

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

show_code(T, sharding.plan_shards, sharding.shard_batch, sharding.per_sample_loss,
             sharding._masked_mean_fn, sharding.parallel_mean)
