"""Training lab: the full data-parallel loop on D devices, its loss, throughput and S(D), tracked in MLflow."""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import charts, classroom, heavy_jobs, trace_view
from labs.ui.blocks import export_button, show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_bool, url_choice, url_devices, url_float, url_int
from labs.ui.tracking import show_tracking, usable_tracking_uri
from labs.ui.transformer import command_instead_of_export, task_caption, transformer_settings
from labs.ui.visitor import guard
from pmap_core import export
from pmap_core.runtime import device_ladder
from pmap_core.tracking.callback import TrackedSweep, TrackedTraining, TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import advice as impl_advice
from pmap_core.train import config as train_config
from pmap_core.train import loop as training
from pmap_core.train import models, replicated
from pmap_core.train import plan as train_plan
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import MAX_BATCH, MAX_STEPS

T = texts("training")
LAST_RUN = "training.last_run"  # session state: TrackedTraining
LAST_SWEEP = "training.last_sweep"  # session state: TrackedSweep
DEFAULTS = train_config.TrainConfig()  # the settings a visitor starts from: the CLI and export start there too
CHUNK = DEFAULTS.chunk  # steps per compiled call: the loss curve and the progress bar move once per chunk


# --- charts ----------------------------------------------------------------------


def loss_title(model: str) -> str:
    """The loss axis: the transformer's is the cross-entropy of the next token, the others' a mean squared error."""
    return T("axis.loss.cross_entropy") if model == models.TRANSFORMER else T("axis.loss")


def loss_chart(losses, model: str) -> alt.Chart:
    frame = pd.DataFrame({"step": np.arange(1, len(losses) + 1), "loss": np.asarray(losses, dtype=float)})
    title = loss_title(model)
    chart = charts.line(frame, "step", "loss", x_title=T("axis.step"), y_title=title)
    positive = bool((frame["loss"] > 0).all())
    return chart.encode(y=alt.Y("loss:Q", title=title, scale=alt.Scale(type="log" if positive else "linear")))


def scaling_frames(points) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Throughput and efficiency against D, each beside the ideal line and the hardware ceiling; a
    sweep of several implementations gets one measured line per implementation instead."""
    several = len({p.result.config.impl for p in points}) > 1
    rows_t, rows_e = [], []
    for p in points:
        d, base = p.devices, p.baseline_throughput
        measured = p.result.config.impl if several else T("series.measured")
        rows_t.append({"D": d, "samples/s": p.result.steady_throughput, "series": measured})
        rows_e.append({"D": d, "efficiency": p.efficiency, "series": measured})
        if not several:
            rows_t += [{"D": d, "samples/s": base * d, "series": T("series.ideal")},
                       {"D": d, "samples/s": base * p.hardware_ceiling, "series": T("series.ceiling")}]
            rows_e += [{"D": d, "efficiency": 1.0, "series": T("series.ideal")},
                       {"D": d, "efficiency": p.hardware_ceiling / d, "series": T("series.ceiling")}]
    return pd.DataFrame(rows_t), pd.DataFrame(rows_e)


# --- running ---------------------------------------------------------------------


def live_loss(progress, chart_slot, total_steps: int, label: str, model: str):
    """An on_chunk function: move the progress bar and redraw the loss curve."""
    def on_chunk(steps_done, losses):
        progress.progress(min(steps_done / total_steps, 1.0), text=T(label, done=steps_done, total=total_steps))
        chart_slot.altair_chart(loss_chart(losses, model), width="stretch")
    return on_chunk


def run_training(config: train_config.TrainConfig) -> None:
    uri = usable_tracking_uri(T)
    if uri is None:
        return
    with heavy_jobs.heavy_job(T):
        progress = st.progress(0.0, text=T("progress.compiling"))
        chart_slot = st.empty()
        tracking = TrackingCallback(Tracker(uri), extra_tags=classroom.tags())
        live = training.Progress(on_chunk=live_loss(progress, chart_slot, config.steps, "progress.steps", config.model))
        try:
            result = training.train(config, [tracking, live])
        except training.Diverged:  # said by the guard; the live chart keeps the losses up to that step
            progress.empty()
            st.session_state.pop(LAST_RUN, None)  # "Last run" below would name an older one
            raise
        progress.empty()
        chart_slot.empty()
    st.session_state[LAST_RUN] = tracking.tracked(result)


def run_sweep(config: train_config.TrainConfig, device_counts: list[int], impls: tuple[str, ...] | None) -> None:
    uri = usable_tracking_uri(T)
    if uri is None:
        return
    with heavy_jobs.heavy_job(T):
        runs = len(train_config.sweep_configs(config, device_counts, impls))
        progress = st.progress(0.0, text=T("progress.sweep", done=0, total=runs))
        chart_slot = st.empty()

        def on_point(point, index, total):
            progress.progress((index + 1) / total, text=T("progress.sweep", done=index + 1, total=total))

        def on_chunk(steps_done, losses):
            chart_slot.altair_chart(loss_chart(losses, config.model), width="stretch")

        tracking = TrackingCallback(Tracker(uri), extra_tags=classroom.tags())
        try:
            sweep = training.sweep(config, device_counts, [tracking, training.Progress(on_chunk, on_point)], impls)
        except training.Diverged:
            progress.empty()
            st.session_state.pop(LAST_SWEEP, None)
            raise
        progress.empty()
        chart_slot.empty()
    st.session_state[LAST_SWEEP] = tracking.tracked_sweep(sweep)


# --- showing results ---------------------------------------------------------------


def show_params(result: training.TrainResult) -> None:
    if result.config.model == "linear":
        left, right = st.columns(2)
        left.metric(T("param.w"), f"{float(result.params['w']):.4f}", help=T("param.true", value=models.TRUE_W))
        right.metric(T("param.b"), f"{float(result.params['b']):.4f}", help=T("param.true", value=models.TRUE_B))
        return
    frame = pd.DataFrame([{T("param.name"): name, T("param.shape"): str(tuple(np.shape(v))),
                           T("param.norm"): float(np.linalg.norm(v))} for name, v in result.params.items()])
    st.dataframe(frame, hide_index=True, width="stretch")


def show_scaling(scaling: training.ScalingResult, cfg: train_config.TrainConfig) -> None:
    st.subheader(T("scaling.heading", mode=T(f"w.scaling.{scaling.mode}")))
    if scaling.devices == 1:  # the run is its own one-device baseline: nothing was timed apart
        st.markdown(T("scaling.one_device"))
        return
    st.markdown(T(f"scaling.explain.{scaling.mode}", batch=scaling.global_batch,
                  base_batch=scaling.baseline_global_batch, devices=scaling.devices))
    st.latex(r"S(D) = \frac{\text{steady throughput}(D)}{\text{steady throughput}(1)}, \qquad E(D) = \frac{S(D)}{D}")
    cols = st.columns(4)
    cols[0].metric(T("scaling.throughput", devices=scaling.devices), f"{scaling.steady_throughput:,.0f}")
    cols[1].metric(T("scaling.baseline"), f"{scaling.baseline_throughput:,.0f}")
    cols[2].metric(T("scaling.ratio"), f"{scaling.scaling_ratio:.2g}×")
    cols[3].metric(T("scaling.efficiency"), f"{scaling.efficiency * 100:.0f} %")
    st.caption(T("scaling.ceiling", ceiling=scaling.hardware_ceiling, devices=scaling.devices))
    hardware_note(T)
    if scaling.devices > 1 and scaling.scaling_ratio < 1:
        st.warning(T("scaling.slower", devices=scaling.devices, ratio=scaling.scaling_ratio,
                     base_step=scaling.baseline_step_time_s * 1e6, step=scaling.steady_step_time_s * 1e6), icon="🐢")
    if scaling.scaling_ratio > scaling.hardware_ceiling:
        st.info(T("scaling.above_ceiling", ratio=scaling.scaling_ratio, ceiling=scaling.hardware_ceiling), icon="🔎")
    per_step = models.multiply_adds_per_sample(cfg.model, cfg.input_features, cfg.hidden, cfg.layers,
                                               cfg.dims) * scaling.baseline_global_batch
    st.markdown(T("scaling.bounds", work=per_step, base_step=scaling.baseline_step_time_s * 1e3))


def show_run(tracked: TrackedTraining) -> None:
    result = tracked.result
    cfg = result.config
    st.subheader(T("result.heading", model=T(f"w.model.{cfg.model}"), impl=cfg.impl, devices=cfg.devices,
                   batch=cfg.global_batch))
    show_tracking(T, tracked)
    st.altair_chart(loss_chart(result.losses, cfg.model), width="stretch")
    if cfg.devices == 1:
        st.info(T("replicas.one_device"), icon="ℹ️")
    elif result.replicas_identical:
        st.success(T("replicas.same", devices=cfg.devices), icon="✅")
    else:
        st.error(T("replicas.differ", diff=result.replica_max_diff), icon="❗")
    show_params(result)
    cols = st.columns(5)
    cols[0].metric(T("metric.throughput"), f"{result.throughput:,.0f}", help=T("metric.throughput.help"))
    cols[1].metric(T("metric.steady_throughput"), f"{result.steady_throughput:,.0f}",
                   help=T("metric.steady_throughput.help", steps=min(cfg.chunk, cfg.steps)))
    cols[2].metric(T("metric.step_time"), f"{result.step_time_s * 1e6:,.1f} µs")
    cols[3].metric(T("metric.compile_time"), f"{result.compile_time_s:.2f} s",
                   help=T("metric.cached") if not result.recompiled else None)
    cols[4].metric(T("metric.final_loss"), f"{result.final_loss:.3g}")
    if tracked.scaling is not None:
        show_scaling(tracked.scaling, cfg)


def show_sweep(tracked: TrackedSweep) -> None:
    sweep = tracked.sweep
    st.subheader(T("sweep.heading", mode=T(f"w.scaling.{sweep.mode}")))
    show_tracking(T, tracked)
    throughput, efficiency = scaling_frames(sweep.points)
    left, right = st.columns(2)
    left.altair_chart(charts.line(throughput, "D", "samples/s", x_title="D", y_title=T("axis.throughput"),
                                  color="series", title=T("sweep.throughput")), width="stretch")
    right.altair_chart(charts.line(efficiency, "D", "efficiency", x_title="D", y_title=T("axis.efficiency"),
                                   color="series", title=T("sweep.efficiency")), width="stretch")
    hardware_note(T)
    table = pd.DataFrame([{T("w.impl"): p.result.config.impl, "D": p.devices,
                           T("sweep.col.batch"): p.result.config.global_batch,
                           T("metric.steady_throughput"): round(p.result.steady_throughput),
                           "S(D)": round(p.scaling_ratio, 3), "E(D)": round(p.efficiency, 3),
                           T("sweep.col.ceiling"): p.hardware_ceiling,
                           T("metric.final_loss"): p.result.final_loss} for p in sweep.points])
    st.dataframe(table, hide_index=True, width="stretch")
    above = [p for p in sweep.points if p.scaling_ratio > p.hardware_ceiling]
    if above:
        last = above[-1]
        st.info(T("scaling.above_ceiling", ratio=last.scaling_ratio, ceiling=last.hardware_ceiling), icon="🔎")
    best = max(sweep.points, key=lambda p: p.result.steady_throughput)
    st.markdown(T("sweep.best", devices=best.devices, impl=best.result.config.impl,
                  throughput=best.result.steady_throughput))
    show_impl_advice(sweep.points)


def sweep_help(config: train_config.TrainConfig, counts: list[int]) -> str:
    """The device counts a sweep of `config` trains on, and those a strong sweep leaves out (the global
    batch does not split over them), from the sweep's own list of runs."""
    swept = sorted({run.devices for run in train_config.sweep_configs(config, counts)})
    left_out = [d for d in counts if d not in swept]
    text = T("button.sweep.help", counts=", ".join(map(str, swept)))
    if left_out:
        text += " " + T("button.sweep.left_out", batch=config.global_batch, counts=", ".join(map(str, left_out)))
    return text


def show_impl_advice(points) -> None:
    """After a sweep of every implementation: keep the default where it is within 10% of the fastest,
    else recommend the fastest, with the figures measured here."""
    advice = impl_advice.advise(impl_advice.from_points(points))
    if len({p.result.config.impl for p in points}) < 2 or not advice:
        return
    behind = [a for a in advice if not a.default_ok]
    if not behind:
        st.success(T("advice.default_ok", default=impl_advice.DEFAULT_IMPL, share=impl_advice.TOLERANCE * 100,
                     counts=", ".join(str(a.devices) for a in advice)), icon="✅")
    for a in behind:
        st.info(T("advice.recommend", devices=a.devices, fastest=a.fastest, fastest_throughput=a.fastest_throughput,
                  default=a.default, default_throughput=a.default_throughput or 0.0,
                  shortfall=(a.shortfall or 1.0) * 100), icon="💡")


def follow_default(key: str, default: float) -> None:
    """The number box `key` follows its default (η: the width's, `default_learning_rate`) until the visitor
    types another value; a value typed, or given by a link, stays."""
    shown = f"{key}.default"
    if key in st.session_state and st.session_state[key] == st.session_state.get(shown):
        st.session_state[key] = default
    st.session_state[shown] = default


# --- the page ------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.latex(r"b = \frac{B}{D}, \quad \bar g = \frac{1}{D}\sum_{d=1}^{D} g_d, \quad w \leftarrow w - \eta\,\bar g, "
         r"\quad T_\text{step} = T_\text{compute} + T_\text{comm} + T_\text{dispatch}")

max_devices = runtime_info().device_count
cols = st.columns(3)
with cols[0]:
    model = url_choice(T, "model", models.MODELS, DEFAULTS.model, radio=True)
    devices = url_devices(T, max_devices)
    scaling_mode = url_choice(T, "scaling", train_config.SCALING_MODES, DEFAULTS.scaling, radio=True)
with cols[2]:  # before η, whose default follows the width
    hidden = url_int(T, "hidden", DEFAULTS.hidden, 1, train_config.MAX_HIDDEN, slider=False) if model == "mlp" \
        else DEFAULTS.hidden
    seed = url_int(T, "seed", DEFAULTS.seed, 0, 1_000_000, slider=False)
    compare = url_bool(T, "compare", False)
with cols[1]:
    impl = url_choice(T, "impl", IMPLEMENTATIONS, DEFAULTS.impl, radio=True)
    global_batch = url_int(T, "batch", train_config.default_batch(devices), 1, MAX_BATCH, slider=False)
    lr_default = train_config.default_learning_rate(model, hidden)
    follow_default("training.lr", lr_default)
    learning_rate = url_float(T, "lr", lr_default, train_config.MIN_LEARNING_RATE, train_config.MAX_LEARNING_RATE,
                              step=0.01, fmt="%.4g")
    if model != models.TRANSFORMER and lr_default != DEFAULTS.learning_rate:  # the transformer's: task_caption
        st.caption(T("lr_default", default=lr_default, hidden=hidden, base=train_config.BASE_WIDTH))
    steps = url_int(T, "steps", DEFAULTS.steps, 1, MAX_STEPS, slider=False, step=50)
sizes = transformer_settings(T) if model == models.TRANSFORMER else {}
if sizes:
    task_caption(T, sizes["vocab"], lr_default)

config = train_config.TrainConfig(model=model, devices=devices, global_batch=global_batch, learning_rate=learning_rate,
                                  steps=steps, hidden=hidden, seed=seed, chunk=min(CHUNK, steps), scaling=scaling_mode,
                                  impl=impl, **sizes)
sweep_counts = device_ladder(max_devices)
valid = False
with guard(T):
    config = train_plan.validate(config)
    valid = True
    st.caption(T("per_device", batch=config.global_batch, devices=config.devices, per=config.per_device_batch))

left, right = st.columns(2)
train_clicked = left.button(T("button.train"), key="training.train", type="primary", disabled=not valid)
sweep_clicked = right.button(T("button.sweep"), key="training.sweep", disabled=not valid,
                             help=sweep_help(config, sweep_counts) if valid else None)
if valid and config.model == models.TRANSFORMER:
    command_instead_of_export(T, config)
elif valid:
    export_button(T, lambda: export.training_export(config, CHUNK))
with guard(T):
    if train_clicked:
        run_training(config)
    if sweep_clicked:
        sweep_impls = IMPLEMENTATIONS if compare else None
        train_plan.check_sweep(config, sweep_counts, sweep_impls)
        run_sweep(config, sweep_counts, sweep_impls)

if LAST_RUN in st.session_state:
    show_run(st.session_state[LAST_RUN])
if LAST_SWEEP in st.session_state:
    show_sweep(st.session_state[LAST_SWEEP])
if LAST_RUN not in st.session_state and LAST_SWEEP not in st.session_state:
    st.info(T("nothing_yet"), icon="👆")
if valid:
    trace_view.trace_panel("training", config, trace_view.run_of(st.session_state.get(LAST_RUN), config))
    trace_view.straggler_panel("training", config.devices)

IMPLEMENTED_BY = {"pmap": replicated.pmap_chunk, "shard_map": replicated.shard_map_chunk,
                  "jit": replicated.jit_chunk}
show_code(T, IMPLEMENTED_BY[impl], training.train, training.sweep, TrackingCallback)
