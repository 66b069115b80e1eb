"""The device runtime, shown in every page's sidebar and beside every scaling figure."""

from __future__ import annotations

import streamlit as st

from labs.ui.i18n import Texts
from pmap_core import RuntimeInfo, describe_runtime


@st.cache_resource
def runtime_info() -> RuntimeInfo:
    return describe_runtime()


def runtime_sidebar(T: Texts) -> None:
    info = runtime_info()
    with st.sidebar.expander(T("runtime.title"), expanded=False):
        st.markdown(T(
            "runtime.body", jax=info.jax_version, backend=info.backend, kind=info.device_kind,
            devices=info.device_count, cores=info.physical_cores,
            simulated=T("yes") if info.simulated else T("no"),
        ))
        if info.simulated:
            st.caption(T("runtime.simulated_note", cores=info.physical_cores))


def hardware_note(T: Texts) -> None:
    """Beside every scaling figure: what the best possible speedup is on this runtime."""
    info = runtime_info()
    if info.simulated:
        st.info(T("hardware_note.simulated", devices=info.device_count, cores=info.physical_cores), icon="🖥️")
    else:
        st.info(T("hardware_note.real", devices=info.device_count, kind=info.device_kind), icon="🚀")
