"""The home page: data parallelism in three formulas, and a link to every lab."""

import streamlit as st

from labs.registry import LABS, script_path
from labs.ui import shared_cache
from labs.ui.i18n import texts
from pmap_core import versions

T = texts("home")
shared_cache.start_warm_up()  # once per server: imports and default compiles, off the request path

st.title(T("heading"))
st.markdown(T("intro"))
running = versions.running()
st.caption(T("versions.running", jax=running.jax, jaxlib=running.jaxlib, python=running.python,
             verified_jax=running.verified_jax, verified_python=running.verified_python))
st.markdown(T("formula_intro"))
st.latex(r"b = \frac{B}{D}, \qquad \bar g = \frac{1}{D}\sum_{d=1}^{D} g_d, \qquad w \leftarrow w - \eta\,\bar g")

st.subheader(T("labs"))
for lab in LABS:
    lab_texts = texts(lab.script)
    with st.container(border=True):
        st.page_link(script_path(lab), label=lab_texts("title"), icon=lab.icon)
        st.caption(lab_texts("summary"))

st.info(T("pmap_status"), icon="ℹ️")
