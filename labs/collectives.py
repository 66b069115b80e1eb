"""Collectives: each device's values before and after, from real execution, checked against NumPy."""

import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import charts
from labs.ui.blocks import export_button, show_code
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_int
from labs.ui.visitor import guard
from pmap_core import export
from pmap_core.concepts import collectives

T = texts("collectives")
PAGE_MAX_SIZE = 32  # values per device that still read as a grid
LABELLED_CELLS = 160  # above this many cells, numbers are left to the tooltip

# What device d holds afterwards; x_s is device s's input, x_[c] its chunk c of n/D values.
FORMULAS = {
    "pmean": r"y_d = \bar g = \frac{1}{D}\sum_{s=0}^{D-1} x_s",
    "psum": r"y_d = \sum_{s=0}^{D-1} x_s",
    "pmax": r"y_d = \max_{s} x_s",
    "pmin": r"y_d = \min_{s} x_s",
    "all_gather": r"y_d = \begin{bmatrix} x_0 \\ x_1 \\ \vdots \\ x_{D-1} \end{bmatrix} \in \mathbb{R}^{D \times n}",
    "all_gather_tiled": r"y_d = x_0 \,\Vert\, x_1 \,\Vert \cdots \Vert\, x_{D-1} \in \mathbb{R}^{D n}",
    "psum_scatter": r"y_d = \Big(\sum_{s} x_s\Big)_{d} \in \mathbb{R} \qquad (n = D)",
    "psum_scatter_tiled": r"y_d = \Big(\sum_{s} x_s\Big)_{[d]} "
                          r"= \Big(\sum_{s} x_s\Big)\big[d\tfrac{n}{D} : (d+1)\tfrac{n}{D}\big]",
    "ppermute": r"y_{(d+1) \bmod D} = x_d",
    "all_to_all": r"(y_d)_{[s]} = (x_s)_{[d]}",
}


@st.cache_data(show_spinner=False, max_entries=512)
def cached_run(op: str, devices: int, size: int, seed: int) -> collectives.CollectiveRun:
    return collectives.run_collective(op, devices, size, seed)


def grid(values: np.ndarray) -> pd.DataFrame:
    """(D, ...) values as one row per (device, element), each device's values flattened."""
    flat = values.reshape(values.shape[0], -1)
    return pd.DataFrame([(d, e, float(v)) for d, row in enumerate(flat) for e, v in enumerate(row)],
                        columns=["device", "element", "value"])


def draw(values: np.ndarray, title: str) -> None:
    frame = grid(values)
    st.altair_chart(charts.heatmap(
        frame, "element", "device", "value", title=title, text=None if len(frame) <= LABELLED_CELLS else "",
        x_title=T("chart.element"), y_title=T("chart.device"), value_title=T("chart.value"),
    ), width="stretch")


st.title(T("title"))
st.markdown(T("intro"))

left, right = st.columns(2)
with left:
    op = url_choice(T, "op", collectives.OPS, "pmean")
    devices = url_devices(T, 4)
with right:
    # Sizes an op that chunks over D devices accepts, up to D itself on a server of more than 32 devices.
    size = url_int(T, "size", collectives.default_size(op, devices), 1, max(PAGE_MAX_SIZE, devices))
    seed = url_int(T, "seed", 0, 0, 9_999, slider=False)

st.markdown(T("formula"))
st.latex(FORMULAS[op])
st.caption(T("formula.chunks") if op in collectives.CHUNKED_OPS else T("formula.elementwise"))
st.markdown(T(f"use.{op}"))

with guard(T):
    run = cached_run(op, devices, size, seed)
    draw(run.before, T("before"))
    if run.jax_error:  # the input JAX refuses, run as written: its requirement and its real error
        st.warning(T("scatter.needs_n_equal_d", size=size, devices=devices), icon="📐")
        st.code(run.jax_error, language="text", wrap_lines=True)
    else:
        st.caption(T("shapes", inp=run.per_device_in, out=run.per_device_out))
        draw(run.after, T("after"))
        if run.ok:
            st.success(T("check.ok", devices=run.devices, error=run.max_abs_error))
        else:
            st.error(T("check.bad", error=run.max_abs_error))
    export_button(T, lambda: export.collectives_export(op, devices, size, seed))

show_code(T, collectives.collective_fn, collectives.compiled_collective, collectives.reference,
             collectives.run_collective)
