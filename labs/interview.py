"""Interview questions on pmap: predict the result, then run the program and compare."""

import inspect

import streamlit as st

from labs.ui import classroom, heavy_jobs, predicting, teacher
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice
from labs.ui.visitor import guard, literal
from pmap_core.practice import scoring
from pmap_core.practice.quiz import registry as quiz
from pmap_core.tracking import class_controls, tracking_uri

T = texts("interview")
R = texts("classroom")
RESULTS_KEY = "interview.results"  # question id -> {"prediction", "answer", "correct", "time_ms", ...} for this session
SHEET = predicting.INTERVIEW_SHEET  # how a class records these questions: a sheet, one step per question


@st.cache_data(show_spinner=False)
def cached_answer(question_id: str):
    with heavy_jobs.heavy_job(T), st.spinner(T("running")):  # a cache hit never queues
        return quiz.answer(question_id)


def shown(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


st.title(T("title"))
st.markdown(T("intro"))
classroom.identity_form(T.page)

results = st.session_state.setdefault(RESULTS_KEY, {})
controls = class_controls.NO_CONTROLS
if classroom.class_code():  # the class's teacher may withhold the answers, hold a question, reset the class
    controls, _ = teacher.controls(classroom.class_code(), tracking_uri())
    reset_at = predicting.new_reset(classroom.class_code(), controls, [SHEET])
    for old in [q for q, r in results.items() if reset_at and r.get("time_ms", 0) < reset_at]:
        del results[old]
withheld = teacher.withheld(controls, tracking_uri())  # any class's, whatever code is typed
score, progress, reset = st.columns([1, 2, 1])
right = sum(r["correct"] for r in results.values()) if SHEET not in withheld else "—"  # withheld: not yet
score.metric(T("score"), T("score_value", right=right, answered=len(results)))
progress.progress(len(results) / len(quiz.QUESTIONS),
                  text=T("progress", answered=len(results), total=len(quiz.QUESTIONS)))
if reset.button(T("reset"), key="interview.reset"):
    results.clear()
    st.rerun()

ids = quiz.question_ids()
held = controls.held_step(SHEET)
chosen = url_choice(T, "question", ids, ids[0], held=held)
if held in ids:
    st.info(T("held"), icon="🧑‍🏫")
question = quiz.get_question(chosen)
n = runtime_info().device_count
st.subheader(T(f"w.question.{chosen}"))
tolerance = f"{question.tolerance:.0%}"
st.markdown(T(f"q.{chosen}.text", n=n, tolerance=tolerance))

ready = {"on_change": predicting.open_run, "args": (SHEET,)}  # the check that follows is one write
if question.kind == quiz.CHOICE:  # empty until the student chooses, in an order of this browser's own
    order = scoring.choice_order(quiz.options(chosen), f"{classroom.browser()}/{SHEET}/{chosen}")
    prediction = st.radio(T("your_prediction"), order, index=None, key=f"interview.{chosen}.guess",
                          horizontal=True, **ready)
else:
    prediction = st.number_input(T("your_prediction"), value=None, step=1.0, format="%g",
                                 key=f"interview.{chosen}.guess", **ready)
if question.heavy:
    st.caption(T("heavy_note"))
if prediction is None:
    st.caption(R("give_prediction"))

checked = st.button(T("check"), key="interview.check", type="primary")
if checked and prediction is None:  # nothing is checked, shown or recorded that the student did not give
    st.warning(R("give_prediction"), icon="✍️")
elif checked:
    with guard(T):
        answer = cached_answer(chosen)
        correct = quiz.is_correct(chosen, prediction, answer)
        so_far = {**{q: r["correct"] for q, r in results.items()}, chosen: correct}
        # With a class code, recorded for the class before the answer shows: the rerun below shows it.
        done = predicting.record_attempt(SHEET, chosen, prediction, answer, correct, so_far)
        results[chosen] = {"prediction": prediction, "answer": answer, "correct": correct, "time_ms": done.time_ms,
                           "recorded": done.recorded, "record_error": done.error, "no_code": done.no_code,
                           "after_answer": done.after_answer}
        st.rerun()

if chosen in results:
    kept = results[chosen]
    predicting.show_record(kept.get("recorded", False), kept.get("record_error"), kept.get("no_code", False),
                           kept.get("after_answer", False))
if chosen in results and SHEET in withheld:
    st.info(T("withheld", prediction=literal(shown(results[chosen]["prediction"]))), icon="🙈")
elif chosen in results:
    predicting.saw_answer(SHEET, chosen)  # from now on this browser's records of the question say so
    result = results[chosen]
    words = {"prediction": shown(result["prediction"]), "answer": shown(result["answer"])}
    if result["correct"]:
        st.success(T("right", **words), icon="🎉")
    else:
        st.warning(T("wrong", **words), icon="🤔")
    st.markdown(T(f"q.{chosen}.explain", n=n, answer=shown(result["answer"]), tolerance=tolerance))
    with st.expander(T("the_code"), expanded=True):
        st.code(inspect.getsource(question.program), language="python")
    if chosen == "measured_speedup":
        hardware_note(T)

# The page follows the teacher's controls, and any class's withheld sheets, while it stays open.
teacher.follow(classroom.class_code(), tracking_uri(), (controls, withheld))

show_code(T, quiz.answer, quiz.is_correct)
