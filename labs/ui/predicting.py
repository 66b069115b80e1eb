"""A student's predictions, recorded for the class before the answer shows: every page with a
predict box (the Worksheet, the Interview questions, the 2-D mesh and pipeline labs' guesses) records each press of its
check button through `record_attempt`, with the session's attempt number at that step, in the same write
as the results; a predict box's `open_run` opens the sheet's run as the student types, so that a class
pressing check at once makes one short write each.

Every page that shows a step's answer says so (`saw_answer`), and so does a lab page drawn with a worksheet
step's settings (`saw_lab`: the lab shows the figure the step asks for): from then on this session's records of
the step, and those of every tab of the same browser on this server, are marked as made after seeing
it, whatever class code or name they are made under, so no first prediction can be faked by looking
first with no code, another code, another name or another tab. (Another browser, or one that clears
its cookies, cannot be linked: the marks go as far as the browser's identity does.)"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Collection, Iterator, Mapping
from typing import Any, NamedTuple

import streamlit as st

from labs.registry import LABS
from labs.ui import classroom, teacher
from labs.ui.hardware import runtime_info
from labs.ui.i18n import Texts, texts
from labs.ui.links import SHARED_SETTINGS
from pmap_core.practice import worksheets
from pmap_core.tracking import class_controls, predictions, redact_uri, tracking_uri
from pmap_core.tracking.classroom import record_exercise
from pmap_core.validation import Budget

INTERVIEW_SHEET = "interview"  # the Interview questions' predictions are recorded as a sheet of this id
RUNS_KEY = "classroom.runs"          # (sheet id, class code, name) -> the run its results go to
ATTEMPTS_KEY = "classroom.attempts"  # (class code, sheet id, step id) -> attempts recorded in this session
RESETS_KEY = "classroom.resets"      # (class code, "interview" or "worksheets") -> the reset applied
PENDING_KEY = "classroom.pending"    # (sheet id, class code, name) -> attempts' tags not yet recorded
SEEN_KEY = "classroom.seen"          # {(sheet id, step id)} whose answer this session has been shown
PREDICT_FIRST = "predict"  # a lab's link setting ("true") that holds its figures back until the learner checks
# One write to the class's store at a time in this process: a class's checks at the same moment queue
# here, each holding one connection for one short write, instead of crowding the store's connection
# pool and its write lock (30 at once exhausted a sqlite store's pool of 15 and waited out its 30 s).
# A write that waits longer than WRITE_WAIT_S (a store that stopped answering keeps each write for its
# timeout) goes ahead without its turn: a dead store costs each student their own timeout, not the class's.
_WRITES = threading.Lock()
WRITE_WAIT_S = 10.0
# Writes to the class's store one session may make: WRITE_BURST at once, then one every WRITE_EVERY_S
# seconds (a student checks far slower). A client scripting checks and renames cannot flood the class's
# runs; an attempt over the budget waits in the session and goes with the next write that fits.
WRITE_BURST, WRITE_EVERY_S = 30, 3.0
BUDGET_KEY = "classroom.write_budget"


def _may_write() -> bool:
    return st.session_state.setdefault(BUDGET_KEY, Budget(WRITE_BURST, WRITE_EVERY_S)).take()


@contextlib.contextmanager
def _turn() -> Iterator[None]:
    """This session's turn to write to a sqlite store (released on every path, a Streamlit Stop included);
    a server store (an `mlflow server`, a database server) takes concurrent writes itself."""
    held = tracking_uri().startswith("sqlite:") and _WRITES.acquire(timeout=WRITE_WAIT_S)
    try:
        yield
    finally:
        if held:
            _WRITES.release()


T = texts("class_view")  # what a page says of a recorded prediction lives with the Class page
R = texts("classroom")


@st.cache_resource(show_spinner=False)
def _answers_seen() -> predictions.AnswersSeen:
    """The browsers this server has shown answers to, shared by all its sessions."""
    return predictions.AnswersSeen()


def saw_answer(sheet_id: str, step_id: str) -> None:
    """The page shows this step's answer now: this browser's later records of the step say so."""
    st.session_state.setdefault(SEEN_KEY, set()).add((sheet_id, step_id))
    _answers_seen().saw(classroom.browser(), sheet_id, step_id)


@st.cache_resource(show_spinner=False)
def _lab_steps(devices: int) -> dict[str, list[tuple[str, str, dict[str, str]]]]:
    """Per lab's url path, the worksheet steps that open it, each with the settings its link gives the lab on
    a runtime of `devices` (lang left out). A step checked against the student's own sweep is left out: its
    answer is what the student measures in the lab, not a figure the lab shows on opening."""
    paths = {lab.script: lab.url_path for lab in LABS}
    found: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    for sheet in worksheets.load_sheets().sheets:
        for step in sheet.at(devices).steps:
            if step.lab in paths and not step.needs_sweep:
                settings = {k: v for k, v in step.query("en").items() if k != "lang"}
                found.setdefault(paths[step.lab], []).append((sheet.id, step.id, settings))
    return found


def saw_lab(url_path: str, revealed: bool = False) -> None:
    """After a lab page ran: each worksheet step whose settings it drew (its link-backed widgets' values, by
    the step's link or set by hand) had its figure shown, so this browser's later records of the step say
    they were made after seeing the answer. A page drawn in its predict-first mode (PREDICT_FIRST: the Plan
    page) shows its figures only once the learner has checked a guess there, and says so (`revealed`);
    whether a step's link asks for that mode does not change the figure."""
    drawn = st.session_state.get(SHARED_SETTINGS, {})
    if drawn.get(PREDICT_FIRST) == "true" and not revealed:
        return
    for sheet_id, step_id, settings in _lab_steps(runtime_info().device_count).get(url_path, ()):
        if {k: v for k, v in settings.items() if k != PREDICT_FIRST}.items() <= drawn.items():
            saw_answer(sheet_id, step_id)


def seen(sheet_id: str, step_id: str) -> bool:
    """Whether this session, or another tab of this browser, was shown the step's answer."""
    return (sheet_id, step_id) in st.session_state.get(SEEN_KEY, ()) or \
        _answers_seen().has_seen(classroom.browser(), sheet_id, step_id)


class Recorded(NamedTuple):
    """What became of one attempt: recorded for the class or not (no code, or past MAX_ATTEMPTS), its
    number, when it was made, what went wrong when the store failed, whether there was no class code,
    and whether it was made after this browser had been shown the answer."""

    recorded: bool
    attempt: int
    time_ms: int
    error: str | None = None
    no_code: bool = False
    after_answer: bool = False


def record_attempt(sheet_id: str, step_id: str, prediction: Any, answer: Any, correct: bool,
                   results: Mapping[str, bool]) -> Recorded:
    """Record one check of a step — the prediction, the computed answer and whether it was right — with
    the sheet's results so far, before the page shows the answer. A store that fails costs the student
    nothing but the record: what went wrong is returned, to be shown."""
    made = predictions.now_ms()
    tags = classroom.tags()
    if not tags:
        return Recorded(False, 0, made, no_code=True)
    code = tags["class_code"]
    new_reset(code, teacher.controls(code, tracking_uri())[0], [sheet_id])  # a reset since the page last looked
    after = seen(sheet_id, step_id)
    counted = st.session_state.setdefault(ATTEMPTS_KEY, {})
    attempt = counted.get((code, sheet_id, step_id), 0) + 1
    counted[(code, sheet_id, step_id)] = attempt
    key = (sheet_id, code, tags["student"])
    # Attempts a failing store did not take wait here and go with the next write: none is lost.
    waiting = st.session_state.setdefault(PENDING_KEY, {}).setdefault(key, {})
    if attempt <= predictions.MAX_ATTEMPTS:
        waiting.update([predictions.prediction_tag(step_id, attempt, prediction, answer, correct, made, after)])
    runs = st.session_state.setdefault(RUNS_KEY, {})
    if not _may_write():
        return Recorded(False, attempt, made, T("prediction.write_limited", seconds=WRITE_EVERY_S))
    try:
        with _turn():
            runs[key] = record_exercise(sheet_id, results, tags, run_id=runs.get(key), attempts=dict(waiting))
    except Exception as error:  # noqa: BLE001 - the result stays in the session whatever the store does
        return Recorded(False, attempt, made, redact_uri(f"{type(error).__name__}: {error}")[:300],
                        after_answer=after)
    waiting.clear()
    return Recorded(attempt <= predictions.MAX_ATTEMPTS, attempt, made, after_answer=after)


def open_run(sheet_id: str) -> None:
    """A predict box's on_change: the student is about to check, so the run the sheet's results go to is
    opened now (created and ended, nothing in it yet), and the check itself is then one write. A store
    that fails here costs nothing: the check opens the run instead, and says what went wrong."""
    tags = classroom.tags()
    runs = st.session_state.setdefault(RUNS_KEY, {})
    key = (sheet_id, tags.get("class_code"), tags.get("student"))
    if not tags or key in runs or not _may_write():
        return
    try:
        with _turn():
            runs[key] = record_exercise(sheet_id, {}, tags)
    except Exception:  # noqa: BLE001 - the check will try again, and show the store's message
        pass


def new_reset(code: str, controls: class_controls.Controls, sheets: Collection[str]) -> int:
    """When the teacher has reset the class since this session last looked at any of `sheets` (sheet ids:
    "interview" for the Interview questions, a lab's own for its guess), the reset's time, and the
    session's attempts and runs of those sheets for the class are forgotten (what follows starts again at
    attempt 1, in a new run, which the class's Exercises count); otherwise 0. The page drops the results
    it keeps from before that time."""
    applied = st.session_state.setdefault(RESETS_KEY, {})
    fresh = {sheet for sheet in sheets if controls.reset_ms > applied.get((code, sheet), 0)}
    if not code or not fresh:
        return 0
    for sheet in fresh:
        applied[(code, sheet)] = controls.reset_ms
    counted = st.session_state.setdefault(ATTEMPTS_KEY, {})
    for key in [k for k in counted if k[0] == code and k[1] in fresh]:
        del counted[key]
    for kept in (st.session_state.setdefault(RUNS_KEY, {}), st.session_state.setdefault(PENDING_KEY, {})):
        for key in [k for k in kept if k[1] == code and k[0] in fresh]:
            del kept[key]
    return controls.reset_ms


def show_record(recorded: bool, error: str | None, no_code: bool = False, after_answer: bool = False) -> None:
    """Whether a check's prediction reached the class: a caption when it did (and when it is marked as
    made after seeing the answer); when the store failed, what it said (the result itself stays in the
    session); with no class code, that nothing was recorded."""
    if error:
        st.warning(T("prediction.record_failed"), icon="📦")
        st.code(error, language=None, wrap_lines=True)
    elif recorded:
        st.caption(T("prediction.recorded"))
    elif no_code:
        st.caption(R("not_recorded"))
    if after_answer and (recorded or error):
        st.caption(R("after_answer"))


def show_outcome(T: Texts, step_id: str, guess: str, answer: str, labels: Mapping[str, str],
                 recorded: Recorded | None) -> None:
    """A predict-then-measure page's reveal: the learner's prediction beside what ran (the page's `outcome`,
    `outcome.right` and `outcome.wrong` texts), marked as seen from now on, then what became of its record."""
    st.markdown(T("outcome", guess=labels[guess], answer=labels[answer]))
    if guess == answer:
        st.success(T("outcome.right"), icon="🎯")
    else:
        st.info(T("outcome.wrong", answer=labels[answer]), icon="🔎")
    saw_answer(T.page, step_id)  # from now on this browser's guesses say so
    if recorded is not None:
        show_record(recorded.recorded, recorded.error, recorded.no_code, recorded.after_answer)
