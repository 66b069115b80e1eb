"""Plan a run: every parallel axis at once, for a model on a cluster (`concepts.planner`). The learner sets the model
(a published preset, the lab's transformer, or one typed in as TOML: `ui.plan_inputs`), the hardware (a preset, its
figures and source shown, or a cluster typed in), D, the sequence length, the global batch in tokens, the precision
and the planner's two assumptions; picks a layout and predicts one of its figures before the planner shows it; then
reads the plans that fit, ranked (a table, memory and step time in parts, the verdict in sentences chosen by the
figures of what ran), the published runs predicted beside what their papers reported, and — on this server's devices —
the top plans of the lab's transformer compiled, the planner's memory and bytes per mesh axis beside the compiler's
(`planner.check`). Nothing here is timed: every figure above the last section is a formula's."""

import dataclasses
import shlex

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts, classroom, heavy_jobs, plan_inputs, plan_validation, predicting
from labs.ui.background import done, wait_for
from labs.ui.blocks import dataframe, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import link_names, url_bool, url_choice, url_float, url_int
from labs.ui.plan_inputs import plain
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
from labs.ui.visitor import guard, literal
from pmap_core.concepts.planner import HARDWARE, MODELS, REMAT, check, search
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import DEFAULT_ASSUMPTIONS, NODE, Prediction
from pmap_core.practice import scoring
from pmap_core.train import config as train_config
from pmap_core.train.mesh import AXES

T = texts("plan")
LAST = "plan.last"            # session state: the Reveal of the last prediction checked
CHECKED = "plan.checked"      # session state: the Checked of the last Check click
MODEL_WAS = "plan.model_was"  # session state: the model of the last run (another model starts its inputs again)
LAYOUT_WAS = "plan.layout_was"  # session state: the picked layout of the last run (another starts its choices again)
MAX_SEQ_LEN = 2**22          # the planner's limit (search.check_inputs)
RUN_SETTINGS = ("devices", "seq_len", "tokens", "precision", "layers", "d_model", "heads", "vocab")
PICK_SETTINGS = ("zero", "remat", "microbatches", "virtual")
TOP = 10                     # plans in the table
CHARTED = 5                  # plans in the charts
CHECK_COUNT = 3              # plans compiled by the Check button
TOLERANCE = 0.1              # a prediction within 10% of the planner's figure is right
GB = pv.GB


@dataclasses.dataclass(frozen=True)
class Reveal:
    """A prediction checked: what it was for, the guess, and the planner's figure of the picked layout."""

    settings: tuple
    quantity: str
    guess: float
    answer: float
    right: bool
    prediction: Prediction
    recorded: predicting.Recorded


@dataclasses.dataclass(frozen=True)
class Checked:
    devices: int
    plans: tuple


def forget_when_changed(memo: str, value: object, names: tuple[str, ...]) -> None:
    """A setting others start from has changed since the last run: those others start again from their defaults
    (a link's lock or hide still decides the ones it names)."""
    before = st.session_state.get(memo)
    st.session_state[memo] = value
    if before is None or before == value:
        return
    kept = link_names("lock") | link_names("hide")
    for name in names:
        if name not in kept:
            st.session_state.pop(f"{T.page}.{name}", None)
            st.query_params.pop(name, None)


# --- labels -------------------------------------------------------------------------------------------------


def level_label(level: str) -> str:
    return T("level.node") if level == NODE else T("level.cluster")


def part_label(name: str, prediction: Prediction) -> str:
    """A step-time part (`search.step_parts`): compute, the bubble, or an axis's exposed communication with its
    level and link."""
    if name == search.COMPUTE:
        return T("part.compute")
    if name == search.BUBBLE:
        return T("part.bubble")
    comm = prediction.comm_on(name)
    return T("part.axis", axis=name, level=level_label(comm.level), link=comm.link)


def memory_label(part: str) -> str:
    """A part of a device's memory (`predict.Memory`'s fields, as `view.memory_parts` lists them)."""
    return T(f"mem.{part}") if T.has(f"mem.{part}") else part


def axes_of(layout) -> str:
    return pv.layout_key(layout).replace(",", " × ")


# --- 1. the run ---------------------------------------------------------------------------------------------


def show_model(model, lab: bool) -> None:
    if lab:
        st.caption(T("model.lab", params=model.params, layers=model.layers, d_model=model.d_model,
                     heads=model.heads, vocab=model.vocab, positions=model.positions))
        return
    if model.key == plan_inputs.OWN:
        st.caption(T("own.name", name=plain(model, model.name)))
    st.caption(T("model.preset", layers=model.layers, d_model=model.d_model, d_ff=model.d_ff, heads=model.heads,
                 kv_heads=model.kv_heads, vocab=model.vocab, params=model.params / 1e9,
                 active=model.active_params / 1e9, source=plain(model, model.source)))
    if model.experts:
        st.caption(T("model.experts", experts=model.experts, top_k=model.top_k, active=model.active_params / 1e9))


def show_hardware(hardware) -> None:
    if hardware.key == plan_inputs.OWN:
        st.caption(T("own.name", name=plain(hardware, hardware.name)))
    st.caption(T("hardware.figures", peak=hardware.peak_flops / 1e12, memory=hardware.memory_bytes / GB,
                 hbm=hardware.hbm_bytes_s / 1e12, node=hardware.node, intra_name=plain(hardware, hardware.intra_name),
                 intra=hardware.intra_bytes_s / GB, inter_name=plain(hardware, hardware.inter_name),
                 inter=hardware.inter_bytes_s / GB, source=plain(hardware, hardware.source)))
    with st.expander(T("hardware.all")):
        dataframe(T, pd.DataFrame([{
            "hardware": h.name, "peak_tflops": h.peak_flops / 1e12, "memory_gb": h.memory_bytes / GB,
            "hbm_tbs": h.hbm_bytes_s / 1e12, "node": h.node, "intra_link": h.intra_name,
            "intra_gbs": h.intra_bytes_s / GB, "inter_link": h.inter_name, "inter_gbs": h.inter_bytes_s / GB,
            "datasheet": h.source} for h in HARDWARE.values()]))


# --- 2. predict first ---------------------------------------------------------------------------------------


def best_by_layout(result: search.PlanResult) -> dict[str, search.Plan]:
    return {pv.layout_key(p.layout): p for p in (*result.plans, *result.unfit)}


def pick_widgets(result: search.PlanResult, work) -> pv.Pick:
    """The layout the learner picks, and its ZeRO stage, remat policy, M and v: each starts from the planner's best
    variant of that layout."""
    keys = pv.layout_keys(result.model, result.devices, work)
    best = best_by_layout(result)
    first = (result.plans or result.unfit)[0]
    layout_col, remat_col = st.columns([3, 2])
    with layout_col:
        key = url_choice(T, "layout", keys, pv.layout_key(first.layout))
    forget_when_changed(LAYOUT_WAS, key, PICK_SETTINGS)
    start = pv.pick_of(best[key].layout) if key in best else pv.Pick(key)
    with remat_col:
        remat = url_choice(T, "remat", list(REMAT), start.remat, radio=True)
    # A row of their own: in a narrower column Streamlit hides a number input's - and + buttons.
    zero_col, microbatches_col, virtual_col = st.columns(3)
    with zero_col:
        zero = url_int(T, "zero", start.zero, 0, 3, slider=False)
    with microbatches_col:
        microbatches = url_int(T, "microbatches", start.microbatches, 1, pv.MAX_TOKENS, slider=False)
    with virtual_col:
        virtual = url_int(T, "virtual", start.virtual, 1, max(2, result.model.layers), slider=False)
    return pv.Pick(key, zero, remat, microbatches, virtual)


def check_guess(settings: tuple, model, hardware, devices: int, work, assumptions, pick: pv.Pick, quantity: str,
                guess: float) -> None:
    prediction = pv.picked(model, hardware, devices, work, assumptions, pick)
    answer = pv.figure(prediction, quantity)
    right = scoring.is_correct(scoring.NUMBER, guess, answer, TOLERANCE)
    # With a class code, the guess is recorded before the page shows the answer.
    recorded = predicting.record_attempt(T.page, quantity, guess, answer, right, {quantity: right})
    st.session_state[LAST] = Reveal(settings, quantity, float(guess), answer, right, prediction, recorded)


def show_reveal(reveal: Reveal, result: search.PlanResult) -> None:
    unit = T(f"unit.{reveal.quantity}")
    st.markdown(T("outcome", guess=f"{reveal.guess:.4g}", answer=f"{reveal.answer:.4g}", unit=unit))
    if reveal.right:
        st.success(T("outcome.right", tolerance=TOLERANCE), icon="🎯")
    else:
        st.info(T("outcome.wrong", tolerance=TOLERANCE), icon="🔎")
    predicting.saw_answer(T.page, reveal.quantity)  # from now on this browser's guesses say so
    done = reveal.recorded
    predicting.show_record(done.recorded, done.error, done.no_code, done.after_answer)
    p = reveal.prediction
    st.markdown(T("picked.figures", layout=p.layout.label(), memory=p.memory.total / GB,
                  budget=p.memory_budget / GB, step=p.step_s, mfu=p.mfu, bubble=p.bubble,
                  comm=sum(c.bytes for c in p.comm) / GB))
    st.caption(T("picked.fits") if p.fits else T("picked.unfit"))
    st.caption(T("picked.memory_parts", parts="; ".join(f"{memory_label(part)} {held / GB:,.3g} GB"
                                                          for part, held in pv.memory_parts(p))))
    ranks = {pv.layout_key(plan.layout): i + 1 for i, plan in enumerate(result.plans)}
    key = pv.layout_key(p.layout)
    if key in ranks:
        best = result.plans[ranks[key] - 1].prediction
        st.caption(T("picked.rank", rank=ranks[key], count=len(result.plans), best=best.layout.label(),
                     step=best.step_s))
    else:
        st.caption(T("picked.no_rank"))


# --- 3. the ranking -----------------------------------------------------------------------------------------


def ranking_frame(plans) -> pd.DataFrame:
    return pd.DataFrame([{"rank": i + 1, "layout": axes_of(p.layout), "zero": p.layout.zero, "remat": p.layout.remat,
                          "microbatches": p.layout.microbatches, "virtual": p.layout.virtual,
                          "memory_gb": p.prediction.memory.total / GB, "step_s": p.prediction.step_s,
                          "mfu_pct": 100 * p.prediction.mfu} for i, p in enumerate(plans)])


def memory_chart(plans, budget: float, hardware_name: str) -> alt.LayerChart:
    frame = pd.DataFrame([{"plan": f"#{i + 1}", "layout": p.layout.label(), "part": memory_label(part),
                           "gb": held / GB, "order": k}
                          for i, p in enumerate(plans) for k, (part, held) in enumerate(pv.memory_parts(p.prediction))])
    bars = charts.bar(frame, "plan", "gb", x_title=T("axis.plan"), y_title=T("axis.memory_gb"), color="part",
                      color_title=T("axis.part"), order="order", title=T("chart.memory"))
    limit = pd.DataFrame({"gb": [budget / GB], "what": [T("rule.memory", name=hardware_name)]})
    rule = alt.Chart(limit).mark_rule(color="crimson", strokeDash=[6, 4], size=2).encode(
        y=alt.Y("gb:Q"), tooltip=charts.tooltips(limit))
    return alt.layer(bars, rule)


def step_chart(plans, overlap: float) -> alt.Chart:
    rows = []
    for i, plan in enumerate(plans):
        p = plan.prediction
        for k, (name, seconds) in enumerate(pv.parts(p, overlap).items()):
            rows.append({"plan": f"#{i + 1}", "layout": p.layout.label(), "part": part_label(name, p),
                         "seconds": seconds, "order": k})
    return charts.bar(pd.DataFrame(rows), "plan", "seconds", x_title=T("axis.plan"), y_title=T("axis.seconds"),
                      color="part", color_title=T("axis.part"), order="order", title=T("chart.step"))


def verdict_lines(reading: pv.Reading, result: search.PlanResult) -> list[str]:
    """The verdict as sentences, each chosen by the case the figures fall in (`view.read_verdict`)."""
    first = reading.first
    lines = [T("verdict.first", layout=first.layout.label(), step=first.step_s, mfu=first.mfu,
               memory=first.memory.total / GB, budget=first.memory_budget / GB)]
    if reading.standing == pv.SINGLE:
        lines.append(T("verdict.single", d=result.devices))
    elif reading.standing == pv.ONLY:
        lines.append(T("verdict.only", d=result.devices, unfit=len(result.unfit)))
    elif reading.standing == pv.TIE:
        lines.append(T("verdict.tie", runner=reading.runner.layout.label()))
    else:
        runner = reading.runner
        gap = dict(runner=runner.layout.label(), gap=runner.step_s - first.step_s, part=reading.separating_s)
        if reading.by == pv.BY_COMPUTE:
            lines.append(T("verdict.by_compute", remat=runner.layout.remat, first_remat=first.layout.remat, **gap))
        elif reading.by == pv.BY_BUBBLE:
            lines.append(T("verdict.by_bubble", bubble=runner.bubble, first_bubble=first.bubble, **gap))
        else:
            c = reading.axis_comm
            lines.append(T("verdict.by_axis", axis=c.axis, size=c.size, level=level_label(c.level),
                           link=plain(result.hardware, c.link), **gap))
    if reading.bound == pv.BOUND_MEMORY:
        lines.append(T("bound.memory", faster=reading.faster.label(), saved=reading.bound_s,
                       need=reading.faster_bytes / GB, budget=first.memory_budget / GB))
    elif reading.bound == pv.BOUND_NOTHING:
        lines.append(T("bound.nothing", compute=first.compute_s))
    elif reading.bound == pv.BOUND_BUBBLE:
        layout = first.layout
        lines.append(T("bound.bubble", seconds=reading.bound_s, step=first.step_s, bubble=first.bubble,
                       p=layout.stage, v=layout.virtual, m=layout.microbatches))
    else:
        c = reading.bound_comm
        lines.append(T("bound.axis", axis=c.axis, size=c.size, level=level_label(c.level),
                       link=plain(result.hardware, c.link), seconds=reading.bound_s, step=first.step_s,
                       sent=c.bytes / GB))
    return lines


def show_ranking(result: search.PlanResult, overlap: float) -> None:
    if not result.plans:
        least = result.unfit[0].prediction
        st.warning(T("none_fit", d=result.devices, least=least.memory.total / GB, layout=least.layout.label(),
                     budget=least.memory_budget / GB), icon="🧱")
        dataframe(T, ranking_frame(result.unfit[:TOP]))
        return
    shown = result.plans[:TOP]
    dataframe(T, ranking_frame(shown))
    st.caption(T("ranked.count", shown=len(shown), fitting=len(result.plans), unfit=len(result.unfit)))
    charted = result.plans[:CHARTED]
    left, right = st.columns(2)
    left.altair_chart(memory_chart(charted, result.hardware.memory_bytes, result.hardware.name), width="stretch")
    right.altair_chart(step_chart(charted, overlap), width="stretch")
    st.subheader(T("verdict.heading"))
    for line in verdict_lines(pv.read_verdict(result), result):
        st.markdown(line)


# --- 4. the published runs ----------------------------------------------------------------------------------


def published_frame(rows: tuple[pv.PublishedRow, ...]) -> pd.DataFrame:
    frame = []
    for row in rows:
        run, best, as_run = row.run, row.best.prediction, row.as_run.prediction
        frame.append({
            "run": run.key, "model": row.model.name, "hardware": row.hardware.name, "devices": run.devices,
            "paper_layout": f"TP{run.model_axis} CP{run.seq_axis} PP{run.stage_axis} DP{run.data_axis}",
            "seq_len": run.seq_len, "reported_pct": 100 * run.utilisation,
            "reported_kind": T("counts.hfu") if run.counts_recompute else T("counts.mfu"),
            "best_variant": best.layout.label(), "best_memory_gb": best.memory.total / GB,
            "best_mfu_pct": 100 * best.mfu, "best_hfu_pct": 100 * best.hfu if run.counts_recompute else None,
            "as_run_variant": as_run.layout.label(), "as_run_memory_gb": as_run.memory.total / GB,
            "as_run_mfu_pct": 100 * as_run.mfu, "as_run_hfu_pct": 100 * as_run.hfu if run.counts_recompute else None,
            "source": run.source})
    return pd.DataFrame(frame)


# --- 5. checked here ----------------------------------------------------------------------------------------


def run_check(devices: int) -> None:
    with heavy_jobs.heavy_job(T), st.spinner(T("checking", d=devices, count=CHECK_COUNT)):
        plans = check.check_top(devices, CHECK_COUNT)
    st.session_state[CHECKED] = Checked(devices, tuple(plans))


def axis_order(axis: str) -> int:
    return AXES.index(axis) if axis in AXES else len(AXES)


def checked_frames(kept: Checked) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each checked plan's memory per device, and each mesh axis's bytes per step: the planner's beside the
    compiler's (None where the compiler reports none)."""
    memory = pd.DataFrame([{"rank": i + 1, "layout": c.layout.label(), "predicted_bytes": c.prediction.memory.total,
                            "compiled_peak_bytes": c.compiled_peak_bytes, "memory_ratio": c.memory_ratio}
                           for i, c in enumerate(kept.plans)])
    sent = pd.DataFrame([{"rank": i + 1, "axis": axis, "predicted_sent": c.predicted_bytes.get(axis, 0.0),
                          "hlo_sent": c.hlo_bytes.get(axis, 0.0), "axis_ratio": c.axis_ratios.get(axis)}
                         for i, c in enumerate(kept.plans)
                         for axis in sorted({*c.predicted_bytes, *c.hlo_bytes}, key=axis_order)])
    return memory, sent


def side_by_side(rows: list[tuple[str, float | None, float | None]], x_title: str, y_title: str,
                 title: str) -> alt.Chart:
    """Bars of the planner's figure beside the compiler's, for each plan (or plan and axis)."""
    names = {"predicted": T("series.predicted"), "compiler": T("series.compiler")}
    frame = pd.DataFrame([{"what": what, "which": names[which], "bytes": value}
                          for what, predicted, compiler in rows
                          for which, value in (("predicted", predicted), ("compiler", compiler))
                          if value is not None])
    return charts.bar(frame, "what", "bytes", x_title=x_title, y_title=y_title, color="which",
                      color_title=T("axis.which"), stack=False, title=title).encode(xOffset="which:N")


def show_checked(kept: Checked) -> None:
    memory, sent = checked_frames(kept)
    left, right = st.columns(2)
    left.altair_chart(side_by_side([(f"#{r.rank}", r.predicted_bytes, r.compiled_peak_bytes)
                                    for r in memory.itertuples()], T("axis.plan"), T("axis.bytes"),
                                   T("chart.check_memory")), width="stretch")
    if sent.empty:
        right.caption(T("check.no_comm"))
    else:
        right.altair_chart(side_by_side([(f"#{r.rank} {r.axis}", r.predicted_sent, r.hlo_sent)
                                         for r in sent.itertuples()], T("axis.plan_axis"), T("axis.bytes_sent"),
                                        T("chart.check_comm")), width="stretch")
    dataframe(T, memory)
    if memory["compiled_peak_bytes"].isna().any():
        st.caption(T("check.no_peak"))
    if not sent.empty:
        dataframe(T, sent)
    for i, c in enumerate(kept.plans):
        st.markdown(T("check.plan", rank=i + 1, layout=c.layout.label()))
        for code in c.reasons:
            st.markdown("- " + (T(f"reason.{code}") if T.has(f"reason.{code}") else literal(code)))
        if not c.reasons:
            st.caption(T("check.no_reasons"))
        st.code(shlex.join(check.train_command(c.layout, kept.devices)), language="bash")


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
forget_when_changed(MODEL_WAS, model_key, RUN_SETTINGS)
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
    show_hardware(hardware)
    if lab:
        model = check.lab_model(pv.lab_dims(sizes["d_model"], sizes["heads"], seq_len, sizes["vocab"]), sizes["layers"])
    else:
        model = MODELS[model_key] if model_text is None else plan_inputs.model(T, model_text)
    show_model(model, lab)
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
    pick = pick_widgets(result, work)
    quantity = url_choice(T, "quantity", pv.QUANTITIES, "memory", radio=True)
    guess = st.number_input(T(f"w.guess.{quantity}"), value=None, format="%g", key=f"plan.guess.{quantity}")
    settings = (model, hardware, devices, work, assumptions, pick, quantity)
    if guess is None:
        st.caption(T("predict.first"))
    clicked = st.button(T("button.reveal"), key="plan.reveal", disabled=guess is None, type="primary")
    with guard(T):
        if clicked:
            check_guess(settings, model, hardware, devices, work, assumptions, pick, quantity, guess)
    last = st.session_state.get(LAST)
    revealed = last is not None and last.settings == settings
    if revealed:
        predicting.saw_lab("plan", revealed=True)  # a worksheet step of these settings has its figure shown
        with guard(T):
            show_reveal(last, result)
    elif last is not None:
        st.info(T("predict.stale"), icon="🔁")
withheld = predict_first and not revealed

st.header(T("ranked.heading"))
st.markdown(T("ranked.body"))
if withheld and result is not None:
    st.info(T("predict.withheld"), icon="🙈")
elif result is not None:
    with guard(T):
        show_ranking(result, overlap)

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
        dataframe(T, published_frame(rows))
        plan_validation.show(T, assumptions, result, (model_key, hardware_key, devices, seq_len, tokens))

st.header(T("check.heading"))
st.markdown(T("check.body"))
if devices > available:
    st.info(T("check.too_many", d=devices, available=available), icon="🖥️")
check_clicked = st.button(T("button.check"), key="plan.check", disabled=devices > available,
                          help=T("button.check.help"))
with guard(T):
    if check_clicked:
        run_check(devices)
kept = st.session_state.get(CHECKED)
if kept is not None and kept.devices == devices:
    with guard(T):
        show_checked(kept)
elif kept is not None:
    st.info(T("check.stale"), icon="🔁")

show_code(T, search.plan, search.step_parts, pv.read_verdict, pv.picked)
