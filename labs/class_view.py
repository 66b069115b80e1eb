"""Class: what a class's students ran and answered, read from the tracking store by class code."""

import hashlib

import pandas as pd
import streamlit as st

from labs.ui import class_charts, classroom, predicting, teacher
from labs.ui import tracking as tracking_ui
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import language, texts
from labs.ui.visitor import literal
from pmap_core.practice import worksheets
from pmap_core.practice.quiz import registry as quiz
from pmap_core.tracking import class_controls, predictions, redact_uri
from pmap_core.tracking import classroom as core

T = texts("class_view")
NOTE_COLUMN = "name_note"
NO_HOLD = ""
RESET_DONE = "class_view.reset_done"
SAVE_OUTCOME, SAVED, STALE = "class_view.save_outcome", "saved", "stale"
CODE_PARAM = "code"  # the class code is kept in the page's link (the teacher key never is)
READ_TTL_S = 3  # every open Class page of a class on this server reads the store at most this often …
REFRESH_S = 4  # … and looks this often for what arrived: a new prediction shows within about ten seconds


@st.cache_resource(show_spinner=False)
def loaded_sheets() -> dict[str, worksheets.Sheet]:
    return {sheet.id: sheet for sheet in worksheets.load_sheets().sheets}


def sheet_steps(lang: str) -> dict[str, tuple[str, list[str]]]:
    """Every sheet a class predicts on (the worksheets, then the interview questions): its title and its step ids."""
    found = {i: (sheet.title[lang], [step.id for step in sheet.steps]) for i, sheet in loaded_sheets().items()}
    found[predicting.INTERVIEW_SHEET] = (texts("interview")("title"), quiz.question_ids())
    return found


STEP_NAME_CHARS = 60  # the start of a step's question names it in a selector


def step_names(lang: str) -> dict[tuple[str, str], str]:
    """What the page calls each step, by (sheet id, step id): its number on its sheet and the start of its
    question as students read it on this server; an interview question by its title."""
    available = runtime_info().device_count
    names = {}
    for sheet_id, sheet in loaded_sheets().items():
        for number, step in enumerate(sheet.steps, 1):
            question = step.at(available).say(step.question, lang)
            short = question if len(question) <= STEP_NAME_CHARS else question[:STEP_NAME_CHARS - 1].rstrip() + "…"
            names[sheet_id, step.id] = f"{number}. {short}"
    interview = texts("interview")
    for number, question_id in enumerate(quiz.question_ids(), 1):
        names[predicting.INTERVIEW_SHEET, question_id] = f"{number}. {interview(f'w.question.{question_id}')}"
    return names


def step_label(summary: predictions.StepSummary, titles: dict[str, str], names: dict[tuple[str, str], str]) -> str:
    step = (summary.sheet, summary.step)
    return f"{titles.get(summary.sheet, summary.sheet)} · {names.get(step, summary.step)}"


def show_predictions(shown: pd.DataFrame, withheld_left_out: bool) -> None:
    """Per step, the class's first predictions against the computed answer; per student, a timeline.
    `shown` holds no withheld sheet unless the teacher looks (`core.without_sheets`)."""
    st.subheader(T("predictions.heading"))
    st.markdown(T("predictions.body"))
    if withheld_left_out:
        st.caption(T("predictions.withheld_hidden"))
    if shown.empty:
        st.caption(T("none"))
        return
    steps = predictions.summaries(shown)
    titles, names = {i: title for i, (title, _) in sheet_steps(language()).items()}, step_names(language())
    summary = pd.DataFrame([{"sheet": titles.get(s.sheet, s.sheet), "step": names.get((s.sheet, s.step), s.step),
                             "first_predictions": s.count,
                             "within_tolerance": s.within, "common_wrong": s.common_wrong or "",
                             "common_wrong_count": s.common_wrong_count, "answer": " | ".join(s.answers)}
                            for s in steps])
    st.dataframe(summary, hide_index=True, width="stretch", column_config={
        **{c: T(f"col.{c}") for c in summary.columns if T.has(f"col.{c}")},
        "within_tolerance": st.column_config.ProgressColumn(T("col.within_tolerance"), format="percent",
                                                            min_value=0.0, max_value=1.0)})
    show_bursts(shown, titles, names)
    labels = {f"{s.sheet}/{s.step}": s for s in steps}
    chosen = labels[st.selectbox(T("w.prediction_step"), list(labels), key="class_view.prediction_step",
                                 format_func=lambda key: step_label(labels[key], titles, names))]
    first = predictions.first_predictions(shown)
    first = first[(first["sheet"] == chosen.sheet) & (first["step"] == chosen.step)]
    st.caption(T("predictions.step_caption", count=chosen.count, within=f"{chosen.within:.0%}",
                 wrong=chosen.common_wrong_count))
    scale = predictions.step_scale(first)
    if scale is not None and scale.below + scale.above:
        st.caption(T("predictions.off_scale", count=scale.below + scale.above, low=predictions.shown(scale.low),
                     high=predictions.shown(scale.high)))
    st.altair_chart(class_charts.first_predictions_plot(
        first, x_title=T("axis.prediction"), y_title=T("axis.students"), outcome_title=T("legend.outcome"),
        right=T("legend.right"), wrong=T("legend.wrong"), answer_title=T("legend.answer"),
        place_title=T("legend.place"), on_scale=T("legend.on_scale"), below=T("legend.below"),
        above=T("legend.above")), width="stretch")
    st.subheader(T("timeline.heading"))
    st.markdown(T("timeline.body"))
    st.altair_chart(class_charts.timeline(
        shown, time_title=T("axis.time"), student_title=T("col.student"), outcome_title=T("legend.outcome"),
        right=T("legend.right"), wrong=T("legend.wrong"), attempt_title=T("legend.attempt"),
        first=T("legend.first"), later=T("legend.later"), step_title=T("axis.step"),
        prediction_title=T("axis.prediction")), width="stretch")


def show_bursts(shown: pd.DataFrame, titles: dict[str, str], names: dict[tuple[str, str], str]) -> None:
    """Steps whose first predictions came from several browsers under one name or names drawn alike: the
    names (a table, plain text), how many browsers, and the seconds they spanned."""
    found = predictions.bursts(shown, same_name=core.skeleton)
    if not found:
        return
    st.markdown(f"**{T('bursts.heading')}**")
    st.caption(T("bursts.body"))
    table(pd.DataFrame([{"sheet": titles.get(b.sheet, b.sheet), "step": names.get((b.sheet, b.step), b.step),
                         "names": ", ".join(b.names), "browsers": b.browsers, "seconds": round(b.seconds, 1)}
                        for b in found]))


def save_sheet(code: str, sheet_id: str, read: tuple[bool, str | None], withhold_key: str, hold_key: str,
               uri: str) -> None:
    """The Save button's callback, with the class and the state its form was drawn with (`read`): what
    became of the save is left in the session for the page to say."""
    try:
        saved = class_controls.save(code, sheet_id, read, st.session_state[withhold_key],
                                    st.session_state[hold_key] or None, uri)
    except Exception as error:  # noqa: BLE001 - a store that fails: say so, never a traceback
        st.session_state[SAVE_OUTCOME] = redact_uri(f"{type(error).__name__}: {error}")[:300]
    else:
        st.session_state[SAVE_OUTCOME] = SAVED if saved else STALE
    teacher.forget_controls()


def show_teacher_controls(code: str, controls: class_controls.Controls, uri: str) -> None:
    """Per sheet: release or withhold its answers, hold the class at one step; and reset the class. The
    form of a sheet belongs to the class and the state it was drawn from (its widgets' keys name both):
    another class's form, or one drawn before another teacher's change, saves nothing."""
    st.header(T("teacher.heading"))
    st.markdown(T("teacher.body"))
    outcome = st.session_state.pop(SAVE_OUTCOME, None)
    if outcome == STALE:
        st.warning(T("teacher.stale"), icon="🔁")
    elif outcome not in (None, SAVED):
        st.error(T("teacher.store_failed"), icon="📦")
        st.code(outcome, language=None, wrap_lines=True)
    sheets = sheet_steps(language())
    sheet_id = st.selectbox(T("w.teacher_sheet"), list(sheets), format_func=lambda i: sheets[i][0],
                            key="class_view.teacher_sheet")
    steps = sheets[sheet_id][1]
    names = step_names(language())
    numbers = {NO_HOLD: T("teacher.no_hold"), **{step: names[sheet_id, step] for step in steps}}
    read = controls.of_sheet(sheet_id)
    withheld, held = read
    drawn = hashlib.sha256(repr((core.class_key(code), read)).encode()).hexdigest()[:12]
    withhold_key, hold_key = f"class_view.withhold.{sheet_id}.{drawn}", f"class_view.hold.{sheet_id}.{drawn}"
    st.caption(T("teacher.state_withheld") if withheld else T("teacher.state_released"))
    with st.form(f"class_view.teacher_form.{drawn}"):
        st.toggle(T("w.withhold"), value=withheld, key=withhold_key)
        st.selectbox(T("w.hold"), list(numbers), format_func=lambda i: numbers[i],
                     index=list(numbers).index(held) if held in numbers else 0, key=hold_key)
        st.form_submit_button(T("teacher.save"), type="primary", on_click=save_sheet,
                              args=(code, sheet_id, read, withhold_key, hold_key, uri))
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
    looks = (T("name.lookalike", letters="; ".join(note.letters)) if note.lookalike and note.letters
             else T("name.lookalike_plain") if note.lookalike else "")
    shared = T("name.browsers", browsers=note.browsers) if note.browsers > 1 else ""
    return "; ".join(filter(None, (looks, shared, T("name.at_once") if note.at_once else "")))


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


@st.cache_data(ttl=READ_TTL_S, show_spinner=False, max_entries=64)
def read_class(typed: str, uri: str, since_ms: int) -> core.ClassRuns:
    """The class as the store holds it, read at most once every READ_TTL_S seconds for all of this
    server's open Class pages of the class (each page then leaves out what its viewer may not see)."""
    return core.read_class(typed, uri, since_ms=since_ms)


def fingerprint(record: core.ClassRuns) -> int:
    return hash(tuple(int(pd.util.hash_pandas_object(frame.astype(str), index=False).sum())
                      for frame in (record.runs, record.predictions) if frame is not None))


@st.fragment(run_every=REFRESH_S)
def follow_class(typed: str, uri: str, seen: tuple) -> None:
    """While the page stays open, it looks at the class every REFRESH_S seconds (through the caches of the
    controls, of the sheets any class withholds and of the class) and redraws as a whole when anything
    changed since `seen`, what it was drawn with: new runs and predictions show without a click, and
    nothing is redrawn while nothing arrives."""
    controls, error = teacher.controls(typed, uri)
    try:
        now = (controls, teacher.withheld(controls, uri), fingerprint(read_class(typed, uri, controls.reset_ms)))
        changed = error is None and now != seen
    except Exception:  # noqa: BLE001 - a store that fails now: keep what is shown, look again next time
        changed = False
    if changed:
        st.rerun(scope="app")


def linked_code() -> str | None:
    """The class code the link names (`core.code_from_link`); any other value is refused with a warning
    that shows it as its own characters."""
    raw = st.query_params.get(CODE_PARAM)
    if raw is None:
        return None
    code = core.code_from_link(raw)
    if code is None:
        st.warning(T("url_value_ignored", name=CODE_PARAM, value=literal(raw)))
    return code


st.title(T("title"))
st.markdown(T("intro"))

linked = linked_code()
typed = st.text_input(T("w.code"), value=linked or classroom.class_code(), max_chars=core.CODE_MAX_CHARS,
                      key="class_view.code")
st.caption(T("code_is_the_key"))
code = core.usable_code(typed)
if code is not None:
    st.query_params[CODE_PARAM] = code  # a reload, or the link, opens this class again
else:
    st.query_params.pop(CODE_PARAM, None)
uri = tracking_ui.usable_tracking_uri(T)
is_teacher = teacher.key_form(T.page)
record, controls = None, class_controls.NO_CONTROLS
if not core.sanitize_code(typed):
    st.info(T("enter_code"), icon="🧑‍🏫")
elif code is None:
    st.info(T("code_too_short", min=core.CODE_MIN_CHARS), icon="🧑‍🏫")
elif uri is not None:
    try:
        # The teacher's forms save over what they show: read afresh. Others share the cache; where it
        # could not read the controls, the read below raises what the store says, and nothing is shown.
        unread = not is_teacher and teacher.controls(typed, uri)[1] is not None
        controls = class_controls.read_controls(typed, uri) if is_teacher or unread else teacher.controls(typed, uri)[0]
        if controls.reset_ms:
            st.caption(T("reset_note", when=pd.Timestamp(controls.reset_ms, unit="ms", tz="UTC").strftime(
                "%Y-%m-%d %H:%M:%S UTC")))
        record = read_class(typed, uri, controls.reset_ms)
        follow_class(typed, uri, (controls, teacher.withheld(controls, uri), fingerprint(record)))
        st.caption(T("refreshing", seconds=REFRESH_S))
        for kind in record.capped:  # the newest `limit` runs of that kind are all that is read
            capped = "capped.training" if kind == "training" else "capped.exercise"
            st.warning(T(capped, limit=record.limit), icon="✂️")
        if record.cut_students:
            st.warning(T("capped.students", count=len(record.cut_students), per=core.PER_STUDENT_RUNS), icon="✂️")
    except Exception as error:  # noqa: BLE001 - an unreachable or broken store: say so, never a traceback
        record = None
        st.error(T("store_failed"), icon="📦")
        st.code(redact_uri(f"{type(error).__name__}: {error}")[:300], language=None, wrap_lines=True)

if is_teacher and code is not None and uri is not None:
    show_teacher_controls(typed, controls, uri)

if record is not None:
    # Without the key, nothing of a sheet any class withholds: its results and predictions tell its answers.
    seen = record if is_teacher else core.without_sheets(record, teacher.withheld(controls, uri))
    runs, recorded = seen.runs, seen.predictions
    left_out = len(seen.runs) < len(record.runs) or len(recorded) < len(record.predictions)
    if runs.empty and recorded.empty:
        st.info(T("nothing_yet"), icon="🕳️")
        if left_out:
            st.caption(T("predictions.withheld_hidden"))
if record is not None and not (runs.empty and recorded.empty):
    notes = core.name_notes(pd.concat([runs["student"], recorded["student"]]),
                            browsers=predictions.browsers_per_name(recorded),
                            at_once=predictions.names_at_once(recorded))
    st.caption(T("students", students=runs["student"].nunique(), runs=len(runs)))
    st.caption(T("plain_text_note"))

    st.subheader(T("completion.heading"))
    st.markdown(T("completion.body"))
    if left_out:
        st.caption(T("predictions.withheld_hidden"))
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

    show_predictions(recorded, left_out)

    st.subheader(T("runs.heading"))
    ui = tracking_ui.mlflow_ui(T, uri)
    shown = tracking_ui.with_run_links(with_notes(runs, notes), ui, after="kind").drop(columns=["experiment_id"])
    table(shown)
    st.subheader(T("predictions.rows_heading"))
    predicted = with_notes(recorded.drop(columns=["experiment_id"]), notes)
    table(predicted)
    st.download_button(T("download"), core.to_csv(predictions.with_predictions(shown, predicted)),
                       file_name="class.csv", mime="text/csv",
                       key="class_view.download")

show_code(T, core.read_class, core.completion, core.best_efficiency, core.leaderboard, core.name_notes,
          predictions.rows, predictions.summaries)
