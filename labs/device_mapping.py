"""Device mapping: the device list, and the leading axis as the device axis."""

import pandas as pd
import streamlit as st

from labs.ui import charts, shared_cache
from labs.ui.blocks import show_code
from labs.ui.i18n import texts
from labs.ui.links import url_devices, url_int
from labs.ui.visitor import guard
from pmap_core.concepts import sharding

T = texts("device_mapping")
PAGE_MAX_SLICE = 16  # a readable grid


@st.cache_data(show_spinner=False, max_entries=256)
def cached_map(devices: int, per_device: int) -> sharding.LeadingAxisMap:
    return sharding.map_leading_axis(devices, per_device)


@st.cache_resource
def cached_inventory() -> sharding.DeviceInventory:
    return sharding.device_inventory()  # fixed for the life of the process


def owner_cells(mapping: sharding.LeadingAxisMap) -> pd.DataFrame:
    rows = [(position, element, str(owner.device_id), value)
            for position, owner in enumerate(mapping.owners)
            for element, value in enumerate(owner.values)]
    return pd.DataFrame(rows, columns=["row", "element", "device", "value"])


shared_cache.start_warm_up()  # a link may open this lab first: the others still warm up
st.title(T("title"))
st.markdown(T("intro"))

st.subheader(T("devices.heading"))
inventory = cached_inventory()
cols = st.columns(2)
cols[0].metric(T("metric.local"), inventory.local_device_count)
cols[1].metric(T("metric.processes"), inventory.process_count)
st.dataframe(pd.DataFrame(
    [(d.id, d.platform, d.device_kind, d.process_index) for d in inventory.rows],
    columns=[T("col.id"), T("col.platform"), T("col.kind"), T("col.process")],
), hide_index=True)

st.subheader(T("axis.heading"))
st.markdown(T("axis.explain"))
left, right = st.columns(2)
with left:
    devices = url_devices(T, 4)
with right:
    per_device = url_int(T, "per_device", 4, 1, PAGE_MAX_SLICE)

with guard(T):
    mapping = cached_map(devices, per_device)
    cols = st.columns(3)
    cols[0].metric(T("shape.input"), str(mapping.input_shape))
    cols[1].metric(T("shape.per_device"), str(mapping.per_device_shape))
    cols[2].metric(T("shape.output"), str(mapping.output_shape))
    st.latex(rf"{mapping.input_shape} \;\xrightarrow{{\text{{pmap}}}}\; D \times f\big({mapping.per_device_shape}\big)"
             rf"\;\rightarrow\; {mapping.output_shape}")

    st.subheader(T("owners.heading"))
    st.markdown(T("owners.explain"))
    st.altair_chart(charts.heatmap(owner_cells(mapping), "element", "row", "device", text="value", by_device=True,
                                   x_title=T("chart.element"), y_title=T("chart.row"),
                                   value_title=T("chart.device")), width="stretch")
    st.dataframe(pd.DataFrame(
        [(o.device_id, o.index, ", ".join(f"{v:g}" for v in o.values)) for o in mapping.owners],
        columns=[T("col.id"), T("col.index"), T("col.values")],
    ), hide_index=True)
    if mapping.in_device_order:
        st.success(T("ownership.ok"))
    else:
        st.warning(T("ownership.other"))
    st.info(T("sharding.note", sharding=mapping.sharding), icon="ℹ️")

show_code(T, sharding.device_inventory, sharding.mapped_fn, sharding._mapped, sharding.map_leading_axis)
