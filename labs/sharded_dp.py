"""Sharded data parallel lab: ZeRO-1/2/3 (FSDP), gradient accumulation, bfloat16 gradients and mixed
precision, trained live and measured on this machine's devices beside the formulas of
`costs.analytic`; every sentence with a figure is filled from what ran (`concepts.sharded_dp`)."""

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import charts, heavy_jobs, trace_view
from labs.ui.blocks import dataframe, export_button, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_bool, url_choice, url_devices, url_float, url_int
from labs.ui.tracking import show_tracking, usable_tracking_uri
from labs.ui.transformer import command_instead_of_export, transformer_settings
from labs.ui.visitor import guard
from pmap_core import export
from pmap_core.concepts import sharded_dp as zero_compare
from pmap_core.costs import analytic
from pmap_core.tracking.callback import TrackedTraining, TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import config as train_config
from pmap_core.train import hsdp, models, transformer
from pmap_core.train import loop as training
from pmap_core.train import plan as train_plan
from pmap_core.validation import MAX_BATCH, MAX_STEPS

T = texts("sharded_dp")
LAST_RUN = "sharded_dp.last_run"  # session state: [TrackedTraining] (two when a second run is compared)
LAST_COMM = "sharded_dp.last_comm"  # session state: [StepComm] of those runs, in the same order
MEASURED = "sharded_dp.measured"  # session state: the settings this session measured (results in the cache)
FOOTPRINTS = "sharded_dp.footprints"  # session state: the footprints the charts were drawn from
CHUNK = train_config.TrainConfig().chunk  # steps per compiled call, as on the training page
# The models this lab shards: the formulas count parameters (Ψ), not their shapes, so each measures alike.
MODELS = ("mlp", "transformer")


@st.cache_data(show_spinner=False, max_entries=16)
def measured(config: train_config.TrainConfig, counts: tuple[int, ...]) -> zero_compare.Measurement:
    """Every strategy at every D of `counts`, in both precisions; a cache hit never queues."""
    with heavy_jobs.heavy_job(T):
        total = len(zero_compare.ladder_configs(config, counts))
        bar = st.progress(0.0, text=T("progress.measure", done=0, total=total))
        result = zero_compare.measure_all(config, counts, lambda done, total: bar.progress(
            done / total, text=T("progress.measure", done=done, total=total)))
        bar.empty()
    return result


def run_label(config: train_config.TrainConfig) -> str:
    return T("run.mixed") if config.precision == "mixed" else T("run.float32", dtype=config.grad_dtype)


def loss_chart(runs: list[TrackedTraining]) -> alt.Chart:
    frame = pd.concat([pd.DataFrame({"step": np.arange(1, len(r.result.losses) + 1), "loss": r.result.losses,
                                     "grad_dtype": r.result.config.grad_dtype, "run": run_label(r.result.config)})
                       for r in runs])
    chart = charts.line(frame, "step", "loss", x_title=T("axis.step"), y_title=T("axis.loss"), color="run",
                        color_title=T("axis.run"))
    scale = alt.Scale(type="log" if bool((frame["loss"] > 0).all()) else "linear")
    return chart.encode(y=alt.Y("loss:Q", title=T("axis.loss"), scale=scale))


def run_training(configs: list[train_config.TrainConfig]) -> None:
    uri = usable_tracking_uri(T)
    if uri is None:
        return
    done, comms = [], []
    with heavy_jobs.heavy_job(T):
        total = sum(c.steps for c in configs)
        bar, slot = st.progress(0.0, text=T("progress.compiling")), st.empty()
        for config in configs:
            before = sum(c.steps for c in configs[:len(done)])

            def on_chunk(steps_done, losses, before=before, config=config):
                bar.progress(min((before + steps_done) / total, 1.0),
                             text=T("progress.steps", done=before + steps_done, total=total, run=run_label(config)))
                slot.altair_chart(charts.line(pd.DataFrame({"step": np.arange(1, len(losses) + 1), "loss": losses}),
                                              "step", "loss", x_title=T("axis.step"), y_title=T("axis.loss")),
                                  width="stretch")

            tracking = TrackingCallback(Tracker(uri), lab="sharded_dp")
            result = training.train(config, [tracking, training.Progress(on_chunk=on_chunk)], measure_scaling=False)
            done.append(tracking.tracked(result))
            comms.append(zero_compare.step_comm(result.config))
        bar.empty()
        slot.empty()
    st.session_state[LAST_RUN] = done
    st.session_state[LAST_COMM] = comms


def footprint_table(f) -> None:
    rows = [(T(f"kind.{k}"), zero_compare.held(f)[k], zero_compare.modelled(f)[k]) for k in zero_compare.KINDS]
    rows.append((T("kind.comm"), f.comm_bytes_per_step, f.model_comm_bytes_per_step))
    dataframe(T, pd.DataFrame([{"figure": name, "measured": float(m), "model": float(mo),
                                   "ratio": (m / mo if mo else None)} for name, m, mo in rows]))


def hlo_line(f) -> str:
    """What the compiled step sent, by kind: plain figures, in the order a step runs them."""
    return " + ".join(f"{kind} {sent:,.0f}" for kind, sent in zero_compare.comm_parts(f))


def show_held(cfg: train_config.TrainConfig, f) -> None:
    """Padding and peak bytes of the run, as measured."""
    if cfg.devices > 1:
        if cfg.strategy == "dp":
            st.markdown(T("held.dp", padding=f.padding_bytes_per_device))
        else:
            st.markdown(T("held.padding", padding=f.padding_bytes_per_device, devices=cfg.devices))
    top = zero_compare.peak(f)
    if top is None:
        st.markdown(T("held.no_peak"))
    else:
        st.markdown(T("held.peak", peak=top.total, args=top.arguments, outputs=top.outputs, temps=top.temporaries))


def show_sent(cfg: train_config.TrainConfig, f, comm: zero_compare.StepComm) -> None:
    """What a step sent, from the compiled HLO, beside the strategy's formula."""
    if zero_compare.sends_nothing(f):
        st.info(T("one_device", total=zero_compare.total_bytes(f), psi=f.param_count), icon="1️⃣")
        return
    st.markdown(T("sent.line", parts=hlo_line(f), total=f.comm_bytes_per_step,
                  formula=zero_compare.COMM_FORMULAS[cfg.strategy], model=f.model_comm_bytes_per_step,
                  source=zero_compare.SOURCES[cfg.strategy]))
    if zero_compare.widened(f):
        st.markdown(T("sent.widened", compiled=", ".join(comm.compiled_dtypes), emitted=", ".join(comm.emitted_dtypes),
                      emitted_bytes=f.emitted_comm_bytes_per_step, model=f.model_comm_bytes_per_step))
    gathers = zero_compare.layer_gathers(f, comm, cfg.accum_steps, cfg.optimizer)
    if gathers is not None:
        key = "sent.gathers" if gathers.forward_and_backward else "sent.gathers.other"
        st.markdown(T(key, instructions=gathers.instructions, layers=gathers.layers, k=gathers.accum_steps,
                      times=gathers.times_params, padded=gathers.padded_params))


def show_accumulation(cfg: train_config.TrainConfig, f, comm: zero_compare.StepComm) -> None:
    st.subheader(T("accum.heading"))
    if cfg.accum_steps == 1:
        st.markdown(T("accum.none", per=cfg.per_device_batch))
    else:
        st.markdown(T("accum.measured", k=cfg.accum_steps, micro=cfg.micro_batch, per=cfg.per_device_batch))
        if zero_compare.sends_nothing(f):
            st.markdown(T("accum.one_device", reductions=f.reductions_per_step))
        else:
            inside = any(k.in_micro_loop for k in comm.kinds if k.kind in ("all-reduce", "reduce-scatter"))
            key = "accum.in_loop" if inside else "accum.after_loop"
            st.markdown(T(key, reductions=f.reductions_per_step))
    held = zero_compare.accumulator(f, cfg.accum_steps, cfg.optimizer)
    words = {"grad": held.grad_bytes, "ratio": held.ratio, "psi": f.param_count, "whole": held.whole_bytes}
    if cfg.accum_steps == 1:
        key = ("grad.holds.whole" if held.holds == "whole" else "grad.holds.shard" if held.holds == "shard"
               else "grad.holds.part")
    else:
        key = ("accum.holds.whole" if held.holds == "whole" else "accum.holds.shard" if held.holds == "shard"
               else "accum.holds.part")
    st.markdown(T(key, **words))
    if cfg.accum_steps == 1:
        st.caption(T("accum.hint"))
    else:
        st.markdown(T("accum.explain", batch=cfg.global_batch, devices=cfg.devices, k=cfg.accum_steps,
                      micro=cfg.micro_batch))


def show_run(runs: list[TrackedTraining], comms: list[zero_compare.StepComm]) -> None:
    main = runs[0].result
    cfg, f = main.config, main.footprint
    st.subheader(T("result.heading", strategy=T(f"w.strategy.{cfg.strategy}"), devices=cfg.devices,
                   psi=f.param_count, accum=cfg.accum_steps, run=run_label(cfg)))
    for tracked in runs:
        show_tracking(T, tracked, dtype=run_label(tracked.result.config))
    st.altair_chart(loss_chart(runs), width="stretch")
    if len(runs) == 2:
        other = runs[1].result
        st.markdown(T("compare.losses", first=main.final_loss, first_run=run_label(cfg), second=other.final_loss,
                      second_run=run_label(other.config),
                      diff=abs(other.final_loss - main.final_loss) / abs(main.final_loss), steps=cfg.steps))
    footprint_table(f)
    show_held(cfg, f)
    show_sent(cfg, f, comms[0])
    show_accumulation(cfg, f, comms[0])
    show_dtypes(runs)


def show_dtypes(runs: list[TrackedTraining]) -> None:
    bf16 = next((r.result for r in runs if r.result.config.grad_dtype == "bfloat16"), None)
    if bf16 is None or bf16.config.devices == 1:
        return
    f = bf16.footprint
    st.subheader(T("bf16.heading"))
    st.markdown(T("bf16.measured", emitted=f.emitted_grad_comm_bytes_per_step, compiled=f.grad_comm_bytes_per_step,
                  dtypes=", ".join(f.comm_dtypes)))
    f32 = next((r.result for r in runs if r.result.config.grad_dtype == "float32"), None)
    if f32 is not None:
        base = f32.footprint
        st.markdown(T("bf16.against",
                      emitted=f.emitted_grad_comm_bytes_per_step / base.emitted_grad_comm_bytes_per_step,
                      compiled=f.grad_comm_bytes_per_step / base.grad_comm_bytes_per_step))
    widened = f.grad_comm_bytes_per_step > 1.5 * f.emitted_grad_comm_bytes_per_step
    st.info(T("bf16.widened" if widened else "bf16.kept"), icon="🔎")


def memory_chart(footprints) -> None:
    memory = pd.DataFrame(zero_compare.memory_rows(footprints))
    memory["part"] = memory["kind"].map(lambda k: T(f"kind.{k}"))
    memory["precision_name"] = memory["precision"].map(
        lambda p: T("w.precision.mixed") if p == "mixed" else T("w.precision.float32"))
    memory["model_total"] = memory.groupby(["precision", "strategy", "D"])["model"].transform("sum")
    bars = alt.Chart().mark_bar().encode(
        x=alt.X("D:O", title=T("axis.devices")), y=alt.Y("measured:Q", stack="zero", title=T("axis.bytes_device")),
        color=alt.Color("part:N", title=None), tooltip=["precision", "strategy", "D", "part", "measured", "model"])
    model = alt.Chart().mark_point(shape="diamond", filled=True, color="black", size=60).encode(
        x="D:O", y="model_total:Q", tooltip=["precision", "strategy", "D", "model_total"])
    order = list(dict.fromkeys(memory["precision_name"]))
    st.altair_chart(alt.layer(bars, model, data=memory).properties(width=140, height=220).facet(
        column=alt.Column("strategy:N", title=None, sort=list(train_config.STRATEGIES)),
        row=alt.Row("precision_name:N", title=None, sort=order), title=T("chart.memory")))
    st.caption(T("chart.memory.note"))


def show_bytes_per_param(footprints, config: train_config.TrainConfig, d: int) -> None:
    st.subheader(T("bpp.heading", devices=d))
    rows = zero_compare.bytes_per_param_rows(footprints, d, config.optimizer)
    dataframe(T, pd.DataFrame(rows))
    st.markdown(T("bpp.why"))
    savings = zero_compare.zero1_savings(footprints, d)
    if set(savings) != set(zero_compare.PRECISIONS):
        return
    f32, mixed = savings["float32"], savings["mixed"]
    if d == 1:
        st.markdown(T("bpp.one_device", f32=f32.dp_bytes_per_param, mixed=mixed.dp_bytes_per_param))
    else:
        st.markdown(T("bpp.measured", devices=d, optimizer=config.optimizer, f32=f32.zero1_bytes_per_param,
                      f32_dp=f32.dp_bytes_per_param, f32_x=f32.saving, mixed=mixed.zero1_bytes_per_param,
                      mixed_dp=mixed.dp_bytes_per_param, mixed_x=mixed.saving))


def show_strategies(measurement: zero_compare.Measurement, config: train_config.TrainConfig, d: int) -> None:
    st.subheader(T("strategies.heading", devices=d, run=run_label(config)))
    rows = zero_compare.strategy_rows(measurement, d, config.precision)
    dataframe(T, pd.DataFrame(rows))
    st.caption(T("strategies.note"))
    if d == 1:
        st.markdown(T("strategies.one_device"))
        return
    points = {s: measurement.at(s, d, config.precision) for s in train_config.STRATEGIES}
    if any(p is None for p in points.values()):
        return
    dp = points["dp"][0]
    st.markdown(T("strategies.sent", devices=d, dp=dp.comm_bytes_per_step,
                  zero1=points["zero1"][0].comm_bytes_per_step / dp.comm_bytes_per_step,
                  zero2=points["zero2"][0].comm_bytes_per_step / dp.comm_bytes_per_step,
                  zero3=points["zero3"][0].comm_bytes_per_step / dp.comm_bytes_per_step))
    zero3 = points["zero3"][0]
    if dp.peak_bytes_per_device and zero3.peak_bytes_per_device:
        st.markdown(T("strategies.peak", devices=d, zero3=zero3.peak_bytes_per_device, dp=dp.peak_bytes_per_device,
                      ratio=zero3.peak_bytes_per_device / dp.peak_bytes_per_device))
    if zero_compare.widened(dp):
        comm = points["dp"][1]
        st.markdown(T("strategies.widened", compiled=", ".join(comm.compiled_dtypes),
                      emitted=", ".join(comm.emitted_dtypes), dp=dp.comm_bytes_per_step,
                      dp_emitted=dp.emitted_comm_bytes_per_step, dp_model=dp.model_comm_bytes_per_step))


def comm_chart(footprints) -> None:
    frame = pd.DataFrame(zero_compare.comm_rows(footprints))
    if np.allclose(frame["emitted"], frame["measured"]):
        frame = frame.drop(columns="emitted")  # nothing widened: the emitted program's bytes are the same
    comm = frame.melt(id_vars=["strategy", "D"], var_name="source", value_name="bytes")
    comm["series"] = comm["strategy"] + " · " + comm["source"].map(lambda s: T(f"series.{s}"))
    st.altair_chart(alt.Chart(comm).mark_line(point=True).encode(
        x=alt.X("D:Q", title=T("axis.devices")), y=alt.Y("bytes:Q", title=T("axis.bytes_step")),
        color=alt.Color("strategy:N", title=None), strokeDash=alt.StrokeDash("source:N", title=None),
        tooltip=["series", "D", "bytes"]).properties(title=T("chart.comm"), height=300), width="stretch")


def show_measured(measurement: zero_compare.Measurement, config: train_config.TrainConfig, budget_gb: float) -> None:
    footprints = measurement.footprints
    chosen = zero_compare.of_precision(footprints, config.precision)
    d = zero_compare.shown_devices(footprints, config.devices)
    st.subheader(T("all.heading"))
    counts = ", ".join(str(c) for c in sorted({f.devices for f in footprints}))
    if config.model == models.TRANSFORMER:
        st.caption(T("all.settings.transformer", psi=footprints[0].param_count, layers=config.layers,
                     d_model=config.d_model, heads=config.heads, seq_len=config.seq_len, vocab=config.vocab,
                     optimizer=config.optimizer, batch=config.global_batch, k=config.accum_steps,
                     run=run_label(config), counts=counts))
    else:
        st.caption(T("all.settings", psi=footprints[0].param_count, hidden=config.hidden, features=config.features,
                     optimizer=config.optimizer, batch=config.global_batch, k=config.accum_steps,
                     run=run_label(config), counts=counts))
    memory_chart(footprints)
    for precision in zero_compare.PRECISIONS:
        same = zero_compare.same_at_one_device(footprints, precision)
        if same is not None:
            name = T("w.precision.mixed") if precision == "mixed" else T("w.precision.float32")
            st.caption(T("all.one_device", total=same, precision=name))
    show_bytes_per_param(footprints, config, d)
    show_strategies(measurement, config, d)
    comm_chart(chosen)
    worst = zero_compare.worst_ratio(chosen)
    if worst is not None:
        f = worst[0]
        st.caption(T("all.worst", strategy=f.strategy, devices=f.devices, figure=T(f"ratio.{worst[1]}"),
                     ratio=worst[2]))
        if worst[1] == "comm" and zero_compare.widened(f):
            st.caption(T("all.worst.widened", ratio=f.emitted_comm_bytes_per_step / f.model_comm_bytes_per_step))
    fits = zero_compare.largest_models(footprints, budget_gb * 1e9, config.devices, config.optimizer, config.precision)
    st.subheader(T("fit.heading", budget=budget_gb, devices=fits[0].devices, run=run_label(config)))
    dataframe(T, pd.DataFrame([{"strategy": x.strategy, "bytes_per_param": x.measured_bytes_per_param,
                                   "model_bytes_per_param": x.model_bytes_per_param,
                                   "largest_measured_b": x.largest_measured / 1e9,
                                   "largest_model_b": x.largest_model / 1e9,
                                   "ratio": x.ratio} for x in fits]))
    st.caption(T("fit.note"))


def show_hsdp(cfg: train_config.TrainConfig) -> None:
    """What each device holds and sends over each axis for every replica × data split of the learner's D."""
    st.subheader(T("hsdp.heading"))
    layouts = hsdp.hsdp_layouts(cfg.devices, cfg.strategy, cfg.precision, cfg.optimizer, cfg.grad_dtype)
    if len(layouts) == 1:
        st.info(T("hsdp.one_device"))
        return
    st.markdown(T("hsdp.intro", devices=cfg.devices, strategy=cfg.strategy, run=run_label(cfg)))
    dataframe(T, pd.DataFrame([{"replicas": x.replicas, "data": x.data, "held": x.held, "data_sent": x.data_sent,
                                "replica_sent": x.replica_sent} for x in layouts]))
    flat, hybrid = layouts[0], layouts[1]
    st.markdown(T("hsdp.when", flat=flat.data_sent, replicas=hybrid.replicas, replica=hybrid.replica_sent,
                  data=hybrid.data_sent, held=hybrid.held, flat_held=flat.held))


# --- the page ------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.latex(r"M_\text{device} = \Psi\left(\frac{p}{D_p} + \frac{g}{D_g} + \frac{k}{D_k}\right), \qquad "
         r"\underbrace{4 + 4 + 8}_\text{float32, Adam} = \underbrace{2 + 2 + 12}_\text{mixed, Adam} = 16")
st.latex(r"C_\text{dp} = 2\Psi g\,\tfrac{D-1}{D}, \quad C_\text{zero1} = \Psi(g+p)\,\tfrac{D-1}{D}, \quad "
         r"C_\text{zero2} = \Psi(Kg+p)\,\tfrac{D-1}{D}, \quad C_\text{zero3} = K\Psi(g+2p)\,\tfrac{D-1}{D}")
st.markdown(T("formulas"))
st.caption(T("lab_vs_paper"))

max_devices = runtime_info().device_count
cols = st.columns(3)
with cols[0]:
    model = url_choice(T, "model", MODELS, "mlp", radio=True)
    strategy = url_choice(T, "strategy", train_config.STRATEGIES, "zero3", radio=True)
    optimizer = url_choice(T, "optimizer", train_config.OPTIMIZERS, "adam", radio=True)
    precision = url_choice(T, "precision", analytic.PRECISIONS, "float32", radio=True)
    grad_dtype = url_choice(T, "grad_dtype", train_config.GRAD_DTYPES, "float32", radio=True)
    compare = url_bool(T, "compare", False)
with cols[1]:
    devices = url_devices(T, max_devices)
    accum = url_int(T, "accum", 1, 1, train_config.MAX_ACCUM_STEPS, slider=False)
    global_batch = url_int(T, "batch", train_config.default_batch(devices, accum), 1, MAX_BATCH, slider=False)
    steps = url_int(T, "steps", 100, 1, MAX_STEPS, slider=False, step=25)
with cols[2]:
    if model == "mlp":
        hidden = url_int(T, "hidden", 64, 1, train_config.MAX_HIDDEN, slider=False)
        features = url_int(T, "features", 16, 1, train_config.MAX_MODEL_FEATURES, slider=False)
    else:  # not the transformer's: TrainConfig's, which it ignores
        hidden, features = train_config.TrainConfig().hidden, train_config.TrainConfig().features
    learning_rate = url_float(T, "lr", 0.01, 1e-6, train_config.MAX_LEARNING_RATE, step=0.005, fmt="%.4g")
    measure_max = url_int(T, "measure_max", max_devices, 1, max_devices, slider=False)
sizes = transformer_settings(T, blocks=False) if model == models.TRANSFORMER else {}  # ZeRO trains 2 blocks
budget_gb = url_float(T, "budget_gb", 80.0, 0.001, 1e6, fmt="%g")
if precision == "mixed":
    st.caption(T("mixed.grad_dtype"))

config = zero_compare.effective(train_config.TrainConfig(
    model=model, devices=devices, global_batch=global_batch, learning_rate=learning_rate, steps=steps, hidden=hidden,
    features=features, chunk=min(CHUNK, steps), impl="jit", optimizer=optimizer, strategy=strategy,
    accum_steps=accum, grad_dtype=grad_dtype, precision=precision, **sizes))
counts = zero_compare.measure_counts(devices, measure_max)
valid = False
with guard(T):
    config = train_plan.validate(config)
    zero_compare.ladder_configs(config, counts)  # the measured runs pass the same checks
    valid = True
    if config.model == models.TRANSFORMER:
        st.caption(T("transformer.measured", psi=transformer.param_count(config.dims, config.layers),
                     layers=config.layers, vocab=config.vocab, ln_vocab=math.log(config.vocab)))
    if config.accum_steps == 1:
        st.caption(T("per_device", batch=config.global_batch, devices=config.devices, per=config.per_device_batch))
    else:
        st.caption(T("per_device.accum", batch=config.global_batch, devices=config.devices, k=config.accum_steps,
                     micro=config.micro_batch))

left, right = st.columns(2)
train_clicked = left.button(T("button.train"), key="sharded_dp.train", type="primary", disabled=not valid)
measure_clicked = right.button(T("button.measure"), key="sharded_dp.measure", disabled=not valid,
                               help=T("button.measure.help", counts=", ".join(map(str, counts))))
if valid and config.model == models.TRANSFORMER:
    command_instead_of_export(T, config)
elif valid:
    export_button(T, lambda: export.sharded_dp_export(config, CHUNK))
with guard(T):
    if train_clicked:
        run_training([config, zero_compare.companion(config)] if compare else [config])
    if measure_clicked:
        st.session_state[MEASURED] = (config, counts)

if LAST_RUN in st.session_state:
    show_run(st.session_state[LAST_RUN], st.session_state.get(LAST_COMM) or [
        zero_compare.step_comm(r.result.config) for r in st.session_state[LAST_RUN]])
with guard(T):
    if MEASURED in st.session_state:
        measured_config, measured_counts = st.session_state[MEASURED]
        measurement = measured(measured_config, measured_counts)
        st.session_state[FOOTPRINTS] = measurement.footprints
        show_measured(measurement, measured_config, budget_gb)
if LAST_RUN not in st.session_state and MEASURED not in st.session_state:
    st.info(T("nothing_yet"), icon="👆")

if valid:
    show_hsdp(config)
    trace_view.trace_panel("sharded_dp", config)
show_code(T, zero_compare.measure_all, zero_compare.step_comm, zero_compare.bytes_per_param_rows,
          analytic.state_bytes, analytic.zero_memory_per_device, analytic.zero_comm_bytes_per_step,
          analytic.largest_model_params, hsdp.hsdp_layouts, hsdp.replica_comm_bytes)
