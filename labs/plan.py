"""Plan a run: every parallel axis at once, for a model on a cluster (`concepts.planner`). The learner sets the model
(a published preset, the lab's transformer, or one typed in as TOML: `ui.plan_inputs`), the hardware (a preset, its
figures and source shown, or a cluster typed in), D, the sequence length, the global batch in tokens, the precision
and the planner's two assumptions; picks a layout and predicts one of its figures before the planner shows it; then
reads the plans that fit, ranked (a table, memory and step time in parts, the verdict in sentences chosen by the
figures of what ran), the published runs predicted beside what their papers reported, and — on this server's devices —
the top plans of the lab's transformer compiled, the planner's memory and bytes per mesh axis beside the compiler's
(`planner.check`). Nothing here is timed: every figure above the last section is a formula's. The sections draw
through `ui.plan_inputs`, `ui.plan_predict`, `ui.plan_ranking`, `ui.plan_validation` and `ui.plan_checked`."""

import dataclasses

import streamlit as st

from labs.ui import classroom, plan_checked, plan_inputs, plan_predict, plan_ranking, plan_validation, predicting
from labs.ui.background import done, wait_for
from labs.ui.blocks import dataframe, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_bool, url_choice, url_float, url_int
from labs.ui.plan_work import (
    DEFAULT_HARDWARE,
    DEFAULT_MODEL,
    PRESET_DEVICES,
    PRESET_PRECISION,
    PRESET_SEQ_LEN,
    PRESET_TOKENS,
    published,
    published_key,
    ranked,
    ranked_key,
)
from labs.ui.transformer import transformer_settings
from labs.ui.visitor import guard
from pmap_core.concepts.planner import HARDWARE, MODELS, check, search
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import DEFAULT_ASSUMPTIONS
from pmap_core.train import config as train_config

T = texts("plan")
MODEL_WAS = "plan.model_was"  # session state: the model of the last run (another model starts its inputs again)
MAX_SEQ_LEN = 2**22          # the planner's limit (search.check_inputs)
RUN_SETTINGS = ("devices", "seq_len", "tokens", "precision", "layers", "d_model", "heads", "vocab")


# --- the page -----------------------------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.caption(T("sources"))

st.header(T("run.heading"))
OWN = plan_inputs.OWN
model_names = {pv.LAB_MODEL: T("lab_model"), OWN: T("own_model"), **{key: m.name for key, m in MODELS.items()}}
cols = st.columns(2)
with cols[0]:
    model_key = url_choice(T, "model", [*MODELS, pv.LAB_MODEL, OWN], DEFAULT_MODEL, labels=model_names)
    model_text = plan_inputs.text(T, "model", DEFAULT_MODEL) if model_key == OWN else None
with cols[1]:
    hardware_key = url_choice(T, "hardware", [*HARDWARE, OWN], DEFAULT_HARDWARE,
                              labels={OWN: T("own_hardware"), **{key: h.name for key, h in HARDWARE.items()}})
    hardware_text = plan_inputs.text(T, "hardware", DEFAULT_HARDWARE) if hardware_key == OWN else None
plan_inputs.forget_when_changed(T, MODEL_WAS, model_key, RUN_SETTINGS)
lab = model_key == pv.LAB_MODEL
available = runtime_info().device_count
sizes = transformer_settings(T) if lab else None
cols = st.columns(4)
with cols[0]:
    devices = url_int(T, "devices", available if lab else PRESET_DEVICES, 1, search.MAX_PLAN_DEVICES, slider=False)
with cols[1]:
    seq_len = sizes["seq_len"] if lab else url_int(T, "seq_len", PRESET_SEQ_LEN, 1, MAX_SEQ_LEN, slider=False)
    if lab:
        st.caption(T("seq_len.lab", seq_len=seq_len))
with cols[2]:
    start_tokens = train_config.default_batch(devices) * seq_len if lab else PRESET_TOKENS
    tokens = url_int(T, "tokens", start_tokens, 1, pv.MAX_TOKENS, slider=False)
with cols[3]:
    precision = url_choice(T, "precision", pv.PRECISIONS, "float32" if lab else PRESET_PRECISION)
cols = st.columns(2)
with cols[0]:
    achievable = plan_validation.compute_choice(T)
with cols[1]:
    overlap = url_float(T, "overlap", DEFAULT_ASSUMPTIONS.overlap, 0.0, 1.0, step=0.05)
st.caption(T("assumptions"))

hardware = model = work = result = None
assumptions = dataclasses.replace(DEFAULT_ASSUMPTIONS, achievable=achievable, overlap=overlap)
with guard(T):
    hardware = HARDWARE[hardware_key] if hardware_text is None else plan_inputs.hardware(T, hardware_text)
    plan_inputs.show_hardware(T, hardware)
    if lab:
        model = check.lab_model(pv.lab_dims(sizes["d_model"], sizes["heads"], seq_len, sizes["vocab"]), sizes["layers"])
    else:
        model = MODELS[model_key] if model_text is None else plan_inputs.model(T, model_text)
    plan_inputs.show_model(T, model, lab)
    work = pv.workload(tokens, seq_len, precision)
    result = ranked(model, hardware, devices, work, assumptions)  # None while it is planned in the background
if result is not None:
    st.caption(T("workload", sequences=work.sequences, seq_len=work.seq_len, tokens=work.tokens, d=devices,
                 layouts=len(result.plans) + len(result.unfit), fitting=len(result.plans)))
elif work is not None and not done(key := ranked_key(model, hardware, devices, work, assumptions)):
    wait_for((key,), lambda seconds: st.info(T("planning", d=devices, seconds=seconds), icon="⏳"))

st.header(T("predict.heading"))
st.markdown(T("predict.body"))
predict_first = url_bool(T, "predict", False)
revealed = False
classroom.identity_form(T.page)  # whether the guess is recorded for a class, said plainly
st.caption(T("predict.no_controls"))
if result is not None:
    pick = plan_predict.pick_widgets(T, result, work)
    quantity = url_choice(T, "quantity", pv.QUANTITIES, "memory", radio=True)
    guess = st.number_input(T(f"w.guess.{quantity}"), value=None, format="%g", key=f"plan.guess.{quantity}")
    settings = (model, hardware, devices, work, assumptions, pick, quantity)
    if guess is None:
        st.caption(T("predict.first"))
    clicked = st.button(T("button.reveal"), key="plan.reveal", disabled=guess is None, type="primary")
    with guard(T):
        if clicked:
            plan_predict.check_guess(T, settings, model, hardware, devices, work, assumptions, pick, quantity, guess)
    last = st.session_state.get(plan_predict.LAST)
    revealed = last is not None and last.settings == settings
    if revealed:
        predicting.saw_lab("plan", revealed=True)  # a worksheet step of these settings has its figure shown
        with guard(T):
            plan_predict.show_reveal(T, last, result)
    elif last is not None:
        st.info(T("predict.stale"), icon="🔁")
withheld = predict_first and not revealed

st.header(T("ranked.heading"))
st.markdown(T("ranked.body"))
if withheld and result is not None:
    st.info(T("predict.withheld"), icon="🙈")
elif result is not None:
    with guard(T):
        plan_ranking.show_ranking(T, result, overlap)

st.header(T("published.heading"))
st.markdown(T("published.body"))
rows = None
if not withheld:
    with guard(T):
        rows = published(assumptions)  # None while they are predicted in the background
if withheld:
    st.info(T("predict.withheld"), icon="🙈")
elif rows is None and not done(published_key(assumptions)):
    wait_for((published_key(assumptions),), lambda seconds: st.info(T("planning_published", seconds=seconds),
                                                                     icon="⏳"))
elif rows is not None:
    with guard(T):
        dataframe(T, plan_ranking.published_frame(T, rows))
        plan_validation.show(T, assumptions, result, (model_key, hardware_key, devices, seq_len, tokens))

st.header(T("check.heading"))
st.markdown(T("check.body"))
if devices > available:
    st.info(T("check.too_many", d=devices, available=available), icon="🖥️")
check_clicked = st.button(T("button.check"), key="plan.check", disabled=devices > available,
                          help=T("button.check.help"))
with guard(T):
    if check_clicked:
        plan_checked.run_check(T, devices)
kept = st.session_state.get(plan_checked.CHECKED)
if kept is not None and kept.devices == devices:
    with guard(T):
        plan_checked.show_checked(T, kept)
elif kept is not None:
    st.info(T("check.stale"), icon="🔁")

show_code(T, search.plan, search.step_parts, pv.read_verdict, pv.picked)
