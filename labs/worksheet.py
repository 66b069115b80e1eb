"""Worksheets: steps across the labs, each opened with its settings, predicted, then checked by running code."""

import inspect
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from labs.registry import LABS
from labs.ui import classroom, predicting, teacher
from labs.ui.blocks import dataframe
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import language, texts
from labs.ui.links import url_choice
from labs.ui.visitor import guard, literal
from pmap_core import LabInputError
from pmap_core.practice import scoring, worksheets
from pmap_core.tracking import class_controls, predictions, tracking_uri

T = texts("worksheet")
R = texts("classroom")
# sheet id -> step id -> {"prediction", "answer", "correct", "attempt", "time_ms", "recorded", "record_error"}
RESULTS_KEY = "worksheet.results"
LAST_SWEEP = "training.last_sweep"  # the training lab keeps the session's latest sweep here
LAB_PATHS = {lab.script: lab.url_path for lab in LABS}


@st.cache_resource(show_spinner=False)
def cached_sheets(devices: int) -> tuple[dict[str, worksheets.Sheet], tuple[worksheets.WorksheetError, ...]]:
    """The sheets that load, each step bound to this runtime's D devices, and the files that do not load."""
    loaded = worksheets.load_sheets()
    return {sheet.id: sheet.at(devices) for sheet in loaded.sheets}, loaded.broken


@st.cache_data(show_spinner=False, max_entries=256)
def cached_answer(sheet_id: str, step_id: str, devices: int) -> float | str:
    with st.spinner(T("running")):
        return worksheets.compute_answer(cached_sheets(devices)[0][sheet_id].step(step_id))


def student_sweep() -> worksheets.MeasuredSweep | None:
    tracked = st.session_state.get(LAST_SWEEP)
    return worksheets.measured_sweep(tracked.sweep) if tracked is not None else None


def class_controls_now(sheet_ids: list[str]) -> class_controls.Controls:
    """The teacher's controls of the student's class (none without a class code); a reset since this
    session last looked clears what the session kept from before it."""
    code = classroom.class_code()
    if not code:
        return class_controls.NO_CONTROLS
    controls, _ = teacher.controls(code, tracking_uri())
    reset_at = predicting.new_reset(code, controls, sheet_ids)
    if reset_at:
        for kept in st.session_state.setdefault(RESULTS_KEY, {}).values():
            for old in [step for step, result in kept.items() if result.get("time_ms", 0) < reset_at]:
                del kept[old]
    return controls


def held_sheet(sheet_ids: list[str], controls: class_controls.Controls) -> str | None:
    """The sheet a teacher holds the class at, wherever the student is: the one shown when it is held,
    else the first held one."""
    held = [sheet_id for sheet_id in sheet_ids if controls.held_step(sheet_id)]
    shown = st.session_state.get(f"{T.page}.sheet", st.query_params.get("sheet"))
    return shown if shown in held else held[0] if held else None


def prediction_widget(sheet_id: str, step: worksheets.Step, lang: str):
    """The step's predict box, empty until the student gives a value (None till then); a choice step's
    options in an order of this browser's own."""
    key = f"worksheet.{sheet_id}.{step.id}.guess"
    ready = {"on_change": predicting.open_run, "args": (sheet_id,)}  # the check that follows is one write
    if step.kind == worksheets.CHOICE:
        labels = {c["id"]: step.say(c, lang) for c in step.choices}
        order = scoring.choice_order(step.choice_ids(), f"{classroom.browser()}/{sheet_id}/{step.id}")
        return st.radio(T("your_prediction"), order, format_func=lambda c: labels.get(c, c), index=None,
                        key=key, horizontal=True, **ready)
    if step.kind == worksheets.SHAPE:
        return st.text_input(T("your_prediction"), key=key, max_chars=worksheets.MAX_PREDICTION_CHARS,
                             placeholder="(4, 2)", help=T("shape_help"), **ready).strip() or None
    return st.number_input(T("your_prediction"), value=None, step=1.0, format="%g", key=key, **ready)


def show_record(result: dict) -> None:
    """Whether the check reached the class: recorded, failed (with what the store said), or past the
    attempts a session records at one step."""
    if result.get("record_error"):
        st.warning(T("record_failed"), icon="📦")
        st.code(result["record_error"], language=None, wrap_lines=True)
    elif result.get("recorded"):
        st.caption(T("recorded"))
    elif result.get("attempt", 0) > predictions.MAX_ATTEMPTS:
        st.caption(T("attempts_not_recorded", limit=predictions.MAX_ATTEMPTS))
    elif result.get("no_code"):
        st.caption(R("not_recorded"))
    if result.get("after_answer") and (result.get("recorded") or result.get("record_error")):
        st.caption(R("after_answer"))


def show_sweep(sweep: worksheets.MeasuredSweep) -> None:
    st.caption(T("sweep_used", model=sweep.model, scaling=sweep.scaling))
    frame = pd.DataFrame([(p.devices, p.efficiency, p.throughput) for p in sweep.points],
                         columns=["devices", "efficiency", "throughput"])
    dataframe(T, frame)
    hardware_note(T)


st.title(T("title"))
st.markdown(T("intro"))
classroom.identity_form(T.page)

lang = language()
available = runtime_info().device_count
sheets, broken = cached_sheets(available)
controls = class_controls_now(list(sheets))
withheld = teacher.withheld(controls, tracking_uri())  # any class's withheld sheet, whatever code is typed
for error in broken:  # the sheet's file and what is wrong with it, as plain text; the other sheets still work
    st.error(T("error.bad_worksheet", where=literal(error.params["where"]), problem=literal(error.params["problem"])),
             icon="⚠️")
if not sheets:
    st.info(T("no_sheets"), icon="📭")
    st.stop()
titles = {i: s.title[lang] for i, s in sheets.items()}
holding = held_sheet(list(sheets), controls)
sheet_id = url_choice(T, "sheet", list(sheets), next(iter(sheets)), labels=titles, held=holding)
if holding is not None:
    st.info(R("held_sheet", sheet=titles[holding]), icon="🧑‍🏫")
sheet = sheets[sheet_id]
st.markdown(sheet.intro[lang])

results = st.session_state.setdefault(RESULTS_KEY, {}).setdefault(sheet_id, {})
released = sheet_id not in withheld
marks = {step.id: "·" if step.id not in results else "📝" if not released else "✅" if results[step.id]["correct"]
         else "❌" for step in sheet.steps}
numbers = {step.id: i + 1 for i, step in enumerate(sheet.steps)}
progress, reset = st.columns([3, 1])
progress.progress(len(results) / len(sheet.steps), text=T(
    "progress", answered=len(results), total=len(sheet.steps), right=sum(r["correct"] for r in results.values()))
    if released else T("progress_withheld", answered=len(results), total=len(sheet.steps)))
if reset.button(T("reset"), key="worksheet.reset"):
    results.clear()
    st.rerun()

held = controls.held_step(sheet_id)
step_id = url_choice(T, "step", [s.id for s in sheet.steps], sheet.steps[0].id,
                     labels={i: T("step_option", number=numbers[i], mark=marks[i]) for i in numbers}, held=held)
if held in numbers:
    st.info(T("held", number=numbers[held]), icon="🧑‍🏫")
step = sheet.step(step_id)
st.subheader(f"{numbers[step_id]}. {step.say(step.question, lang)}")
used = step.values.get("devices")
if used is not None and used < available:
    st.caption(T("uses_devices", used=used, available=available))
lab_texts = texts(step.lab) if step.lab in LAB_PATHS else None
# The lab shows the figure the step asks for: no link while the answers are withheld (a step checked against
# the student's own sweep keeps it: its answer is what the student measures there). Opening the lab with the
# step's settings, by the link or by hand, counts as seeing the answer (predicting.saw_lab).
if lab_texts is not None and (released or step.needs_sweep):
    st.link_button(T("open_lab", lab=lab_texts("title")),
                   f"{LAB_PATHS[step.lab]}?{urlencode(step.query(lang))}", icon="🔗")
    if not step.needs_sweep:
        predict_first = step.query(lang).get(predicting.PREDICT_FIRST) == "true"
        st.caption(R("lab_predict_first" if predict_first else "lab_shows_answer"))
elif lab_texts is not None:
    st.caption(R("lab_withheld"))
with st.expander(T("hints")):
    for hint in step.hints:
        st.markdown(f"- {step.say(hint, lang)}")

prediction = prediction_widget(sheet_id, step, lang)
if step.kind == worksheets.NUMBER and step.tolerance:
    st.caption(T("tolerance", tolerance=f"{step.tolerance:.2%}"))
sweep = student_sweep() if step.needs_sweep else None
if step.needs_sweep and sweep is None:
    st.info(T("needs_sweep"), icon="📈")

if prediction is None:
    st.caption(R("give_prediction"))
checked = st.button(T("check"), key="worksheet.check", type="primary", disabled=step.needs_sweep and sweep is None)
if checked and prediction is None:  # nothing is checked, shown or recorded that the student did not give
    st.warning(R("give_prediction"), icon="✍️")
elif checked:
    with guard(T):
        answer = (worksheets.compute_answer(step, sweep) if step.needs_sweep
                  else cached_answer(sheet_id, step_id, available))
        try:
            correct = worksheets.is_correct(step, prediction, answer)
        except LabInputError as error:  # the student's text: shown as its own characters, never markup
            st.error(T(f"error.{error.code}", value=literal(prediction), name=literal(prediction)), icon="⚠️")
        else:
            shown = worksheets.parse_shape(prediction) if step.kind == worksheets.SHAPE else prediction
            so_far = {**{s: r["correct"] for s, r in results.items()}, step_id: correct}
            # Recorded for the class before the answer shows: the rerun below is what shows it.
            done = predicting.record_attempt(sheet_id, step_id, shown, answer, correct, so_far)
            results[step_id] = {"prediction": shown, "answer": answer, "correct": correct, "attempt": done.attempt,
                                "time_ms": done.time_ms, "recorded": done.recorded, "record_error": done.error,
                                "no_code": done.no_code, "after_answer": done.after_answer}
            st.rerun()  # the step list shows the new mark

if step_id in results and not released:
    st.info(T("withheld", prediction=literal(worksheets.shown(results[step_id]["prediction"]))), icon="🙈")
    show_record(results[step_id])
elif step_id in results:
    predicting.saw_answer(sheet_id, step_id)  # from now on this browser's records of the step say so
    result = results[step_id]
    words = {"prediction": literal(worksheets.shown(result["prediction"])),
             "answer": literal(worksheets.shown(result["answer"]))}
    if result["correct"]:
        st.success(T("right", **words), icon="🎉")
    else:
        st.warning(T("wrong", **words), icon="🤔")
    st.markdown(f"**{T('explanation')}:** " + step.say(step.explain, lang, answer=worksheets.shown(result["answer"])))
    show_record(result)
    if step.needs_sweep and sweep is not None:
        show_sweep(sweep)
    with st.expander(T("the_code"), expanded=True):
        call = ", ".join(f"{k}={v!r}" for k, v in step.args.items())
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in step.result)
        st.code(f"{step.function}({call}){path}", language="python")
        st.code(inspect.getsource(worksheets.function_of(step.function)), language="python")

# The page follows the teacher's controls, and any class's withheld sheets, while it stays open.
teacher.follow(classroom.class_code(), tracking_uri(), (controls, withheld))
