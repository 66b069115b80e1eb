"""pmap-lab: the router. Fix the device runtime, pick the language, run the chosen lab."""

import streamlit as st

import pmap_core  # noqa: F401 - fixes the device count before anything touches JAX
from labs import ui
from labs.i18n import LANGUAGE_KEY, LANGUAGES, language, texts
from labs.registry import HOME, LABS, script_path

st.set_page_config(page_title="pmap-lab", page_icon="⚡", layout="wide")

if LANGUAGE_KEY not in st.session_state:
    requested = st.query_params.get(LANGUAGE_KEY)
    st.session_state[LANGUAGE_KEY] = requested if requested in LANGUAGES else "en"
st.sidebar.radio("Language / 语言", list(LANGUAGES), format_func=LANGUAGES.get, key=LANGUAGE_KEY, horizontal=True)
st.query_params[LANGUAGE_KEY] = language()

common = texts("common")
sections: dict[str, list] = {}
for lab in [HOME, *LABS]:
    page = st.Page(script_path(lab), title=texts(lab.script)("title"), icon=lab.icon,
                   url_path=lab.url_path or None, default=lab is HOME)
    sections.setdefault(common(lab.section), []).append(page)

current = ui.GuardedPage(st.navigation(sections, expanded=True), common)
ui.runtime_sidebar(common)
current.run()
