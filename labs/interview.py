"""Interview questions on pmap: predict the result, then run the program and compare."""

import inspect

import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice
from labs.ui.visitor import guard
from pmap_core.practice.quiz import registry as quiz

T = texts("interview")
RESULTS_KEY = "interview.results"  # question id -> {"prediction", "answer", "correct"} for this session


@st.cache_data(show_spinner=False)
def cached_answer(question_id: str):
    with heavy_jobs.heavy_job(T), st.spinner(T("running")):  # a cache hit never queues
        return quiz.answer(question_id)


def shown(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


st.title(T("title"))
st.markdown(T("intro"))

results = st.session_state.setdefault(RESULTS_KEY, {})
score, progress, reset = st.columns([1, 2, 1])
score.metric(T("score"), T("score_value", right=sum(r["correct"] for r in results.values()), answered=len(results)))
progress.progress(len(results) / len(quiz.QUESTIONS),
                  text=T("progress", answered=len(results), total=len(quiz.QUESTIONS)))
if reset.button(T("reset"), key="interview.reset"):
    results.clear()
    st.rerun()

ids = quiz.question_ids()
chosen = url_choice(T, "question", ids, ids[0])
question = quiz.get_question(chosen)
n = runtime_info().device_count
st.subheader(T(f"w.question.{chosen}"))
st.markdown(T(f"q.{chosen}.text", n=n, tolerance=f"{question.tolerance:.0%}"))

if question.kind == quiz.CHOICE:
    prediction = st.radio(T("your_prediction"), quiz.options(chosen), key=f"interview.{chosen}.guess",
                          horizontal=True)
else:
    prediction = st.number_input(T("your_prediction"), value=0.0, step=1.0, format="%g",
                                 key=f"interview.{chosen}.guess")
if question.heavy:
    st.caption(T("heavy_note"))

if st.button(T("check"), key="interview.check", type="primary"):
    with guard(T):
        answer = cached_answer(chosen)
        results[chosen] = {"prediction": prediction, "answer": answer,
                           "correct": quiz.is_correct(chosen, prediction, answer)}
        st.rerun()

if chosen in results:
    result = results[chosen]
    words = {"prediction": shown(result["prediction"]), "answer": shown(result["answer"])}
    if result["correct"]:
        st.success(T("right", **words), icon="🎉")
    else:
        st.warning(T("wrong", **words), icon="🤔")
    st.markdown(T(f"q.{chosen}.explain", n=n, answer=shown(result["answer"])))
    with st.expander(T("the_code"), expanded=True):
        st.code(inspect.getsource(question.program), language="python")
    if chosen == "measured_speedup":
        hardware_note(T)

show_code(T, quiz.answer, quiz.is_correct)
