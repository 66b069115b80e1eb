"""Class: what a class's students ran and answered, read from the tracking store by class code."""

import pandas as pd
import streamlit as st

from labs.ui import class_charts, classroom, predicting, teacher
from labs.ui import tracking as tracking_ui
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note
from labs.ui.i18n import language, texts
from pmap_core.practice import worksheets
from pmap_core.practice.quiz import registry as quiz
from pmap_core.tracking import class_controls, predictions, redact_uri
from pmap_core.tracking import classroom as core

T = texts("class_view")
NOTE_COLUMN = "name_note"
NO_HOLD = ""
RESET_DONE = "class_view.reset_done"


@st.cache_resource(show_spinner=False)
def loaded_sheets() -> dict[str, worksheets.Sheet]:
    return {sheet.id: sheet for sheet in worksheets.load_sheets().sheets}


def sheet_steps(lang: str) -> dict[str, tuple[str, list[str]]]:
    """Every sheet a class predicts on (the worksheets, then the interview questions): its title and its step ids."""
    found = {i: (sheet.title[lang], [step.id for step in sheet.steps]) for i, sheet in loaded_sheets().items()}
    found[predicting.INTERVIEW_SHEET] = (texts("interview")("title"), quiz.question_ids())
    return found


def show_predictions(recorded: pd.DataFrame, controls: class_controls.Controls, is_teacher: bool) -> pd.DataFrame:
    """Per step, the class's first predictions against the computed answer; per student, a timeline. A
    sheet whose answers the teacher withholds shows only in the teacher view. Returns the rows shown."""
    st.subheader(T("predictions.heading"))
    st.markdown(T("predictions.body"))
    hidden = set() if is_teacher else set(controls.withheld)
    shown = recorded[~recorded["sheet"].isin(hidden)] if len(recorded) else recorded
    if hidden and len(shown) < len(recorded):
        st.caption(T("predictions.withheld_hidden"))
    if shown.empty:
        st.caption(T("none"))
        return shown
    steps = predictions.summaries(shown)
    summary = pd.DataFrame([{"sheet": s.sheet, "step": s.step, "first_predictions": s.count,
                             "within_tolerance": s.within, "common_wrong": s.common_wrong or "",
                             "common_wrong_count": s.common_wrong_count, "answer": " | ".join(s.answers)}
                            for s in steps])
    st.dataframe(summary, hide_index=True, width="stretch", column_config={
        **{c: T(f"col.{c}") for c in summary.columns if T.has(f"col.{c}")},
        "within_tolerance": st.column_config.ProgressColumn(T("col.within_tolerance"), format="percent",
                                                            min_value=0.0, max_value=1.0)})
    labels = {f"{s.sheet}/{s.step}": s for s in steps}
    chosen = labels[st.selectbox(T("w.prediction_step"), list(labels), key="class_view.prediction_step")]
    first = predictions.first_predictions(shown)
    first = first[(first["sheet"] == chosen.sheet) & (first["step"] == chosen.step)]
    st.caption(T("predictions.step_caption", count=chosen.count, within=f"{chosen.within:.0%}",
                 wrong=chosen.common_wrong_count))
    st.altair_chart(class_charts.first_predictions_plot(
        first, x_title=T("axis.prediction"), y_title=T("axis.students"), outcome_title=T("legend.outcome"),
        right=T("legend.right"), wrong=T("legend.wrong"), answer_title=T("legend.answer")), width="stretch")
    st.subheader(T("timeline.heading"))
    st.markdown(T("timeline.body"))
    st.altair_chart(class_charts.timeline(
        shown, time_title=T("axis.time"), student_title=T("col.student"), outcome_title=T("legend.outcome"),
        right=T("legend.right"), wrong=T("legend.wrong"), attempt_title=T("legend.attempt"),
        first=T("legend.first"), later=T("legend.later"), step_title=T("axis.step"),
        prediction_title=T("axis.prediction")), width="stretch")
    return shown


def show_teacher_controls(code: str, controls: class_controls.Controls, uri: str) -> None:
    """Per sheet: release or withhold its answers, hold the class at one step; and reset the class."""
    st.header(T("teacher.heading"))
    st.markdown(T("teacher.body"))
    sheets = sheet_steps(language())
    sheet_id = st.selectbox(T("w.teacher_sheet"), list(sheets), format_func=lambda i: sheets[i][0],
                            key="class_view.teacher_sheet")
    steps = sheets[sheet_id][1]
    numbers = {NO_HOLD: T("teacher.no_hold"), **{step: f"{i + 1}. {step}" for i, step in enumerate(steps)}}
    held = controls.held_step(sheet_id)
    st.caption(T("teacher.state_withheld") if not controls.released(sheet_id) else T("teacher.state_released"))
    with st.form("class_view.teacher_form"):
        withhold = st.toggle(T("w.withhold"), value=not controls.released(sheet_id),
                             key=f"class_view.withhold.{sheet_id}")
        hold_at = st.selectbox(T("w.hold"), list(numbers), format_func=lambda i: numbers[i],
                               index=list(numbers).index(held) if held in numbers else 0,
                               key=f"class_view.hold.{sheet_id}")
        saved = st.form_submit_button(T("teacher.save"), type="primary")
    if saved:
        try:
            if withhold != (not controls.released(sheet_id)):
                class_controls.set_withheld(code, sheet_id, withhold, uri)
            if (hold_at or None) != held:
                class_controls.hold(code, sheet_id, hold_at or None, uri)
        except Exception as error:  # noqa: BLE001 - a store that fails: say so, never a traceback
            st.error(T("teacher.store_failed"), icon="📦")
            st.code(redact_uri(f"{type(error).__name__}: {error}")[:300], language=None, wrap_lines=True)
        else:
            teacher.forget_controls()
            st.rerun()
    st.subheader(T("teacher.reset_heading"))
    st.markdown(T("teacher.reset_body"))
    if st.session_state.pop(RESET_DONE, False):
        st.session_state["class_view.reset_sure"] = False  # one confirmation, one reset
    sure = st.checkbox(T("w.reset_sure"), key="class_view.reset_sure")
    if st.button(T("teacher.reset"), key="class_view.reset", disabled=not sure):
        try:
            class_controls.reset(code, uri)
        except Exception as error:  # noqa: BLE001 - a store that fails: say so, never a traceback
            st.error(T("teacher.store_failed"), icon="📦")
            st.code(redact_uri(f"{type(error).__name__}: {error}")[:300], language=None, wrap_lines=True)
        else:
            teacher.forget_controls()
            st.session_state[RESET_DONE] = True
            st.rerun()
    if controls.reset_ms:
        st.caption(T("teacher.last_reset", when=pd.Timestamp(controls.reset_ms, unit="ms", tz="UTC").strftime(
            "%Y-%m-%d %H:%M:%S UTC")))


def note_text(note: core.NameNote) -> str:
    if note.blank:
        return T("name.blank")
    shared = T("name.browsers", browsers=note.browsers) if note.browsers > 1 else ""
    if note.lookalike and note.letters:
        return "; ".join(filter(None, (T("name.lookalike", letters="; ".join(note.letters)), shared)))
    if note.lookalike:
        return "; ".join(filter(None, (T("name.lookalike_plain"), shared)))
    return shared


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
is_teacher = teacher.key_form(T.page)
runs, recorded, controls = None, None, class_controls.NO_CONTROLS
if not core.sanitize_code(typed):
    st.info(T("enter_code"), icon="🧑‍🏫")
elif code is None:
    st.info(T("code_too_short", min=core.CODE_MIN_CHARS), icon="🧑‍🏫")
elif uri is not None:
    try:
        controls = class_controls.read_controls(typed, uri)
        if controls.reset_ms:
            st.caption(T("reset_note", when=pd.Timestamp(controls.reset_ms, unit="ms", tz="UTC").strftime(
                "%Y-%m-%d %H:%M:%S UTC")))
        record = core.read_class(typed, uri, since_ms=controls.reset_ms)
        runs, recorded = record.runs, record.predictions
        for kind in record.capped:  # the newest `limit` runs of that kind are all that is read
            capped = "capped.training" if kind == "training" else "capped.exercise"
            st.warning(T(capped, limit=record.limit), icon="✂️")
    except Exception as error:  # noqa: BLE001 - an unreachable or broken store: say so, never a traceback
        st.error(T("store_failed"), icon="📦")
        st.code(redact_uri(f"{type(error).__name__}: {error}")[:300], language=None, wrap_lines=True)

if is_teacher and code is not None and uri is not None:
    show_teacher_controls(typed, controls, uri)

if runs is not None and runs.empty and (recorded is None or recorded.empty):
    st.info(T("nothing_yet"), icon="🕳️")
elif runs is not None:
    notes = core.name_notes(pd.concat([runs["student"], recorded["student"]]),
                            browsers=predictions.browsers_per_name(recorded))
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

    predicted = show_predictions(recorded, controls, is_teacher)

    st.subheader(T("runs.heading"))
    ui = tracking_ui.mlflow_ui(T, uri)
    shown = tracking_ui.with_run_links(with_notes(runs, notes), ui, after="kind").drop(columns=["experiment_id"])
    table(shown)
    st.subheader(T("predictions.rows_heading"))
    predicted = with_notes(predicted.drop(columns=["experiment_id"]), notes)
    table(predicted)
    st.download_button(T("download"), core.to_csv(predictions.with_predictions(shown, predicted)),
                       file_name="class.csv", mime="text/csv",
                       key="class_view.download")

show_code(T, core.read_class, core.completion, core.best_efficiency, core.leaderboard, core.name_notes,
          predictions.rows, predictions.summaries)
