"""Sharded data parallel lab: ZeRO-1/2/3 (FSDP), gradient accumulation and bfloat16 gradients, trained live
and measured on this machine's devices beside the formulas of `costmodel`."""

import dataclasses

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import charts, heavy_jobs
from labs.ui.blocks import dataframe, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_bool, url_choice, url_devices, url_float, url_int
from labs.ui.tracking import show_tracking, usable_tracking_uri
from labs.ui.visitor import guard
from pmap_core.concepts import sharded_dp as zero_compare
from pmap_core.costs import analytic
from pmap_core.runtime import device_ladder
from pmap_core.tracking.callback import TrackedTraining, TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import config as train_config
from pmap_core.train import loop as training
from pmap_core.validation import MAX_BATCH, MAX_STEPS

T = texts("sharded_dp")
LAST_RUN = "sharded_dp.last_run"  # session state: [TrackedTraining] (two when float32 and bfloat16 are compared)
MEASURED = "sharded_dp.measured"  # session state: the settings this session measured (results in the cache)
FOOTPRINTS = "sharded_dp.footprints"  # session state: the footprints the charts were drawn from
CHUNK = train_config.TrainConfig().chunk  # steps per compiled call, as on the training page


@st.cache_data(show_spinner=False, max_entries=16)
def measured(config: train_config.TrainConfig, counts: tuple[int, ...]) -> tuple:
    """Every strategy at every D of `counts`; a cache hit never queues."""
    with heavy_jobs.heavy_job(T):
        total = len(zero_compare.ladder_configs(config, counts))
        bar = st.progress(0.0, text=T("progress.measure", done=0, total=total))
        result = zero_compare.measure_all(config, counts, lambda done, total: bar.progress(
            done / total, text=T("progress.measure", done=done, total=total)))
        bar.empty()
    return result


def loss_chart(runs: list[TrackedTraining]) -> alt.Chart:
    frame = pd.concat([pd.DataFrame({"step": np.arange(1, len(r.result.losses) + 1), "loss": r.result.losses,
                                     "grad_dtype": r.result.config.grad_dtype}) for r in runs])
    chart = charts.line(frame, "step", "loss", x_title=T("axis.step"), y_title=T("axis.loss"), color="grad_dtype",
                        color_title=T("w.grad_dtype"))
    scale = alt.Scale(type="log" if bool((frame["loss"] > 0).all()) else "linear")
    return chart.encode(y=alt.Y("loss:Q", title=T("axis.loss"), scale=scale))


def run_training(configs: list[train_config.TrainConfig]) -> None:
    uri = usable_tracking_uri(T)
    if uri is None:
        return
    done = []
    with heavy_jobs.heavy_job(T):
        total = sum(c.steps for c in configs)
        bar, slot = st.progress(0.0, text=T("progress.compiling")), st.empty()
        for config in configs:
            before = sum(c.steps for c in configs[:len(done)])

            def on_chunk(steps_done, losses, before=before, config=config):
                bar.progress(min((before + steps_done) / total, 1.0),
                             text=T("progress.steps", done=before + steps_done, total=total, dtype=config.grad_dtype))
                slot.altair_chart(charts.line(pd.DataFrame({"step": np.arange(1, len(losses) + 1), "loss": losses}),
                                              "step", "loss", x_title=T("axis.step"), y_title=T("axis.loss")),
                                  width="stretch")

            tracking = TrackingCallback(Tracker(uri), lab="sharded_dp")
            result = training.train(config, [tracking, training.Progress(on_chunk=on_chunk)], measure_scaling=False)
            done.append(tracking.tracked(result))
        bar.empty()
        slot.empty()
    st.session_state[LAST_RUN] = done


def footprint_table(f) -> None:
    rows = [(T(f"kind.{k}"), zero_compare.held(f)[k], zero_compare.modelled(f)[k]) for k in zero_compare.KINDS]
    rows.append((T("kind.comm"), f.comm_bytes_per_step, f.model_comm_bytes_per_step))
    dataframe(T, pd.DataFrame([{"figure": name, "measured": float(m), "model": float(mo),
                                   "ratio": (m / mo if mo else None)} for name, m, mo in rows]))


def show_run(runs: list[TrackedTraining]) -> None:
    main = runs[0].result
    cfg, f = main.config, main.footprint
    st.subheader(T("result.heading", strategy=T(f"w.strategy.{cfg.strategy}"), devices=cfg.devices,
                   psi=f.param_count, accum=cfg.accum_steps, dtype=cfg.grad_dtype))
    for tracked in runs:
        show_tracking(T, tracked, dtype=tracked.result.config.grad_dtype)
    st.altair_chart(loss_chart(runs), width="stretch")
    if len(runs) == 2:
        other = runs[1].result
        st.markdown(T("compare.losses", f32=main.final_loss, bf16=other.final_loss,
                      diff=abs(other.final_loss - main.final_loss) / abs(main.final_loss), steps=cfg.steps))
    footprint_table(f)
    if cfg.devices == 1:
        st.info(T("one_device", total=zero_compare.total_bytes(f), psi=f.param_count), icon="1️⃣")
    dataframe(T, pd.DataFrame([{"collective": k, "bytes": v} for k, v in f.comm_by_kind.items()]))
    gather = f.comm_by_kind.get("all-gather", 0.0)
    if cfg.strategy == "zero3" and cfg.devices > 1:
        gathers = gather / (f.param_count * 4 * (cfg.devices - 1) / cfg.devices)
        st.markdown(T("zero3.gathers", gathers=gathers, ratio=f.comm_bytes_per_step / f.model_comm_bytes_per_step))
        if gathers < 1.5:  # measured: one gather where the model counts two
            st.markdown(T("zero3.kept"))
    st.subheader(T("accum.heading"))
    loop = T("accum.outside") if f.deepest_loop < 2 else T("accum.inside")
    st.markdown(T("accum.measured", k=cfg.accum_steps, micro=cfg.micro_batch, per=cfg.per_device_batch,
                  reductions=f.reductions_per_step, loop=loop, temp=f.compiled_memory.get("temp_size_in_bytes", 0)))
    st.markdown(T("accum.explain", batch=cfg.global_batch, devices=cfg.devices, k=cfg.accum_steps,
                  micro=cfg.micro_batch))
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


def show_measured(footprints, config: train_config.TrainConfig, budget_gb: float) -> None:
    st.subheader(T("all.heading"))
    st.caption(T("all.settings", psi=footprints[0].param_count, hidden=config.hidden, features=config.features,
                 optimizer=config.optimizer, batch=config.global_batch, k=config.accum_steps, dtype=config.grad_dtype,
                 counts=", ".join(str(d) for d in sorted({f.devices for f in footprints}))))
    memory = pd.DataFrame(zero_compare.memory_rows(footprints))
    memory["part"] = memory["kind"].map(lambda k: T(f"kind.{k}"))
    memory["model_total"] = memory.groupby(["strategy", "D"])["model"].transform("sum")
    bars = alt.Chart().mark_bar().encode(
        x=alt.X("D:O", title=T("axis.devices")), y=alt.Y("measured:Q", stack="zero", title=T("axis.bytes_device")),
        color=alt.Color("part:N", title=None), tooltip=["strategy", "D", "part", "measured", "model"])
    model = alt.Chart().mark_point(shape="diamond", filled=True, color="black", size=60).encode(
        x="D:O", y="model_total:Q", tooltip=["strategy", "D", "model_total"])
    st.altair_chart(alt.layer(bars, model, data=memory).properties(width=140, height=260).facet(
        column=alt.Column("strategy:N", title=None, sort=list(train_config.STRATEGIES)), title=T("chart.memory")))
    st.caption(T("chart.memory.note"))
    comm = pd.DataFrame(zero_compare.comm_rows(footprints)).melt(id_vars=["strategy", "D"], var_name="source",
                                                                  value_name="bytes")
    comm["series"] = comm["strategy"] + " · " + comm["source"].map(lambda s: T(f"series.{s}"))
    st.altair_chart(alt.Chart(comm).mark_line(point=True).encode(
        x=alt.X("D:Q", title=T("axis.devices")), y=alt.Y("bytes:Q", title=T("axis.bytes_step")),
        color=alt.Color("strategy:N", title=None), strokeDash=alt.StrokeDash("source:N", title=None),
        tooltip=["series", "D", "bytes"]).properties(title=T("chart.comm"), height=300), width="stretch")
    ones = [f for f in footprints if f.devices == 1]
    if ones and len({zero_compare.total_bytes(f) for f in ones}) == 1:
        st.caption(T("all.one_device", total=zero_compare.total_bytes(ones[0])))
    worst = zero_compare.worst_ratio(footprints)
    if worst is not None:
        st.caption(T("all.worst", strategy=worst[0].strategy, devices=worst[0].devices, figure=T(f"ratio.{worst[1]}"),
                     ratio=worst[2]))
    fits = zero_compare.largest_models(footprints, budget_gb * 1e9, config.devices, config.optimizer)
    st.subheader(T("fit.heading", budget=budget_gb, devices=fits[0].devices))
    dataframe(T, pd.DataFrame([{"strategy": x.strategy, "bytes_per_param": x.measured_bytes_per_param,
                                   "model_bytes_per_param": x.model_bytes_per_param,
                                   "largest_measured_b": x.largest_measured / 1e9,
                                   "largest_model_b": x.largest_model / 1e9,
                                   "ratio": x.ratio} for x in fits]))
    st.caption(T("fit.note"))


# --- the page ------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.latex(r"M_\text{device} = \Psi\left(\frac{p}{D_p} + \frac{g}{D_g} + \frac{k}{D_k}\right)")
st.latex(r"C_\text{dp} = 2\Psi g\,\tfrac{D-1}{D}, \quad C_\text{zero2} = \Psi(g+p)\tfrac{D-1}{D}, \quad "
         r"C_\text{zero3} = \Psi(g+2p)\tfrac{D-1}{D}")
st.markdown(T("formulas"))

max_devices = runtime_info().device_count
cols = st.columns(3)
with cols[0]:
    strategy = url_choice(T, "strategy", train_config.STRATEGIES, "zero3", radio=True)
    optimizer = url_choice(T, "optimizer", train_config.OPTIMIZERS, "adam", radio=True)
    grad_dtype = url_choice(T, "grad_dtype", train_config.GRAD_DTYPES, "float32", radio=True)
    compare = url_bool(T, "compare", False)
with cols[1]:
    devices = url_devices(T, max_devices)
    accum = url_int(T, "accum", 1, 1, train_config.MAX_ACCUM_STEPS, slider=False)
    global_batch = url_int(T, "batch", 256, 1, MAX_BATCH, slider=False)
    steps = url_int(T, "steps", 100, 1, MAX_STEPS, slider=False, step=25)
with cols[2]:
    hidden = url_int(T, "hidden", 64, 1, train_config.MAX_HIDDEN, slider=False)
    features = url_int(T, "features", 16, 1, train_config.MAX_MODEL_FEATURES, slider=False)
    learning_rate = url_float(T, "lr", 0.01, 1e-6, train_config.MAX_LEARNING_RATE, step=0.005, fmt="%.4g")
    measure_max = url_int(T, "measure_max", max_devices, 1, max_devices, slider=False)
budget_gb = url_float(T, "budget_gb", 80.0, 0.001, 1e6, fmt="%g")

config = train_config.TrainConfig(model="mlp", devices=devices, global_batch=global_batch, learning_rate=learning_rate,
                                  steps=steps, hidden=hidden, features=features, chunk=min(CHUNK, steps), impl="jit",
                                  optimizer=optimizer, strategy=strategy, accum_steps=accum, grad_dtype=grad_dtype)
counts = tuple(device_ladder(measure_max))
valid = False
with guard(T):
    config = train_config.validate(config)
    zero_compare.ladder_configs(config, counts)  # the measured runs pass the same checks
    valid = True
    st.caption(T("per_device", batch=config.global_batch, devices=config.devices, k=config.accum_steps,
                 micro=config.micro_batch))

left, right = st.columns(2)
train_clicked = left.button(T("button.train"), key="sharded_dp.train", type="primary", disabled=not valid)
measure_clicked = right.button(T("button.measure"), key="sharded_dp.measure", disabled=not valid,
                               help=T("button.measure.help", counts=", ".join(map(str, counts))))
with guard(T):
    if train_clicked:
        other = "bfloat16" if grad_dtype == "float32" else "float32"
        pair = [config, dataclasses.replace(config, grad_dtype=other)] if compare else [config]
        run_training(sorted(pair, key=lambda c: c.grad_dtype != "float32"))
    if measure_clicked:
        st.session_state[MEASURED] = (config, counts)

if LAST_RUN in st.session_state:
    show_run(st.session_state[LAST_RUN])
with guard(T):
    if MEASURED in st.session_state:
        measured_config, measured_counts = st.session_state[MEASURED]
        st.session_state[FOOTPRINTS] = measured(measured_config, measured_counts)
        show_measured(st.session_state[FOOTPRINTS], measured_config, budget_gb)
if LAST_RUN not in st.session_state and MEASURED not in st.session_state:
    st.info(T("nothing_yet"), icon="👆")

show_code(T, zero_compare.measure_all, zero_compare.largest_models, analytic.zero_memory_per_device,
             analytic.zero_comm_bytes_per_step, analytic.largest_model_params)
