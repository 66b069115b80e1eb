"""pmap-lab: the router. Fix the device runtime, pick the language, run the chosen lab."""

import streamlit as st

import pmap_core  # fixes the device count before anything touches JAX
from labs.registry import HOME, LABS, script_path
from labs.ui import server_exit, share
from labs.ui.first_imports import import_libraries
from labs.ui.hardware import runtime_sidebar
from labs.ui.i18n import LANGUAGE_KEY, language, languages, texts
from labs.ui.links import start_recording
from labs.ui.visitor import GuardedPage
from pmap_core import tracking, versions

PAGES_KEY = "router.pages"  # session state: (language, the pages by section) this session navigates

# Every session's router imports the modules above in the same order, so they wait on one another
# cleanly; the pages and the warm-up start from different modules: see labs/ui/first_imports.py.
import_libraries()
from labs.ui import predicting, teacher  # noqa: E402 - they import MLflow: only once import_libraries() has

server_exit.bound_graceful_shutdown()  # a stalled client cannot keep the server alive after SIGTERM

st.set_page_config(page_title="pmap-lab", page_icon="⚡", layout="wide")

try:
    pmap_core.configure_runtime()  # raises again what importing pmap_core let pass: a bad PMAP_LAB_DEVICES
except ValueError as error:
    st.error("pmap-lab cannot start with this device setting / 设备数设置无效，无法启动", icon="🛑")
    st.code(str(error), language=None, wrap_lines=True)  # the value comes from the environment: plain text
    st.stop()
# Before any page compiles: a restarted server reads its programs from the cache (docs/DEPLOY.md).
pmap_core.configure_compilation_cache(tracking.tracking_uri())

# The choice starts at the language this session shows: the link's on the session's first run, its own after. It
# is given in every run, never through session state, which would undo a choice sent by a page that reconnected to
# another process (labs.ui.links); a starting index that changed between runs (the link's, then the first) was
# taken back by the browser, which then sent the first language as the visitor's choice.
shown = st.session_state.get(LANGUAGE_KEY) if LANGUAGE_KEY in st.session_state else st.query_params.get(LANGUAGE_KEY)
st.sidebar.radio("Language / 语言", list(languages()), format_func=languages().get, key=LANGUAGE_KEY, horizontal=True,
                 index=list(languages()).index(shown if shown in languages() else "en"))
st.query_params[LANGUAGE_KEY] = language()

common = texts("common")
teacher.refuse_bad_key()  # a teacher key too short to withstand guessing: no page runs
# The session's pages, made once per language: each st.Page finds its file on disk (a tenth of a click's run).
if st.session_state.get(PAGES_KEY, (None,))[0] != language():
    sections: dict[str, list] = {}
    for lab in [HOME, *LABS]:
        page = st.Page(script_path(lab), title=texts(lab.script)("title"), icon=lab.icon,
                       url_path=lab.url_path or None, default=lab is HOME)
        sections.setdefault(common(lab.section), []).append(page)
    st.session_state[PAGES_KEY] = (language(), sections)

current = GuardedPage(st.navigation(st.session_state[PAGES_KEY][1], expanded=True), common)
running = versions.running()
if running.other_jax_minor:  # once, above every page: its sentences were checked on another JAX
    st.warning(common("versions.other_minor", jax=running.jax, verified=versions.minor(running.verified_jax)),
               icon="⚠️")
runtime_sidebar(common)
start_recording()  # this run's link-backed widgets record their settings for the share panel
try:
    current.run()
finally:  # a lab drawn with a worksheet step's settings has shown that step's figure, even if it stopped
    predicting.saw_lab(current.url_path)
share.share_panel(common, current.url_path)
