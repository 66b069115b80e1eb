"""Common pmap mistakes: each one and its fix run on the installed JAX, with what really happened."""

import inspect

import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.blocks import show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice
from labs.ui.visitor import guard
from pmap_core.practice import pitfalls
from pmap_core.practice.pitfalls import entries as pitfall_entries

T = texts("mistakes")
RAN_KEY = "mistakes.ran"  # entries this session has run, so their results stay on screen


@st.cache_data(show_spinner=False)
def cached_run(pitfall_id: str) -> pitfalls.PitfallRun:
    with heavy_jobs.heavy_job(T), st.spinner(T("running")):  # a cache hit never queues
        return pitfalls.run_pitfall(pitfall_id)


st.title(T("title"))
st.markdown(T("intro"))
ids = pitfalls.pitfall_ids()
kinds = [pitfall_entries.kind_here(i) for i in ids]  # as they show on this runtime (some need two devices)
count = T("count", count=len(ids), raises=kinds.count(pitfalls.RAISES), silent=kinds.count(pitfalls.SILENT),
          wasteful=kinds.count(pitfalls.WASTEFUL))
if pitfalls.HARMLESS in kinds:
    count += " " + T("count_harmless", harmless=kinds.count(pitfalls.HARMLESS))
st.caption(count)
hidden_here = [i for i in ids if pitfall_entries.differs_here(i)]  # needs two or more devices; this runtime has one
if hidden_here:
    st.caption(T("count_one_device", count=len(hidden_here)))

chosen = url_choice(T, "entry", ids, ids[0])
entry = pitfalls.get_pitfall(chosen)
st.subheader(T(f"w.entry.{chosen}"))
kind_line = st.empty()  # the kind this runtime shows: stated until the entry runs, then read from the run
kind_line.markdown(f"**{T(f'kind.{pitfall_entries.kind_here(chosen)}')}** — {T(f'entry.{chosen}.what')}")
if chosen in hidden_here:
    st.info(T(f"entry.{chosen}.one_device"), icon="ℹ️")

st.caption(T("what_people_write"))
st.code(inspect.getsource(entry.mistake), language="python")
st.caption(T("the_fix"))
st.code(inspect.getsource(entry.fix), language="python")
if entry.helpers:
    with st.expander(T("helpers")):
        for helper in entry.helpers:
            st.code(inspect.getsource(helper), language="python")

ran = st.session_state.setdefault(RAN_KEY, set())
if st.button(T("run"), key="mistakes.run", type="primary"):
    ran.add(chosen)

if chosen in ran:
    result = None
    with guard(T):
        result = cached_run(chosen)
    if result is not None:
        kind_line.markdown(f"**{T(f'kind.{result.kind_shown}')}** — {T(f'entry.{chosen}.what')}")
        wrong, right = st.columns(2)
        with wrong:
            st.caption(T("captured_mistake"))
            st.code(result.mistake.as_text(), language="text", wrap_lines=True)
        with right:
            st.caption(T("captured_fix"))
            st.code(result.fix.as_text(), language="text", wrap_lines=True)
        st.markdown(f"**{T('why')}** {T(f'entry.{chosen}.why')}")
        st.markdown(f"**{T('fix')}** {T(f'entry.{chosen}.fix')}")
        jax_version = runtime_info().jax_version
        if result.claim_holds:
            st.success(T("claim_holds", jax=jax_version), icon="✅")
        else:
            st.warning(T("claim_differs", jax=jax_version), icon="⚠️")
else:
    st.info(T("press_run"), icon="👆")

show_code(T, pitfalls.capture, pitfalls.run_pitfall)
