"""2-D mesh lab: the MLP or the small transformer on a data × model mesh in explicit sharding (Megatron's split
over `model`, data parallelism over `data`), every array's type, the collectives of each mesh axis read from HLO
beside the Scaling Book's table, every shape trained and tracked, this machine's roofline, and sharding in types
(`concepts.mesh_2d`; what is drawn from it: `concepts.mesh_2d_view`)."""

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import background, charts, classroom, heavy_jobs, mesh_2d_work, predicting, trace_view
from labs.ui.blocks import dataframe, export_button, show_code, verbatim
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_float, url_int
from labs.ui.tracking import show_tracking, usable_tracking_uri
from labs.ui.transformer import command_instead_of_export, task_caption, transformer_settings
from labs.ui.visitor import guard
from pmap_core import export
from pmap_core.concepts import mesh_2d, sharding_in_types
from pmap_core.concepts import mesh_2d_view as view
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import config as train_config
from pmap_core.train import loop as training
from pmap_core.train import models, plan, tensor
from pmap_core.validation import MAX_BATCH, MAX_STEPS, LabInputError

T = texts("mesh_2d")
R = texts("classroom")
LAST_RUN = "mesh_2d.last_run"      # session state: TrackedTraining of the last Train
LAST_SWEEP = "mesh_2d.last_sweep"  # session state: SweepShown of the last Measure
GUESS = "mesh_2d.guess"            # the learner's prediction (a shape id), before measuring
RECORDED = "mesh_2d.recorded"      # session state: what became of the guess's record for the class
PREDICT_STEP = "fastest_mesh"      # the guess as a class records it: sheet "mesh_2d", this step
CHUNK = mesh_2d_work.CHUNK
MODELS = ("mlp", models.TRANSFORMER)  # the models impl tensor splits Megatron's way


@dataclasses.dataclass(frozen=True)
class SweepShown:
    """What one Measure click ran: the sweep and where it was tracked, the roofline, and the guess made first."""

    sweep: mesh_2d.MeshSweep
    tracked: object                # TrackedSweep
    roofline: mesh_2d.Roofline | None
    prediction: mesh_2d.Prediction | None
    guess: str
    roofline_error: str | None = None  # why no roofline could be measured (the sweep ran all the same)


# --- cached work: a cache hit never queues; the page's own compiles run in the background -----------------------


def working(what: str, key: tuple) -> None:
    """The ⏳ note of a section whose programs still compile off the page's run; the page shows it once they are."""
    background.wait_for((key,), lambda seconds: st.info(T("working", what=T(what), seconds=seconds), icon="⏳"))


@st.cache_data(show_spinner=False, max_entries=8)
def measured_roofline(devices: int) -> mesh_2d.Roofline:
    """Called only inside a heavy-job slot (the Measure click holds one)."""
    return mesh_2d.roofline(devices)


# --- running ---------------------------------------------------------------------------------------


def loss_chart(losses, model: str):
    frame = pd.DataFrame({"step": np.arange(1, len(losses) + 1), "loss": np.asarray(losses, dtype=float)})
    title = T("axis.loss.cross_entropy") if model == models.TRANSFORMER else T("axis.loss")
    return charts.line(frame, "step", "loss", x_title=T("axis.step"), y_title=title)


def run_training(config: train_config.TrainConfig) -> None:
    uri = usable_tracking_uri(T)
    if uri is None:
        return
    with heavy_jobs.heavy_job(T):
        bar, slot = st.progress(0.0, text=T("progress.compiling")), st.empty()

        def on_chunk(done, losses):
            bar.progress(min(done / config.steps, 1.0), text=T("progress.steps", done=done, total=config.steps))
            slot.altair_chart(loss_chart(losses, config.model), width="stretch")

        tracking = TrackingCallback(Tracker(uri), lab="mesh_2d")
        result = training.train(config, [tracking, training.Progress(on_chunk=on_chunk)], measure_scaling=False)
        bar.empty()
        slot.empty()
    st.session_state[LAST_RUN] = tracking.tracked(result)


def run_sweep(config: train_config.TrainConfig, shapes: list[tuple[int, int]], guess: str) -> None:
    uri = usable_tracking_uri(T)
    if uri is None:
        return
    with heavy_jobs.heavy_job(T):
        bar, slot = st.progress(0.0, text=T("progress.roofline")), st.empty()
        roof, prediction, refused = None, None, None
        try:
            roof = measured_roofline(config.devices)
        except LabInputError as error:  # the sweep still runs; the page says why there is no roofline
            refused = str(error)
        if roof is not None and roof.beta_bytes_per_s is not None and config.model != models.TRANSFORMER:
            prediction = mesh_2d.predicted_winner(roof, shapes, (config.global_batch, config.features, config.hidden))
        bar.progress(0.0, text=T("progress.sweep", done=0, total=len(shapes)))

        def on_run(point, index, total):
            bar.progress((index + 1) / total, text=T("progress.sweep", done=index + 1, total=total))

        def on_chunk(done, losses):
            slot.altair_chart(loss_chart(losses, config.model), width="stretch")

        tracking = TrackingCallback(Tracker(uri), lab="mesh_2d")
        sweep = mesh_2d.sweep_meshes(config, on_run, [tracking, training.Progress(on_chunk=on_chunk)])
        bar.empty()
        slot.empty()
    st.session_state[LAST_SWEEP] = SweepShown(sweep, tracking.tracked_sweep(sweep.sweep), roof, prediction, guess,
                                                refused)
    v = view.verdict(sweep)
    st.session_state[RECORDED] = None
    if v.shapes > 1:  # with a class code, the guess is recorded before the page shows the winner
        right = guess == v.winner
        st.session_state[RECORDED] = predicting.record_attempt(T.page, PREDICT_STEP, guess, v.winner, right,
                                                               {PREDICT_STEP: right})


# --- showing ----------------------------------------------------------------------------------------


def show_program(config: train_config.TrainConfig) -> None:
    """The chosen shape's compiled program (compiled in the background): its arrays' types, its collectives by mesh
    axis, the book's table."""
    key, work, args = mesh_2d_work.program_task(config)
    shown = background.heavy_result(key, work, *args)
    if shown is None:
        working("progress.compiling", key)
        return
    data, model = config.mesh_data, config.mesh_model
    st.subheader(T("types.heading"))
    st.markdown(T("types.explain", data=data, model=model))
    dataframe(T, pd.DataFrame([{"name": name, "type": kind} for name, kind in shown.types.items()]))
    st.subheader(T("comm.heading"))
    transformer = config.model == models.TRANSFORMER
    if any(row.group_size > 1 for row in shown.collectives):
        formula = mesh_2d.comm_formula_bytes(config)
        split, whole = mesh_2d.split_params(config)
        st.markdown(T("comm.explain.transformer" if transformer else "comm.explain", data=data, model=model,
                      model_bytes=shown.bytes_on(mesh_2d.MODEL), data_bytes=shown.bytes_on(mesh_2d.DATA),
                      total=shown.comm_bytes, formula=formula, layers=config.layers, split=split, whole=whole,
                      all_reduces=4 * config.layers if model > 1 else 0))
        gap = shown.comm_bytes - formula
        if gap and abs(gap - mesh_2d.loss_bytes(data)) < 1e-6:  # what the formula leaves out, when it is the loss
            st.markdown(T("comm.loss", gap=gap))
        dataframe(T, pd.DataFrame(view.collective_table(shown)))
    else:
        st.markdown(T("comm.none", data=data, model=model))
    if transformer:
        st.subheader(T("book.heading.transformer"))
        st.markdown(T("book.explain.transformer", batch=config.global_batch, seq_len=config.seq_len,
                      tokens=config.global_batch * config.seq_len, d_model=config.d_model,
                      d_ff=models.transformer.MLP_RATIO * config.d_model, data=data, model=model))
        rows = mesh_2d.transformer_book_rows(config, shown.comm_bytes)
    else:
        st.subheader(T("book.heading"))
        st.markdown(T("book.explain", batch=config.global_batch, features=config.features, hidden=config.hidden,
                      data=data, model=model))
        rows = mesh_2d.scaling_book_rows(config.global_batch, config.features, config.hidden, data, model,
                                         shown.comm_bytes)
    frame = pd.DataFrame(rows)[["strategy", "formula", "bytes_bf16", "bytes_float32", "measured_bytes", "source"]]
    frame.loc[frame.index[-1], "strategy"] = T("book.lab_row")
    dataframe(T, frame)
    st.caption(T("book.note.transformer" if transformer else "book.note"))


def show_run(tracked) -> None:
    result = tracked.result
    cfg = result.config
    st.subheader(T("result.heading", data=cfg.mesh_data, model=cfg.mesh_model, devices=cfg.devices,
                   batch=cfg.global_batch))
    show_tracking(T, tracked, what=T("tracking.run"))
    st.altair_chart(loss_chart(result.losses, cfg.model), width="stretch")
    if result.replicas_identical:
        st.success(T("replicas.same"), icon="✅")
    else:
        st.warning(T("replicas.differ", diff=result.replica_max_diff), icon="❗")
    f = result.footprint
    cols = st.columns(5)
    cols[0].metric(T("metric.throughput"), f"{result.steady_throughput:,.0f}")
    cols[1].metric(T("metric.step_time"), f"{result.steady_step_time_s * 1e6:,.1f} µs")
    cols[2].metric(T("metric.comm_bytes"), f"{f.comm_bytes_per_step:,.0f}")
    cols[3].metric(T("metric.param_bytes"), f"{f.param_bytes_per_device:,}")
    cols[4].metric(T("metric.final_loss"), f"{result.final_loss:.3g}")
    hardware_note(T)


def show_verdict(v: view.Verdict) -> None:
    if v.shapes == 1:
        st.markdown(T("verdict.one_shape", winner=v.winner))
        return
    (w_rdv, s_rdv), (w_bytes, s_bytes), (w_coll, s_coll) = (v.counts[f] for f in view.FACTORS)
    factor = {"rendezvous": T("factor.rendezvous"), "bytes": T("factor.bytes"), "collectives": T("factor.collectives")}
    parts = [T("verdict.head", winner=v.winner, throughput=v.throughput, speedup=v.speedup, slowest=v.slowest),
             T("verdict.compare", slowest=v.slowest, w_bytes=w_bytes, s_bytes=s_bytes, w_coll=w_coll, s_coll=s_coll,
               w_rdv=w_rdv, s_rdv=s_rdv)]
    if not v.separates:
        parts.append(T("verdict.none", winner=v.winner, slowest=v.slowest))
    else:
        parts.append(T("verdict.separates", factors=T("list.sep").join(factor[f] for f in v.separates)))
    if "rendezvous" in v.separates and w_coll == s_coll:  # as many collectives: their arrays differ
        parts.append(T("verdict.operands", w_coll=w_coll, w_rdv=w_rdv, s_rdv=s_rdv))
    if v.simulated and v.separates:
        parts.append(T("verdict.simulated", devices=v.devices, cores=v.cores))
    if v.close:
        parts.append(T("verdict.close", winner=v.winner, lead=v.lead, runner_up=v.runner_up))
    st.markdown(" ".join(parts))


def show_roofline(shown: SweepShown, config: train_config.TrainConfig) -> None:
    roof = shown.roofline
    st.subheader(T("roofline.heading"))
    if roof is None:
        st.warning(T("roofline.refused"), icon="📏")
        verbatim(shown.roofline_error)
        return
    transformer = config.model == models.TRANSFORMER
    width = models.transformer.MLP_RATIO * config.d_model if transformer else config.hidden  # the book's F
    st.markdown(T("roofline.explain.transformer" if transformer else "roofline.explain", size=roof.matmul_size,
                  devices=roof.devices, hidden=width, d_model=config.d_model))
    names = {mesh_2d.BOOK_MACHINES[0][0]: T("roofline.v5p"), mesh_2d.BOOK_MACHINES[1][0]: T("roofline.h100_node"),
             mesh_2d.BOOK_MACHINES[2][0]: T("roofline.h100_beyond")}
    rows = roof.table(width)
    frame = pd.DataFrame(rows)[["machine", "flops_per_s", "bandwidth_bytes_per_s", "value_bytes",
                                "critical_batch_per_device", "tp_bound", "source"]]
    frame["machine"] = [T("roofline.this_machine"), *(names.get(row["machine"], row["machine"]) for row in rows[1:])]
    dataframe(T, frame)
    if roof.beta_bytes_per_s is None:
        st.caption(T("roofline.no_bandwidth"))
        return
    st.markdown(T("roofline.book.transformer" if transformer else "roofline.book", flops=roof.flops_per_s,
                  beta=roof.beta_bytes_per_s, intensity=roof.intensity, critical=roof.critical_batch_per_device,
                  bound=roof.tp_bound(width), hidden=width, d_model=config.d_model))
    if transformer:  # the bounds and the prediction below are derived for the MLP's step only
        st.caption(T("roofline.mlp_only"))
        return
    own = mesh_2d.own_bounds(roof, config.features, config.hidden)
    st.markdown(T("roofline.own", devices=own.devices, per_sample=own.flops_per_sample, c_device=own.device_flops_per_s,
                  critical=own.critical_batch_per_device, tp=own.tp_bound))
    if shown.prediction is not None:
        dp = next(s for s in shown.prediction.shapes if s.model == 1)
        words = {"compute": dp.compute_s * 1e6, "send": dp.send_s * 1e6, "comm": dp.comm_s * 1e6}
        bound_by = {True: T("roofline.compute_bound"), False: T("roofline.comm_bound")}
        st.markdown(T("roofline.regime", data=dp.data, per_device=config.global_batch / dp.data,
                      regime_send=bound_by[dp.compute_s > dp.send_s], regime=bound_by[dp.compute_s > dp.comm_s],
                      compute_bound=sum(s.compute_s > s.comm_s for s in shown.prediction.shapes),
                      shapes=len(shown.prediction.shapes), **words))
        st.markdown(T("prediction.explain", winner=view.shape_id(*shown.prediction.winner),
                      ring=view.shape_id(*shown.prediction.ring_winner)))
        dataframe(T, pd.DataFrame(view.prediction_rows(shown.prediction)))


def show_sweep(shown: SweepShown) -> None:
    sweep = shown.sweep
    st.subheader(T("sweep.heading", devices=sweep.config.devices))
    show_tracking(T, shown.tracked, what=T("tracking.sweep"))
    rows = pd.DataFrame(view.sweep_rows(sweep))
    left, right = st.columns(2)
    left.altair_chart(charts.bar(rows[["shape", "steady_throughput"]], "shape", "steady_throughput",
                                 x_title=T("axis.shape"), y_title=T("axis.throughput"), title=T("chart.throughput")),
                      width="stretch")
    right.altair_chart(charts.bar(pd.DataFrame(view.bytes_by_axis_rows(sweep)), "shape", "bytes",
                                  x_title=T("axis.shape"), y_title=T("axis.bytes"), color="axis",
                                  color_title=T("axis.mesh_axis"), title=T("chart.bytes"), order="order"),
                       width="stretch")
    hardware_note(T)
    dataframe(T, rows)
    v = view.verdict(sweep)
    show_verdict(v)
    if v.shapes > 1:
        predicted = view.shape_id(*shown.prediction.winner) if shown.prediction else "—"
        st.markdown(T("outcome", guess=shown.guess, predicted=predicted, winner=v.winner))
        if shown.guess == v.winner:
            st.success(T("outcome.right"), icon="🎯")
        else:
            st.info(T("outcome.wrong", winner=v.winner), icon="🔎")
        predicting.saw_answer(T.page, PREDICT_STEP)  # from now on this browser's guesses say so
        recorded = st.session_state.get(RECORDED)
        if recorded is not None:
            predicting.show_record(recorded.recorded, recorded.error, recorded.no_code, recorded.after_answer)
    if sweep.skipped:
        skipped_caption(sweep.config, sweep.skipped)
    show_roofline(shown, sweep.config)


def show_sharding_in_types(devices: int, k: int) -> None:
    st.header(T("types_section.heading"))
    st.markdown(T("types_section.intro", devices=devices))
    key, work, args = mesh_2d_work.types_task(devices, k)
    examples = background.heavy_result(key, work, *args)
    if examples is None:
        working("types_section.compiling", key)
        return
    dot, axes, accum = examples
    st.subheader(T("dot.heading"))
    if dot.error_type:
        st.markdown(T("dot.explain", lhs=dot.lhs_type, rhs=dot.rhs_type, kind=dot.error_type))
        verbatim(dot.error_text)  # JAX's message
    else:
        st.markdown(T("dot.no_error"))
    st.markdown(T("dot.choices"))

    def sent(choice) -> str:
        return ", ".join(c.kind + (f" ({T('sliced')})" if c.sliced_after else "") for c in choice.collectives) \
            or T("none")

    dataframe(T, pd.DataFrame([{"out_sharding": c.out_sharding, "result_type": c.result_type,
                                "per_device_shape": str(c.per_device_shape) if c.per_device_shape else "",
                                "collectives_hlo": sent(c), "max_error": c.max_error, "error": c.error or ""}
                               for c in dot.choices]))
    sliced = [c.out_sharding for c in dot.choices if any(h.sliced_after for h in c.collectives)]
    if sliced:
        st.markdown(T("dot.sliced", specs=", ".join(f"`{spec}`" for spec in sliced)))
    unreduced = next(c for c in dot.choices if "unreduced" in c.out_sharding)
    if unreduced.error:
        st.markdown(T("dot.unreduced_refused"))
        verbatim(unreduced.error)  # JAX's message
    else:
        st.markdown(T("dot.unreduced_read"))
    st.markdown(T("dot.silent", silent_lhs=dot.lhs_type.replace("@X", ""), rhs=dot.rhs_type,
                  collectives=sent(dot.silent_gather)))
    st.subheader(T("axes.heading"))
    st.markdown(T("axes.explain"))
    dataframe(T, pd.DataFrame([{"code": r.code, "concrete": r.concrete, "typed": r.typed} for r in axes]))
    st.subheader(T("accum.heading"))
    st.markdown(T("accum.explain", k=accum.micro_batches, devices=accum.devices, weight_type=accum.weight_type,
                  gradient_type=accum.gradient_type))
    if accum.error:
        st.markdown(T("accum.error"))
        verbatim(accum.error)
    elif accum.devices == 1:
        st.markdown(T("accum.one_device", replicated=accum.replicated_all_reduces, reduced=accum.reduced_all_reduces))
    else:
        st.markdown(T("accum.result", replicated=accum.replicated_all_reduces, reduced=accum.reduced_all_reduces,
                      difference=accum.max_difference, error=accum.max_error))


def skipped_caption(config: train_config.TrainConfig, skipped) -> None:
    """The shapes of D whose model axis does not divide what it splits, and why."""
    key = "skipped.transformer" if config.model == models.TRANSFORMER else "skipped"
    st.caption(T(key, devices=config.devices, hidden=config.hidden, heads=config.heads,
                 shapes=", ".join(view.shape_id(*s) for s in skipped)))


def shape_choice(shapes: list[tuple[int, int]], base: train_config.TrainConfig, devices: int) -> tuple[int, int]:
    """The mesh shape, kept in the link; a shape of another D (D just changed) becomes this D's default. A link
    naming a shape of D whose model axis does not divide what it splits says why (mesh_not_divisible), once,
    and starts from the default."""
    options, default = [view.shape_id(*s) for s in shapes], view.shape_id(*view.default_shape(shapes))
    key = f"{T.page}.mesh"
    asked = st.query_params.get("mesh")
    if key not in st.session_state and asked and asked not in options:
        data, _, model = asked.partition("x")
        if data.isdigit() and model.isdigit() and int(data) * int(model) == devices:
            with guard(T):
                view.tensor_config(base, int(data), int(model))
            st.query_params["mesh"] = default
    if GUESS in st.session_state and st.session_state[GUESS] not in options:
        st.session_state[GUESS] = None
    return view.parse_shape(url_choice(T, "mesh", options, default))


# --- the page ------------------------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
max_devices = runtime_info().device_count
model_name = url_choice(T, "model", MODELS, mesh_2d_work.DEFAULT_MODEL, radio=True)
if model_name == models.TRANSFORMER:
    st.markdown(T("intro.transformer"))
    st.latex(r"\text{per block: } \textstyle\sum_Y \text{attn}_Y(h)\,W_O^Y,\ \ \sum_Y \text{gelu}(h\,W_1^Y)\,W_2^Y"
             r"\quad(\text{2 all-reduces over } Y \text{ forward, 2 backward})")
    st.latex(r"C_\text{step} = 4L\cdot\tfrac{2(Y-1)}{Y}\cdot\tfrac{B}{X}\,S\,d\cdot 4 \;+\; "
             r"\tfrac{2(X-1)}{X}\cdot\left(\tfrac{\Psi_\text{split}}{Y} + \Psi_\text{whole}\right)\cdot 4")
    st.caption(T("formulas.transformer"))
else:
    st.latex(r"h = \tanh(x\,W_1 + b_1)\ :\ [B_X, H_Y], \qquad \text{out} = \textstyle\sum_Y h\,w_2 + b_2\ :\ [B_X]"
             r"\quad(\text{one all-reduce over } Y)")
    st.latex(r"C_\text{step} = \tfrac{2(Y-1)}{Y}\cdot\tfrac{B}{X}\cdot 4 \;+\; "
             r"\tfrac{2(X-1)}{X}\cdot\left(\tfrac{IH}{Y} + \tfrac{2H}{Y} + 1\right)\cdot 4")
    st.caption(T("formulas"))
hardware_note(T)

cols = st.columns(3)
with cols[0]:
    devices = url_devices(T, max_devices)
    if model_name == "mlp":  # the transformer's widths are its own (below)
        hidden = url_int(T, "hidden", mesh_2d_work.default_hidden(devices), 1, train_config.MAX_HIDDEN, slider=False)
with cols[1]:
    if model_name == "mlp":
        features = url_int(T, "features", mesh_2d_work.DEFAULT_FEATURES, 1, train_config.MAX_MODEL_FEATURES,
                           slider=False)
    global_batch = url_int(T, "batch", mesh_2d_work.default_batch(devices), 1, MAX_BATCH, slider=False)
with cols[2]:
    steps = url_int(T, "steps", mesh_2d_work.DEFAULT_STEPS, 1, MAX_STEPS, slider=False, step=25)
    learning_rate = url_float(T, "lr", mesh_2d_work.DEFAULT_LEARNING_RATE, 1e-6, train_config.MAX_LEARNING_RATE,
                              step=0.01, fmt="%.4g")
    k = url_int(T, "accum", mesh_2d_work.DEFAULT_ACCUM, 1, sharding_in_types.MAX_ACCUM, slider=False)
sizes = {}
if model_name == models.TRANSFORMER:
    sizes = transformer_settings(T)
    task_caption(T, sizes["vocab"], train_config.default_learning_rate(model_name, 0))
    hidden, features = train_config.TrainConfig().hidden, train_config.TrainConfig().features  # not the transformer's

config, shapes = None, []
with guard(T):
    base = mesh_2d_work.base_config(model_name, devices, global_batch, learning_rate, steps, hidden, features, sizes)
    plan.validate(base)  # heads that do not divide d_model are refused before any shape is drawn
    shapes = mesh_2d.mesh_shapes(devices, mesh_2d.split_size(base))
    data, model = shape_choice(shapes, base, devices)
    config = view.tensor_config(base, data, model)
    if model_name == models.TRANSFORMER:
        st.caption(T("per_device.transformer", data=data, model=model, rows=config.global_batch // data,
                     batch=config.global_batch, heads=config.heads // model, all_heads=config.heads,
                     cols=models.transformer.MLP_RATIO * config.d_model // model,
                     width=models.transformer.MLP_RATIO * config.d_model))
    else:
        st.caption(T("per_device", data=data, model=model, rows=config.global_batch // data,
                     batch=config.global_batch, cols=config.hidden // model, hidden=config.hidden))
    if devices == 1:
        st.info(T("one_device"), icon="1️⃣")
    elif not view.two_axes_possible(devices):
        st.info(T("one_axis", devices=devices, shapes=", ".join(view.shape_id(*s) for s in shapes)), icon="📐")
    skipped = [(devices // m, m) for m in range(1, devices + 1) if devices % m == 0 and (devices // m, m) not in shapes]
    if skipped:
        skipped_caption(config, skipped)

train_clicked = st.button(T("button.train"), key="mesh_2d.train", disabled=config is None)
if config is not None and config.model == models.TRANSFORMER:
    command_instead_of_export(T, config)
elif config is not None:
    export_button(T, lambda: export.mesh_2d_export(config, CHUNK))
with guard(T):
    if train_clicked:
        run_training(config)
if LAST_RUN in st.session_state:
    show_run(st.session_state[LAST_RUN])
if config is not None:
    with guard(T):
        show_program(config)

st.header(T("predict.heading"))
classroom.identity_form(T.page)  # whether the guess is recorded for a class, said plainly
st.caption(R("no_controls"))
st.markdown(T("predict.body"))
guess = None
if devices == 1:
    st.info(T("predict.one_device"), icon="1️⃣")
elif config is not None:
    guess = st.radio(T("w.guess"), [view.shape_id(*s) for s in shapes], index=None, key=GUESS, horizontal=True)
    if guess is None:
        st.caption(T("predict.first"))
sweep_clicked = st.button(T("button.sweep"), key="mesh_2d.sweep", disabled=guess is None,
                          help=T("button.sweep.help"))
with guard(T):
    if sweep_clicked:
        run_sweep(config, shapes, guess)
if LAST_SWEEP in st.session_state:
    with guard(T):
        show_sweep(st.session_state[LAST_SWEEP])
if LAST_RUN not in st.session_state and LAST_SWEEP not in st.session_state:
    st.info(T("nothing_yet"), icon="👆")

with guard(T):
    show_sharding_in_types(devices, k)

if config is not None:
    trace_view.trace_panel("mesh_2d", config)
show_code(T, tensor.loss, tensor.chunk, mesh_2d.collective_rows, mesh_2d.sweep_meshes, mesh_2d.predicted_winner,
          sharding_in_types.ambiguous_dot, sharding_in_types.reduced_accumulation)
