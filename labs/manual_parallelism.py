"""Manual parallelism: reshape a batch to (D, B/D, F) by hand, and measure the cost of the barrier."""

import pandas as pd
import streamlit as st

from labs.ui import charts, heavy_jobs, shared_cache
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_int
from labs.ui.visitor import guard
from pmap_core.concepts import manual_parallelism as sync_cost

T = texts("manual_parallelism")
# Measuring compiles and times three programs per device count, so it runs on the button only;
# the page shows the measurement of the same settings last taken on this server, by anyone.


def measure(batch: int, features: int, hidden: int, max_devices: int, repeats: int) -> list[sync_cost.SyncRow]:
    """Time the step for D = 1 … max_devices, with progress, and share the rows with every visitor."""
    rows = []
    with heavy_jobs.heavy_job(T):
        progress = st.progress(0.0)
        for devices in range(1, max_devices + 1):
            progress.progress((devices - 1) / max_devices, text=T("progress", devices=devices, total=max_devices))
            rows.append(sync_cost.measure_step(batch, features, hidden, devices, repeats))
        progress.empty()
    shared_cache.shared_results("manual_parallelism").put((batch, features, hidden, max_devices, repeats), rows)
    return rows


def parts_frame(rows: list[sync_cost.SyncRow]) -> pd.DataFrame:
    parts = [("dispatch_s", T("part.dispatch")), ("compute_s", T("part.compute")), ("comm_s", T("part.comm"))]
    return pd.DataFrame([(row.devices, label, getattr(row, field) * 1e3, order)
                         for row in rows for order, (field, label) in enumerate(parts)],
                        columns=["devices", "part", "ms", "order"])


st.title(T("title"))
st.markdown(T("intro"))

available = runtime_info().device_count
left, right = st.columns(2)
with left:
    batch = url_int(T, "batch", sync_cost.DEFAULT_BATCH, 1, sync_cost.MAX_SYNC_BATCH, slider=False)
    features = url_int(T, "features", sync_cost.DEFAULT_FEATURES, 1, sync_cost.MAX_SYNC_FEATURES, slider=False)
    hidden = url_int(T, "hidden", sync_cost.DEFAULT_HIDDEN, 1, sync_cost.MAX_SYNC_HIDDEN, slider=False)
with right:
    max_devices = url_int(T, "max_devices", min(4, available), 1, available)
    repeats = url_int(T, "repeats", 10, 1, sync_cost.MAX_SYNC_REPEATS)
st.caption(T("limits", batch=sync_cost.MAX_SYNC_BATCH, features=sync_cost.MAX_SYNC_FEATURES,
             hidden=sync_cost.MAX_SYNC_HIDDEN, repeats=sync_cost.MAX_SYNC_REPEATS))

with guard(T):
    st.subheader(T("reshape.heading"))
    shards = [sync_cost.manual_shards(batch, d, features) for d in range(1, max_devices + 1)]
    last = shards[-1]
    padding = f"pad(x, {last.plan.padded})" if last.plan.padded else "x"
    st.code(f"x.shape == {last.global_shape}\n"
            f"x = {padding}.reshape({last.plan.devices}, {last.plan.per_device}, {features})"
            f"  # -> {last.sharded_shape}", language="python")
    st.dataframe(pd.DataFrame(
        [(s.plan.devices, s.plan.per_device, s.plan.padded, str(s.global_shape), str(s.sharded_shape)) for s in shards],
        columns=[T("col.devices"), T("col.per_device"), T("col.padded"), T("col.global"), T("col.sharded")],
    ), hide_index=True)

    st.subheader(T("barrier.heading"))
    st.markdown(T("barrier.explain"))
    st.latex(r"T_{\text{step}} = T_{\text{compute}} + T_{\text{comm}} \;(+\, T_{\text{dispatch}})")

    st.subheader(T("measure.heading"))
    st.markdown(T("measure.explain"))
    wanted = (batch, features, hidden, max_devices, repeats)
    rows = None
    if st.button(T("measure"), key="manual_parallelism.measure", type="primary"):
        rows = measure(*wanted)
    elif (shared := shared_cache.shared_results("manual_parallelism").get(wanted)) is not None:
        st.caption(T("measure.shared", minutes=shared_cache.age_minutes(shared)))
        rows = shared.value
    else:
        st.info(T("measure.pending", devices=max_devices), icon="⏱️")
    if rows is not None:
        hardware_note(T)
        st.altair_chart(charts.bar(parts_frame(rows), "devices", "ms", color="part", order="order",
                                   x_title=T("chart.devices"), y_title=T("chart.ms"), color_title=T("chart.part")),
                        width="stretch")
        st.dataframe(pd.DataFrame(
            [(r.devices, r.step_s * 1e3, r.compute_s * 1e3, r.comm_s * 1e3, r.dispatch_s * 1e3, r.compile_s * 1e3)
             for r in rows],
            columns=[T("col.devices"), T("col.step_ms"), T("col.compute_ms"), T("col.comm_ms"), T("col.dispatch_ms"),
                     T("col.compile_ms")],
        ).round(3), hide_index=True)
        st.markdown(T("lesson"))

show_code(T, sync_cost.manual_shards, sync_cost.loss, sync_cost.local_gradients, sync_cost.synced_gradients,
             sync_cost.empty_step, sync_cost.compiled_step, sync_cost.measure_step)
