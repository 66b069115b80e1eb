"""Pipeline lab: a deeper MLP's layers (or the small transformer's blocks) in P stages over a `stage` axis, GPipe
and 1F1B drawn slot by slot with the bubble counted from the table; where D ≥ 2P, D/P pipelines side by side on a data
axis, trained, their bytes per axis read from the compiled program beside the formula and their loss beside data
parallelism's; then — after a prediction — the peak memory of both compiled schedules and the step time
against M fitted to this program's lockstep model, n_F·t_f + n_B·t_b, where this machine can show it
(`concepts.pipeline`)."""

import dataclasses

import pandas as pd
import streamlit as st

from labs.ui import charts, classroom, heavy_jobs, predicting, trace_view
from labs.ui.blocks import dataframe, show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_int
from labs.ui.transformer import task_caption, transformer_settings
from labs.ui.visitor import guard
from pmap_core.concepts import pipeline
from pmap_core.train import models
from pmap_core.train import pipeline as train_pipeline
from pmap_core.train.config import MAX_HIDDEN, MAX_LAYERS, MAX_MICROBATCHES, default_learning_rate

T = texts("pipeline")
R = texts("classroom")
LAST = "pipeline.last"      # session state: Measured of the last Measure click
GUESS = "pipeline.guess"    # the learner's prediction, before measuring
RECORDED = "pipeline.recorded"  # session state: what became of the guess's record for the class
PREDICT_STEP = "peak_memory"    # the guess as a class records it: sheet "pipeline", this step
DATA_LAST = "pipeline.data_last"  # session state: (D, Settings, DataAxisRun) of the last data × stage run
ANSWERS = ("gpipe", "1f1b", "same")


@dataclasses.dataclass(frozen=True)
class Measured:
    """What one Measure click ran, and the prediction made before it."""

    settings: pipeline.Settings
    memory: tuple[pipeline.MemoryRow, ...]
    fit: pipeline.StepFit | None    # None where this machine cannot show the bubble in time
    cores: int
    guess: str


def answer_labels() -> dict[str, str]:
    return {"gpipe": T("guess.gpipe"), "1f1b": T("guess.1f1b"), "same": T("guess.same")}


def kind_labels() -> dict[str, str]:
    return {"forward": T("kind.forward"), "backward": T("kind.backward"), "idle": T("kind.idle")}


def traffic_labels() -> dict[str, str]:
    return {"data_allreduce": T("traffic.data_allreduce"), "stage_permute": T("traffic.stage_permute"),
            "stage_allreduce": T("traffic.stage_allreduce")}


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


# --- the schedule -------------------------------------------------------------------------------------


def show_schedule(settings: pipeline.Settings) -> None:
    p, m = settings.stages, settings.microbatches
    counted = pipeline.bubble(p, m, settings.schedule)
    st.subheader(T("schedule.heading"))
    cols = st.columns(4)
    cols[0].metric(T("metric.bubble"), f"{counted.counted:.4f}")
    cols[1].metric(T("metric.formula"), f"{counted.formula:.4f}")
    cols[2].metric(T("metric.playbook"), f"{counted.playbook_ratio:.4f}")
    cols[3].metric(T("metric.kept"), f"{counted.most_kept}")
    lockstep = pipeline.slot_counts(p, m, settings.schedule)
    st.markdown(T("schedule.explain", slots=counted.slots, busy=counted.busy_per_device,
                  idle_per_device=counted.slots - counted.busy_per_device, backward_slots=lockstep.backward_slots,
                  forward_slots=lockstep.forward_slots))
    cells = pipeline.schedule_cells(p, m, settings.schedule)
    kinds = kind_labels()
    frame = pd.DataFrame([{"slot": c.slot, "device": c.device, "kind": kinds[c.kind], "label": c.label}
                          for c in cells])
    st.altair_chart(charts.heatmap(frame, "slot", "device", "kind", x_title=T("axis.slot"),
                                   y_title=T("axis.device"), value_title=T("axis.kind"), title=T("chart.timeline"),
                                   text="label", by_device=True, categories=list(kinds.values())), width="stretch")
    dataframe(T, pd.DataFrame(pipeline.schedule_rows(cells)))
    key = "schedule.kept" if p > 1 else "schedule.kept_one_stage"
    st.markdown(T(key, counts=", ".join(str(n) for n in counted.kept),
                  schedule_name=answer_labels()[settings.schedule], most=counted.most_kept, micro=m))


def show_data_axis(devices: int, settings: pipeline.Settings) -> None:
    st.subheader(T("data.heading"))
    axis = pipeline.data_axis(devices, settings.stages, settings.layers, settings.hidden, settings.features,
                              settings.model, settings.dims)
    if axis is None:
        st.caption(T("data.none", stages=settings.stages, needed=2 * settings.stages, devices=devices))
        return
    st.markdown(T("data.explain", devices=devices, replicas=axis.replicas, stages=axis.stages, used=axis.used,
                  unused=axis.unused, stage_bytes=axis.stage_param_bytes, allreduce=axis.allreduce_bytes))
    if st.button(T("data.button"), key="pipeline.train_data", help=T("data.button.help")):
        run_data_axis(devices, settings, axis)
    measured = st.session_state.get(DATA_LAST)
    if measured is not None and measured[:2] == (devices, settings):
        show_data_run(measured[2], settings)
    else:
        st.info(T("data.nothing_yet"), icon="👆")


def run_data_axis(devices: int, settings: pipeline.Settings, axis: pipeline.DataAxis) -> None:
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("data.progress.pipeline", replicas=axis.replicas, stages=axis.stages))

        def on_run(which: str) -> None:
            if which == "data_parallel":
                bar.progress(0.5, text=T("data.progress.data_parallel", used=axis.used))

        run = pipeline.measure_data_axis(devices, settings, on_run=on_run)
        bar.empty()
    st.session_state[DATA_LAST] = (devices, settings, run)


def show_data_run(run: pipeline.DataAxisRun, settings: pipeline.Settings) -> None:
    axis = run.axis
    st.markdown(T("data.measured", replicas=run.replicas, stages=run.stages, steps=run.steps, used=axis.used,
                  batch=run.global_batch, micro=run.microbatches, rows=run.rows))
    cols = st.columns(4)
    cols[0].metric(T("metric.data_bytes"), f"{run.data_bytes:,.0f}")
    cols[1].metric(T("metric.data_formula"), f"{run.formula_data_bytes:,.0f}")
    cols[2].metric(T("metric.permute_bytes"), f"{run.permute_bytes:,.0f}")
    cols[3].metric(T("metric.loss_gap"), f"{run.loss_gap:.2e}")
    rows = run.traffic_rows()
    labels = traffic_labels()
    frame = pd.DataFrame([{**row, "traffic": labels[row["traffic"]]} for row in rows])
    dataframe(T, frame)
    st.markdown(T("data.bytes", reductions=run.data_reductions, shapes=", ".join(run.data_shapes),
                  measured=run.data_bytes, stage_bytes=axis.stage_param_bytes, grad=axis.allreduce_bytes,
                  loss=run.formula_loss_bytes, formula=run.formula_data_bytes))
    transformer = settings.model == models.TRANSFORMER
    key = ("data.no_permutes" if run.stages == 1 else "data.permutes.transformer" if transformer
           else "data.permutes")
    st.markdown(T(key, permutes=run.permutes_per_step, measured=run.permute_bytes, slots=run.slots, rows=run.rows,
                  hidden=run.hidden, seq_len=settings.dims.seq_len, d_model=settings.dims.d_model,
                  formula=run.formula_permute_bytes))
    worst = max(abs(row["measured_bytes"] - row["formula_bytes"]) for row in rows)
    st.markdown(T("data.match") if worst == 0 else T("data.mismatch", worst=worst))
    st.markdown(T("data.loss.same" if run.loss_gap <= pipeline.LOSS_RTOL else "data.loss.differs", steps=run.steps,
                  pipeline=run.pipeline_loss, flat=run.data_parallel_loss, replicas=run.replicas, used=axis.used,
                  gap=run.loss_gap, rtol=pipeline.LOSS_RTOL, eps=pipeline.FLOAT32_EPS))
    show_scaling(run)


def show_scaling(run: pipeline.DataAxisRun) -> None:
    st.subheader(T("scaling.heading"))
    words = {"collectives": run.collectives_per_step, "flat_collectives": run.data_parallel_collectives_per_step,
             "ratio": run.scaling_ratio, "flat_ratio": run.data_parallel_scaling_ratio, "used": run.axis.used}
    st.markdown(T("scaling.explain", step_ms=run.step_s * 1e3, base_ms=run.baseline_step_s * 1e3, slots=run.slots,
                  permutes=run.permutes_per_step, reductions=run.data_reductions + run.stage_reductions,
                  per_us=run.per_collective_s * 1e6, flat_ms=run.data_parallel_step_s * 1e3, **words))
    info = runtime_info()
    if run.simulated:
        st.markdown(T("scaling.simulated", cores=run.cores, **words))
    else:
        st.markdown(T("scaling.real", kind=info.device_kind))
    st.markdown(T("scaling.pays", backward_slots=run.backward_slots, slots=run.slots, micro=run.microbatches, **words))
    if run.scaling_ratio < run.data_parallel_scaling_ratio:
        st.markdown(T("scaling.behind", times=run.data_parallel_scaling_ratio / run.scaling_ratio))
    else:
        st.markdown(T("scaling.ahead", **words))
    hardware_note(T)


def show_cores(stages: int) -> bool:
    """Say whether this machine can show the bubble in time; True when it can."""
    info = runtime_info()
    if not info.simulated:
        st.info(T("cores.real", kind=info.device_kind), icon="🚀")
        return True
    if pipeline.shows_bubble_in_time(stages, info.physical_cores, info.simulated):
        st.info(T("cores.enough", cores=info.physical_cores, stages=stages), icon="🖥️")
        return True
    st.warning(T("cores.short", devices=info.device_count, cores=info.physical_cores, stages=stages), icon="🖥️")
    return False


# --- measuring ----------------------------------------------------------------------------------------


def run_measure(settings: pipeline.Settings, timed: bool, guess: str) -> None:
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.memory"))
        memory = pipeline.compare_memory(settings)
        fit = None
        if timed:
            ladder = settings.ladder
            bar.progress(0.0, text=T("progress.time", micro=ladder[0], done=1, total=len(ladder)))

            def on_point(point, index, total):
                following = ladder[min(index + 1, total - 1)]
                bar.progress((index + 1) / total,
                             text=T("progress.time", micro=following, done=min(index + 2, total), total=total))

            fit = pipeline.measure_step_times(settings, ladder, on_point)
        bar.empty()
    st.session_state[LAST] = Measured(settings, memory.rows, fit, runtime_info().physical_cores, guess)
    verdict = memory.verdict
    st.session_state[RECORDED] = None
    if verdict != "unknown":  # with a class code, the guess is recorded before the page shows the answer
        right = guess == verdict
        st.session_state[RECORDED] = predicting.record_attempt(T.page, PREDICT_STEP, guess, verdict, right,
                                                               {PREDICT_STEP: right})


def show_time(measured: Measured) -> None:
    settings, fit = measured.settings, measured.fit
    st.subheader(T("time.heading", stages=settings.stages))
    if fit is None:
        st.caption(T("time.skipped", cores=measured.cores, stages=settings.stages))
        return
    series = {"measured": T("series.measured"), "fit": T("series.fit")}
    frame = pd.DataFrame(fit.chart_rows())
    frame["series"] = [series[s] for s in frame["series"]]
    st.altair_chart(charts.line(frame, "microbatches", "step_time_ms", x_title=T("axis.microbatches"),
                                y_title=T("axis.step_time"), color="series", color_title=T("axis.series"),
                                title=T("chart.time")), width="stretch")
    dataframe(T, pd.DataFrame([{"microbatches": p.microbatches, "global_batch": p.global_batch, "slots": p.slots,
                                "step_time_ms": p.step_time_s * 1e3, "fit_ms": fit.fitted_s(p.microbatches) * 1e3,
                                "compile_s": p.compile_s} for p in fit.points]))
    m = settings.microbatches
    counts = pipeline.slot_counts(settings.stages, m, settings.schedule)
    words = {"error": fit.worst_relative_error, "pair_ms": fit.t_pair_s * 1e3, "micro": m,
             "forward_slots": counts.forward_slots, "backward_slots": counts.backward_slots,
             "lockstep_ms": fit.fitted_s(m) * 1e3, "async_ms": fit.asynchronous_s(m) * 1e3}
    if fit.separable:
        gpipe, one = fit.lockstep_s(m, "gpipe"), fit.lockstep_s(m, "1f1b")
        st.markdown(T("time.fit", t_f_ms=fit.t_forward_s * 1e3, t_b_ms=fit.t_backward_s * 1e3,
                      gpipe_ms=gpipe * 1e3, one_ms=one * 1e3, ratio=one / gpipe, **words))
    else:
        st.markdown(T("time.fit_pair", **words))
    st.markdown(T("time.asynchronous", **words))
    hardware_note(T)


def show_memory(measured: Measured) -> None:
    settings, rows = measured.settings, measured.memory
    st.subheader(T("memory.heading"))
    # what a stage keeps per micro-batch: the MLP's rows × H, the transformer's rows × S × d_model
    key = "memory.explain.transformer" if settings.model == models.TRANSFORMER else "memory.explain"
    st.markdown(T(key, stages=settings.stages, micro=settings.microbatches,
                  rows=settings.rows, hidden=settings.hidden, seq_len=settings.dims.seq_len,
                  d_model=settings.dims.d_model))
    frame = pd.DataFrame([dataclasses.asdict(row) for row in rows])
    if frame["peak_bytes"].notna().all():
        st.altair_chart(charts.bar(frame[["schedule", "peak_bytes"]], "schedule", "peak_bytes",
                                   x_title=T("axis.schedule"), y_title=T("axis.bytes"), title=T("chart.memory")),
                        width="stretch")
    dataframe(T, frame)
    peaks = {row.schedule: row.peak_bytes for row in rows}
    kept = {row.schedule: row.kept for row in rows}
    stash = {row.schedule: row.stash_model_bytes for row in rows}
    verdict = pipeline.memory_verdict(rows)
    saved = peaks["gpipe"] - peaks["1f1b"] if verdict != "unknown" else 0
    reason = pipeline.memory_reason(rows)
    key = ("memory.gpipe" if reason == "gpipe" else "memory.1f1b" if reason == "1f1b"
           else "memory.same_none" if reason == "same_none" else "memory.same_kept" if reason == "same_kept"
           else "memory.same_despite" if reason == "same_despite" else "memory.unknown")
    st.markdown(T(key, gpipe=peaks["gpipe"], one_f_one_b=peaks["1f1b"],
                  saved=saved, gpipe_kept=kept["gpipe"], one_kept=kept["1f1b"],
                  model_saved=stash["gpipe"] - stash["1f1b"]))
    if verdict != "unknown":
        predicting.show_outcome(T, PREDICT_STEP, measured.guess, verdict, answer_labels(),
                                st.session_state.get(RECORDED))


# --- the page ------------------------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.latex(r"\frac{t_\text{bubble}}{T_\text{step}} = \frac{P-1}{M+P-1}, \qquad "
         r"\frac{t_\text{bubble}}{t_\text{ideal}} = \frac{P-1}{M}, \qquad "
         r"T_\text{async}(M) = (M+P-1)(t_f + t_b), \qquad T_\text{lockstep}(M) = n_F\,t_f + n_B\,t_b")
st.caption(T("formulas"))

max_devices = runtime_info().device_count
model = url_choice(T, "model", train_pipeline.PIPELINE_MODELS, "mlp", radio=True)
transformer = model == models.TRANSFORMER
if transformer:
    st.markdown(T("intro.transformer"))
cols = st.columns(3)
with cols[0]:
    devices = url_devices(T, max_devices)
    stages = url_int(T, "stages", min(4, devices), 1, min(max_devices, MAX_LAYERS))
with cols[1]:
    layers = url_int(T, "layers", max(2, min(MAX_LAYERS, 2 * stages)), 2, MAX_LAYERS)
    microbatches = url_int(T, "microbatches", 8, 1, MAX_MICROBATCHES)
with cols[2]:
    rows = url_int(T, "rows", round_up(16, stages), 1, pipeline.MAX_ROWS, slider=False)
    hidden = 64 if transformer else url_int(T, "hidden", 64, 1, MAX_HIDDEN, slider=False)
schedule = url_choice(T, "schedule", train_pipeline.SCHEDULES, "gpipe", radio=True)
dims = None
if transformer:  # its blocks are the layers above
    dims = models.Dims(**transformer_settings(T, blocks=False))
    task_caption(T, dims.vocab, default_learning_rate(model, hidden))

settings = None
with guard(T):
    settings = pipeline.check_settings(devices, stages, layers, microbatches, schedule, rows, hidden, max_devices,
                                       model, dims)
    st.caption(T("per_stage.transformer" if transformer else "per_stage", stages=settings.stages,
                 per=settings.layers // settings.stages, layers=settings.layers,
                 batch=settings.microbatches * settings.rows, micro=settings.microbatches, rows=settings.rows))
if devices == 1:
    st.info(T("one_device"), icon="1️⃣")
if settings is not None:
    with guard(T):
        show_schedule(settings)
    with guard(T):
        show_data_axis(devices, settings)

st.header(T("predict.heading"))
classroom.identity_form(T.page)  # whether the guess is recorded for a class, said plainly
st.caption(R("no_controls"))
timed = False
if settings is not None:
    st.markdown(T("predict.body", ladder=", ".join(str(m) for m in settings.ladder)))
    timed = show_cores(settings.stages)
labels = answer_labels()
guess = st.radio(T("w.guess"), ANSWERS, format_func=lambda a: labels.get(a, a), index=None, key=GUESS,
                 horizontal=True, disabled=settings is None)
if guess is None:
    st.caption(T("predict.first"))
measure_clicked = st.button(T("button.measure"), key="pipeline.measure", disabled=settings is None or guess is None,
                            help=T("button.measure.help"))
with guard(T):
    if measure_clicked:
        run_measure(settings, timed, guess)
if LAST in st.session_state:
    with guard(T):
        show_memory(st.session_state[LAST])
    with guard(T):
        show_time(st.session_state[LAST])
else:
    st.info(T("nothing_yet"), icon="👆")

if settings is not None:
    trace_view.bubble_panel("pipeline", settings.stages, settings.microbatches, settings.schedule)
show_code(T, train_pipeline.stage_order, train_pipeline.schedule_table, pipeline.fit_slot_times,
          pipeline.time_steps, pipeline.peak_memory, pipeline.measure_data_axis)
