"""Class: what a class's students ran and answered, read from the tracking store by class code."""

import pandas as pd
import streamlit as st

from labs.ui import classroom
from labs.ui import tracking as tracking_ui
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note
from labs.ui.i18n import texts
from pmap_core.tracking import classroom as core
from pmap_core.tracking import redact_uri

T = texts("class_view")
NOTE_COLUMN = "name_note"


def note_text(note: core.NameNote) -> str:
    if note.blank:
        return T("name.blank")
    if note.lookalike and note.letters:
        return T("name.lookalike", letters="; ".join(note.letters))
    if note.lookalike:
        return T("name.lookalike_plain")
    return ""


def with_notes(frame: pd.DataFrame, notes: dict[str, core.NameNote]) -> pd.DataFrame:
    """`frame` with a column after the student's name that marks blank and lookalike names."""
    if "student" not in frame.columns or all(note == core.NameNote() for note in notes.values()):
        return frame
    noted = frame.copy()
    texts_of = {name: note_text(note) for name, note in notes.items()}
    noted.insert(list(frame.columns).index("student") + 1, NOTE_COLUMN, frame["student"].map(texts_of))
    return noted


def table(frame: pd.DataFrame) -> None:
    """Students' names and codes are only ever shown in tables: plain text, never markdown; a run's
    link into MLflow's UI is a link column, built from the run's ids."""
    if frame.empty:
        st.caption(T("none"))
        return
    config = {column: T(f"col.{column}") for column in frame.columns if T.has(f"col.{column}")}
    if tracking_ui.LINK_COLUMN in frame.columns:
        config[tracking_ui.LINK_COLUMN] = tracking_ui.link_column(T)
    st.dataframe(frame, hide_index=True, width="stretch", column_config=config)


st.title(T("title"))
st.markdown(T("intro"))

typed = st.text_input(T("w.code"), value=classroom.class_code(), max_chars=core.CODE_MAX_CHARS,
                      key="class_view.code")
st.caption(T("code_is_the_key"))
code = core.usable_code(typed)
uri = tracking_ui.usable_tracking_uri(T)
runs = None
if not core.sanitize_code(typed):
    st.info(T("enter_code"), icon="🧑‍🏫")
elif code is None:
    st.info(T("code_too_short", min=core.CODE_MIN_CHARS), icon="🧑‍🏫")
elif uri is not None:
    try:
        record = core.read_class(typed, uri)
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
    notes = core.name_notes(runs["student"])
    st.caption(T("students", students=runs["student"].nunique(), runs=len(runs)))
    st.caption(T("plain_text_note"))

    st.subheader(T("completion.heading"))
    st.markdown(T("completion.body"))
    table(with_notes(core.completion(runs), notes))

    st.subheader(T("efficiency.heading"))
    st.markdown(T("efficiency.body"))
    table(with_notes(core.best_efficiency(runs), notes))
    hardware_note(T)

    st.subheader(T("leaderboard.heading"))
    st.markdown(T("leaderboard.body"))
    groups = core.settings_groups(runs)
    if groups:
        chosen = st.selectbox(T("w.settings"), groups, key="class_view.settings")
        table(with_notes(core.leaderboard(runs, chosen), notes))
    else:
        st.caption(T("none"))

    st.subheader(T("runs.heading"))
    ui = tracking_ui.mlflow_ui(T, uri)
    shown = tracking_ui.with_run_links(with_notes(runs, notes), ui, after="kind").drop(columns=["experiment_id"])
    table(shown)
    st.download_button(T("download"), core.to_csv(shown), file_name="class.csv", mime="text/csv",
                       key="class_view.download")

show_code(T, core.read_class, core.completion, core.best_efficiency, core.leaderboard, core.name_notes)
