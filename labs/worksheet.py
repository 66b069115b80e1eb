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
from labs.ui.visitor import guard, literal
from pmap_core import LabInputError
from pmap_core.practice import worksheets
from pmap_core.tracking import class_controls, predictions, tracking_uri

T = texts("worksheet")
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


def url_choice(name: str, options: list[str], labels: dict[str, str], held: str | None = None) -> str:
    """A choice kept in the link whose labels come from the sheets, not from the text tables; `held`:
    the one option the teacher holds the class at (the choice is then fixed to it)."""
    key = f"{T.page}.{name}"
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = options[0]  # a step of the sheet shown before
    if held in options:
        st.session_state[key] = held
    if key not in st.session_state:
        raw = st.query_params.get(name)
        if raw is not None and raw not in options:
            st.warning(T("url_value_ignored", name=name, value=literal(raw)))
        st.session_state[key] = raw if raw in options else options[0]
    value = st.selectbox(T(f"w.{name}"), options, format_func=lambda option: labels.get(option, option), key=key,
                         disabled=held in options)
    st.query_params[name] = value
    return value


def student_sweep() -> worksheets.MeasuredSweep | None:
    tracked = st.session_state.get(LAST_SWEEP)
    return worksheets.measured_sweep(tracked.sweep) if tracked is not None else None


def class_controls_now() -> class_controls.Controls:
    """The teacher's controls of the student's class (none without a class code); a reset since this
    session last looked clears what the session kept from before it."""
    code = classroom.class_code()
    if not code:
        return class_controls.NO_CONTROLS
    controls, _ = teacher.controls(code, tracking_uri())
    reset_at = predicting.new_reset(code, controls, "worksheets")
    if reset_at:
        for kept in st.session_state.setdefault(RESULTS_KEY, {}).values():
            for old in [step for step, result in kept.items() if result.get("time_ms", 0) < reset_at]:
                del kept[old]
    return controls


def prediction_widget(sheet_id: str, step: worksheets.Step, lang: str):
    key = f"worksheet.{sheet_id}.{step.id}.guess"
    ready = {"on_change": predicting.open_run, "args": (sheet_id,)}  # the check that follows is one write
    if step.kind == worksheets.CHOICE:
        labels = {c["id"]: step.say(c, lang) for c in step.choices}
        return st.radio(T("your_prediction"), step.choice_ids(), format_func=lambda c: labels.get(c, c),
                        key=key, horizontal=True, **ready)
    if step.kind == worksheets.SHAPE:
        return st.text_input(T("your_prediction"), key=key, max_chars=worksheets.MAX_PREDICTION_CHARS,
                             placeholder="(4, 2)", help=T("shape_help"), **ready)
    return st.number_input(T("your_prediction"), value=0.0, step=1.0, format="%g", key=key, **ready)


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


def show_sweep(sweep: worksheets.MeasuredSweep) -> None:
    st.caption(T("sweep_used", model=sweep.model, scaling=sweep.scaling))
    frame = pd.DataFrame([(p.devices, p.efficiency, p.throughput) for p in sweep.points],
                         columns=["devices", "efficiency", "throughput"])
    dataframe(T, frame)
    hardware_note(T)


st.title(T("title"))
st.markdown(T("intro"))
classroom.identity_form(T.page)
controls = class_controls_now()

lang = language()
available = runtime_info().device_count
sheets, broken = cached_sheets(available)
for error in broken:  # the sheet's file and what is wrong with it, as plain text; the other sheets still work
    st.error(T("error.bad_worksheet", where=literal(error.params["where"]), problem=literal(error.params["problem"])),
             icon="⚠️")
if not sheets:
    st.info(T("no_sheets"), icon="📭")
    st.stop()
sheet_id = url_choice("sheet", list(sheets), {i: s.title[lang] for i, s in sheets.items()})
sheet = sheets[sheet_id]
st.markdown(sheet.intro[lang])

results = st.session_state.setdefault(RESULTS_KEY, {}).setdefault(sheet_id, {})
released = controls.released(sheet_id)
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
step_id = url_choice("step", [s.id for s in sheet.steps],
                     {i: T("step_option", number=numbers[i], mark=marks[i]) for i in numbers}, held=held)
if held in numbers:
    st.info(T("held", number=numbers[held]), icon="🧑‍🏫")
step = sheet.step(step_id)
st.subheader(f"{numbers[step_id]}. {step.say(step.question, lang)}")
used = step.values.get("devices")
if used is not None and used < available:
    st.caption(T("uses_devices", used=used, available=available))
lab_texts = texts(step.lab) if step.lab in LAB_PATHS else None
if lab_texts is not None:
    st.link_button(T("open_lab", lab=lab_texts("title")),
                   f"{LAB_PATHS[step.lab]}?{urlencode(step.query(lang))}", icon="🔗")
with st.expander(T("hints")):
    for hint in step.hints:
        st.markdown(f"- {step.say(hint, lang)}")

prediction = prediction_widget(sheet_id, step, lang)
if step.kind == worksheets.NUMBER and step.tolerance:
    st.caption(T("tolerance", tolerance=f"{step.tolerance:.2%}"))
sweep = student_sweep() if step.needs_sweep else None
if step.needs_sweep and sweep is None:
    st.info(T("needs_sweep"), icon="📈")

if st.button(T("check"), key="worksheet.check", type="primary", disabled=step.needs_sweep and sweep is None):
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
                                "time_ms": done.time_ms, "recorded": done.recorded, "record_error": done.error}
            st.rerun()  # the step list shows the new mark

if step_id in results and not released:
    st.info(T("withheld", prediction=literal(worksheets.shown(results[step_id]["prediction"]))), icon="🙈")
    show_record(results[step_id])
elif step_id in results:
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

if classroom.class_code():  # the page follows the teacher's controls while it stays open
    teacher.follow(classroom.class_code(), tracking_uri(), controls)
