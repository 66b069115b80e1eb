"""Manual parallelism: reshape a batch to (D, B/D, F) by hand, and measure the cost of the barrier."""

import pandas as pd
import streamlit as st

from labs import charts, heavy_jobs, ui
from labs.i18n import texts
from pmap_core import sync_cost

T = texts("manual_parallelism")
ATTEMPT_KEY = "manual_parallelism.attempt"  # bumped by "measure again" to bypass the cache
# The settings last measured in this session. Measuring compiles and times three programs per
# device count, so after the first visit it waits for the button and the rest of the page
# answers a changed setting at once.
MEASURED_KEY = "manual_parallelism.measured"


@st.cache_data(show_spinner=False, max_entries=512)
def cached_step(batch: int, features: int, hidden: int, devices: int, repeats: int,
                attempt: int) -> sync_cost.SyncRow:
    with heavy_jobs.heavy_job(T):  # a cache hit never queues
        return sync_cost.measure_step(batch, features, hidden, devices, repeats)


def parts_frame(rows: list[sync_cost.SyncRow]) -> pd.DataFrame:
    parts = [("dispatch_s", T("part.dispatch")), ("compute_s", T("part.compute")), ("comm_s", T("part.comm"))]
    return pd.DataFrame([(row.devices, label, getattr(row, field) * 1e3, order)
                         for row in rows for order, (field, label) in enumerate(parts)],
                        columns=["devices", "part", "ms", "order"])


st.title(T("title"))
st.markdown(T("intro"))

available = ui.runtime_info().device_count
left, right = st.columns(2)
with left:
    batch = ui.url_int(T, "batch", sync_cost.DEFAULT_BATCH, 1, sync_cost.MAX_SYNC_BATCH, slider=False)
    features = ui.url_int(T, "features", sync_cost.DEFAULT_FEATURES, 1, sync_cost.MAX_SYNC_FEATURES, slider=False)
    hidden = ui.url_int(T, "hidden", sync_cost.DEFAULT_HIDDEN, 1, sync_cost.MAX_SYNC_HIDDEN, slider=False)
with right:
    max_devices = ui.url_int(T, "max_devices", min(4, available), 1, available)
    repeats = ui.url_int(T, "repeats", 10, 1, sync_cost.MAX_SYNC_REPEATS)
st.caption(T("limits", batch=sync_cost.MAX_SYNC_BATCH, features=sync_cost.MAX_SYNC_FEATURES,
             hidden=sync_cost.MAX_SYNC_HIDDEN, repeats=sync_cost.MAX_SYNC_REPEATS))

with ui.guard(T):
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
    if st.button(T("measure"), key="manual_parallelism.measure", type="primary"):
        if st.session_state.get(MEASURED_KEY) == wanted:
            st.session_state[ATTEMPT_KEY] = st.session_state.get(ATTEMPT_KEY, 0) + 1
        st.session_state[MEASURED_KEY] = wanted
    if st.session_state.setdefault(MEASURED_KEY, wanted) != wanted:
        st.info(T("measure.pending", devices=max_devices), icon="⏱️")
    else:
        attempt = st.session_state.get(ATTEMPT_KEY, 0)
        rows = []
        progress = st.progress(0.0)
        for devices in range(1, max_devices + 1):
            progress.progress((devices - 1) / max_devices, text=T("progress", devices=devices, total=max_devices))
            rows.append(cached_step(batch, features, hidden, devices, repeats, attempt))
        progress.empty()

        ui.hardware_note(T)
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

ui.show_code(T, sync_cost.manual_shards, sync_cost.loss, sync_cost.local_gradients, sync_cost.synced_gradients,
             sync_cost.empty_step, sync_cost.compiled_step, sync_cost.measure_step)
