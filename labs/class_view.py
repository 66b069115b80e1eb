"""Class: what a class's students ran and answered, read from the tracking store by class code."""

import streamlit as st

from labs.ui import classroom
from labs.ui.blocks import dataframe, show_code
from labs.ui.hardware import hardware_note
from labs.ui.i18n import texts
from labs.ui.tracking import usable_tracking_uri
from pmap_core.tracking import classroom as core
from pmap_core.tracking import redact_uri

T = texts("class_view")


def table(frame) -> None:
    """Students' names and codes are only ever shown in tables: plain text, never markdown."""
    if frame.empty:
        st.caption(T("none"))
    else:
        dataframe(T, frame)


st.title(T("title"))
st.markdown(T("intro"))

code = core.sanitize_code(st.text_input(T("w.code"), value=classroom.class_code(), max_chars=core.CODE_MAX_CHARS,
                                        key="class_view.code"))
uri = usable_tracking_uri(T)
runs = None
if not code:
    st.info(T("enter_code"), icon="🧑‍🏫")
elif uri is not None:
    try:
        record = core.read_class(code, uri)
        runs = record.runs
        for kind in record.capped:  # the newest `limit` runs of that kind are all that is read
            capped = "capped.training" if kind == "training" else "capped.exercise"
            st.warning(T(capped, limit=record.limit), icon="✂️")
    except Exception as error:  # noqa: BLE001 - an unreachable or broken store: say so, never a traceback
        st.error(T("store_failed"), icon="📦")
        st.code(redact_uri(f"{type(error).__name__}: {error}")[:300], language=None, wrap_lines=True)

if runs is not None and runs.empty:
    st.info(T("nothing_yet"), icon="🕳️")
elif runs is not None:
    st.caption(T("students", students=runs["student"].nunique(), runs=len(runs)))
    st.caption(T("plain_text_note"))

    st.subheader(T("completion.heading"))
    st.markdown(T("completion.body"))
    table(core.completion(runs))

    st.subheader(T("efficiency.heading"))
    st.markdown(T("efficiency.body"))
    table(core.best_efficiency(runs))
    hardware_note(T)

    st.subheader(T("leaderboard.heading"))
    st.markdown(T("leaderboard.body"))
    groups = core.settings_groups(runs)
    if groups:
        chosen = st.selectbox(T("w.settings"), groups, key="class_view.settings")
        table(core.leaderboard(runs, chosen))
    else:
        st.caption(T("none"))

    st.subheader(T("runs.heading"))
    table(runs)
    st.download_button(T("download"), core.to_csv(runs), file_name="class.csv", mime="text/csv",
                       key="class_view.download")

show_code(T, core.read_class, core.completion, core.best_efficiency, core.leaderboard)
