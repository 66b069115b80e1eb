"""Context parallelism lab: the transformer's positions split over a seq axis of P devices (`train.context`, impl
context), three ways for attention to reach the other positions — K and V all-gathered, ring attention, DeepSpeed-
Ulysses. The ring's schedule as the program runs it, each device's causal work for contiguous and zig-zag blocks,
then — after a prediction — one compiled step per scheme (bytes by collective from the HLO beside the formula's,
residuals, peak, loss beside one device's), a sweep of the residuals over sequence lengths, and when to choose which
(`concepts.context`). Nothing heavy runs before a button is pressed."""

import dataclasses

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts, classroom, heavy_jobs, predicting, trace_view
from labs.ui.blocks import dataframe, show_code
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_int
from labs.ui.visitor import guard, input_error_text
from pmap_core.concepts import context as cp
from pmap_core.costs import analytic
from pmap_core.train import context, transformer

T = texts("context_parallel")
LAST = "context_parallel.last"          # session state: Run of the last Measure click
SWEPT = "context_parallel.swept"        # session state: (Settings, sweeps) of the last Sweep click
GUESS = "context_parallel.guess"        # the learner's prediction, before measuring
RECORDED = "context_parallel.recorded"  # what became of the guess's record for the class
PREDICT_STEP = "ring_bytes"             # the guess as a class records it: sheet "context_parallel", this step
ANSWERS = (cp.FEWER, cp.SAME, cp.MORE)
FORMULA_WITHIN = 0.05                   # the HLO's bytes "match" the formula's within 5%
# Bytes per device per layer and step, forward and backward (costs.analytic.context_comm_terms), shown with the answer.
FORMULA = (r"S_{\mathrm{blk}} = \frac{B}{X}\cdot\frac{s}{P}\cdot d\cdot 4\ \text{bytes} \qquad "
           r"\text{all-gather: } 4(P-1)\,S_{\mathrm{blk}} \qquad \text{ring: } 4(P-1)\,S_{\mathrm{blk}} \qquad "
           r"\text{Ulysses: } \frac{8(P-1)}{P}\,S_{\mathrm{blk}}")


@dataclasses.dataclass(frozen=True)
class Run:
    """What one Measure click ran, at which settings, and the prediction made before it."""

    settings: cp.Settings
    measurement: cp.Measurement
    answer: str
    guess: str


def answer_labels() -> dict[str, str]:
    return {cp.FEWER: T("answer.fewer"), cp.SAME: T("answer.same"), cp.MORE: T("answer.more")}


def scheme_labels() -> dict[str, str]:
    return {"allgather": T("scheme.allgather"), "ring": T("scheme.ring"), "ulysses": T("scheme.ulysses"),
            cp.ONE_DEVICE: T("scheme.one")}


def layout_labels() -> dict[str, str]:
    return {"contiguous": T("w.layout.contiguous"), "zigzag": T("w.layout.zigzag")}


def span(chunks: tuple[int, ...], size: int) -> str:
    """The positions of a block's chunks: "0–7" or "0–3, 28–31"."""
    return ", ".join(f"{c * size}–{(c + 1) * size - 1}" for c in chunks)


# --- 1. the ring's schedule ---------------------------------------------------------------------------


def schedule_rows(schedule: cp.RingSchedule, seq_len: int) -> list[dict]:
    """Every (step, device): the block it holds and folds in, its positions, and where it passes it next."""
    size = seq_len // context.chunk_count(schedule.devices, schedule.layout)
    passes_to = dict(schedule.pairs)
    last = len(schedule.blocks) - 1
    return [{"step": step, "device": device, "block": block, "positions": span(schedule.chunks[block], size),
             "passes_to": str(passes_to[device]) if step < last else "—"}
            for step, held in enumerate(schedule.blocks) for device, block in enumerate(held)]


def show_schedule(settings: cp.Settings) -> None:
    p, s = settings.devices, settings.dims.seq_len
    schedule = cp.ring_schedule(p, settings.layout)
    rows = schedule_rows(schedule, s)
    names = [T("block.label", block=b) for b in range(p)]
    frame = pd.DataFrame([{**row, "block_label": names[row["block"]]} for row in rows])
    st.altair_chart(charts.heatmap(frame, "step", "device", "block_label", x_title=T("axis.step"),
                                   y_title=T("chart.device"), value_title=T("axis.block"), title=T("chart.timeline"),
                                   text="block_label", by_device=True, categories=names), width="stretch")
    dataframe(T, pd.DataFrame(rows))
    steps = len(schedule.blocks)
    every = all(sorted(held[d] for held in schedule.blocks) == list(range(p)) for d in range(p))
    st.markdown(T("schedule.explain" if every else "schedule.incomplete", steps=steps, passes=steps - 1, p=p,
                  last=p - 1))
    if settings.layout == "zigzag":
        st.markdown(T("schedule.zigzag", p=p, chunks=2 * p, last_chunk=2 * p - 1,
                      first=span(schedule.chunks[0], s // (2 * p))))


# --- 2. the causal work -------------------------------------------------------------------------------


def show_work(settings: cp.Settings) -> None:
    p, s = settings.devices, settings.dims.seq_len
    labels = layout_labels()
    layouts = [layout for layout in cp.LAYOUTS if s % context.chunk_count(p, layout) == 0]
    work = {layout: cp.work_per_device(s, p, layout) for layout in layouts}
    frame = pd.DataFrame([{"device": d, "layout": labels[layout], "pairs": pairs}
                          for layout in layouts for d, pairs in enumerate(work[layout])])
    order = [labels[layout] for layout in layouts]
    st.altair_chart(alt.Chart(frame, title=T("chart.work")).mark_bar().encode(
        x=alt.X("device:O", title=T("chart.device")),
        xOffset=alt.XOffset("layout:N", sort=order),
        y=alt.Y("pairs:Q", title=T("axis.pairs")),
        color=alt.Color("layout:N", title=T("axis.layout"), sort=order, scale=alt.Scale(scheme=charts.DEVICE_SCHEME)),
        tooltip=charts.tooltips(frame)), width="stretch")
    contiguous = work["contiguous"]
    st.markdown(T("work.contiguous", total=sum(contiguous), most=max(contiguous), least=min(contiguous),
                  ratio=max(contiguous) / min(contiguous), last=p - 1))
    if "zigzag" not in work:
        st.caption(T("work.no_zigzag", s=s, chunks=2 * p))
        return
    zigzag = work["zigzag"]
    ratio = max(zigzag) / min(zigzag)
    st.markdown(T("work.zigzag_even" if ratio == 1 else "work.zigzag_uneven", each=zigzag[0], most=max(zigzag),
                  least=min(zigzag), ratio=ratio))
    st.caption(T("work.dense"))


# --- 3. predict, then measure ---------------------------------------------------------------------------


def run_measure(settings: cp.Settings, guess: str) -> None:
    labels = scheme_labels()
    runs = [s for s, refused in cp.schemes_for(settings).items() if refused is None] + [cp.ONE_DEVICE]
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.measure", scheme=labels[runs[0]]))

        def on_scheme(name: str) -> None:
            bar.progress(runs.index(name) / len(runs), text=T("progress.measure", scheme=labels[name]))

        measurement = cp.measured(settings, on_scheme)
        bar.empty()
    answer = cp.ring_vs_allgather(measurement)
    st.session_state[LAST] = Run(settings, measurement, answer, guess)
    right = guess == answer  # with a class code, the guess is recorded before the page shows the answer
    st.session_state[RECORDED] = predicting.record_attempt(T.page, PREDICT_STEP, guess, answer, right,
                                                           {PREDICT_STEP: right})


def collective_rows(measurement: cp.Measurement) -> list[dict]:
    labels = scheme_labels()
    rows = []
    for scheme, step in measurement.steps.items():
        for kind in sorted(set(step.comm_by_kind) | set(step.formula_by_kind)):
            hlo, formula = step.comm_by_kind.get(kind, 0.0), step.formula_by_kind.get(kind, 0.0)
            rows.append({"scheme": labels[scheme], "collective": kind, "hlo_bytes": hlo, "formula_bytes": formula,
                         "hlo_vs_formula": hlo / formula if formula else None})
    return rows


def scheme_rows(measurement: cp.Measurement) -> list[dict]:
    labels, reference = scheme_labels(), measurement.reference_loss
    return [{"scheme": labels[scheme], "attention_bytes": cp.attention_bytes(step.comm_by_kind),
             "formula_attention_bytes": cp.attention_bytes(step.formula_by_kind),
             "all_reduce_bytes": step.comm_by_kind.get("all-reduce", 0.0), "comm_bytes": step.comm_bytes,
             "loss": step.loss, "loss_gap": abs(step.loss - reference) / reference,
             "residual_bytes": step.residual_bytes, "peak_bytes": step.peak_bytes}
            for scheme, step in measurement.steps.items()]


def bytes_chart(measurement: cp.Measurement) -> alt.Chart:
    labels = scheme_labels()
    frame = pd.DataFrame([{"scheme": labels[scheme], "collective": kind, "bytes": value}
                          for scheme, step in measurement.steps.items() for kind, value in step.comm_by_kind.items()])
    return alt.Chart(frame, title=T("chart.measure")).mark_bar().encode(
        x=alt.X("scheme:N", title=T("axis.scheme"), sort=[labels[s] for s in measurement.steps]),
        y=alt.Y("bytes:Q", title=T("axis.bytes")),
        color=alt.Color("collective:N", title=T("axis.collective"), scale=alt.Scale(scheme=charts.DEVICE_SCHEME)),
        tooltip=charts.tooltips(frame))


def show_measured(run: Run) -> None:
    measurement, labels, p = run.measurement, scheme_labels(), run.settings.devices
    predicting.show_outcome(T, PREDICT_STEP, run.guess, run.answer, answer_labels(), st.session_state.get(RECORDED))
    st.latex(FORMULA)
    st.caption(T("formulas"))
    st.altair_chart(bytes_chart(measurement), width="stretch")
    dataframe(T, pd.DataFrame(scheme_rows(measurement)))
    dataframe(T, pd.DataFrame(collective_rows(measurement)))
    steps = measurement.steps
    ring, gathered = (cp.attention_bytes(steps[s].comm_by_kind) for s in ("ring", "allgather"))
    key = ("measure.ring_same" if run.answer == cp.SAME else "measure.ring_fewer" if run.answer == cp.FEWER
           else "measure.ring_more")
    st.markdown(T(key, ring=ring, allgather=gathered, ratio=ring / gathered, p=p, layers=run.settings.layers))
    if "ulysses" in steps:
        ulysses = cp.attention_bytes(steps["ulysses"].comm_by_kind)
        ratio = gathered / ulysses
        key = ("measure.ulysses_off" if abs(ratio - p / 2) > 0.02 * p / 2 else
               "measure.ulysses_equal" if abs(ratio - 1) <= 0.02 else "measure.ulysses")
        st.markdown(T(key, ulysses=ulysses, allgather=gathered, ratio=ratio, half=p / 2, p=p))
    worst = max(abs(row["hlo_vs_formula"] - 1) for row in collective_rows(measurement)
                if row["hlo_vs_formula"] is not None)
    key = ("measure.formula_exact" if worst == 0 else "measure.formula_match" if worst <= FORMULA_WITHIN
           else "measure.formula_off")
    st.markdown(T(key, worst=worst, within=FORMULA_WITHIN))
    gap = cp.loss_gap(measurement)
    key = "measure.loss_equal" if gap == 0 else "measure.loss_same" if gap < 1e-5 else "measure.loss_differs"
    st.markdown(T(key, gap=gap, reference=measurement.reference_loss, schemes=len(steps)))
    kept = {scheme: step.residual_bytes for scheme, step in steps.items()}
    most, least = max(kept, key=kept.get), min(kept, key=kept.get)
    st.markdown(T("measure.residuals", most=labels[most], most_bytes=kept[most], least=labels[least],
                  least_bytes=kept[least]))
    if any(step.peak_bytes is None for step in steps.values()):
        st.caption(T("measure.no_peak"))


# --- 4. sweep -----------------------------------------------------------------------------------------


def run_sweep(settings: cp.Settings) -> None:
    labels = scheme_labels()
    names = [cp.ONE_DEVICE, *(s for s, refused in cp.schemes_for(settings).items() if refused is None)]
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.sweep", scheme=labels[names[0]]))

        def on_scheme(name: str) -> None:
            bar.progress(names.index(name) / len(names), text=T("progress.sweep", scheme=labels[name]))

        sweeps = cp.sweep_residuals(settings, on_scheme)
        bar.empty()
    st.session_state[SWEPT] = (settings, sweeps)


def show_sweep(settings: cp.Settings, sweeps: tuple[cp.ResidualSweep, ...]) -> None:
    labels, p = scheme_labels(), settings.devices
    points = pd.DataFrame([{"seq_len": s, "bytes": value, "scheme": labels[sw.scheme]}
                           for sw in sweeps for s, value in zip(sw.seq_lens, sw.residual_bytes, strict=True)])
    st.altair_chart(charts.line(points, "seq_len", "bytes", x_title=T("axis.seq_len"), y_title=T("axis.residuals"),
                                color="scheme", color_title=T("axis.scheme"), title=T("chart.sweep")),
                    width="stretch")
    one = next(sw for sw in sweeps if sw.scheme == cp.ONE_DEVICE).fit[2]
    shares = {sw.scheme: sw.fit[2] / one for sw in sweeps if sw.scheme != cp.ONE_DEVICE}
    dataframe(T, pd.DataFrame([{"scheme": labels[sw.scheme], "c0": sw.fit[0], "c1": sw.fit[1], "c2": sw.fit[2],
                                "c2_share": sw.fit[2] / one, "inverse_p": 1 / p} for sw in sweeps]))
    listed = ", ".join(f"{labels[s]} {share:.3f}" for s, share in shares.items())
    lens = ", ".join(map(str, sweeps[0].seq_lens))
    if all(abs(share * p - 1) <= 0.02 for share in shares.values()):
        key = "sweep.even"
    elif all(share * p <= 1.02 for share in shares.values()):
        key = "sweep.at_most"
    else:
        key = "sweep.not_split"
    st.markdown(T(key, shares=listed, inverse=1 / p, p=p, one=one, seq_lens=lens))
    if settings.dims.seq_len not in sweeps[0].seq_lens:
        st.caption(T("sweep.own_length", s=settings.dims.seq_len))


# --- 5. when to choose which ----------------------------------------------------------------------------


def show_choice(settings: cp.Settings, measured_here: bool) -> None:
    p, heads, b, s, d = (settings.devices, settings.dims.heads, settings.batch, settings.dims.seq_len,
                         settings.dims.d_model)
    st.subheader(T("choose.ulysses.heading"))
    allowed = cp.ulysses_devices(heads, cp.MAX_DEVICES)
    runs = cp.schemes_for(settings)["ulysses"] is None
    st.markdown(T("choose.ulysses" if runs else "choose.ulysses_refused", heads=heads, p=p,
                  allowed=", ".join(map(str, allowed)), most=max(allowed)))
    if p > 1 and runs:
        per = {scheme: cp.formula_attention_bytes(scheme, settings.dims, settings.layers, b, p)
               for scheme in ("allgather", "ulysses")}
        ratio = per["allgather"] / per["ulysses"]
        st.markdown(T("choose.ulysses_bytes_equal" if abs(ratio - 1) <= 0.02 else "choose.ulysses_bytes",
                      ulysses=per["ulysses"], allgather=per["allgather"], ratio=ratio, p=p))

    st.subheader(T("choose.ring.heading"))
    block = settings.block
    found = cp.overlaps()
    rows = [{"accelerator": analytic.ACCELERATORS[o.accelerator].name, "link": analytic.LINKS[o.link].name,
             "tflops": o.flops_per_s / 1e12, "gbps": o.bytes_per_s / 1e9, "min_block": o.min_block,
             "hidden_here": T("yes") if block >= o.min_block else T("no")} for o in found]
    dataframe(T, pd.DataFrame(rows))
    least, most = min(found, key=lambda o: o.min_block), max(found, key=lambda o: o.min_block)
    hidden = sum(block >= o.min_block for o in found)
    key = ("choose.ring_one" if p == 1 else "choose.ring_none" if hidden == 0
           else "choose.ring_all" if hidden == len(found) else "choose.ring_some")
    st.markdown(T(key, block=block, s=s, p=p, least=least.min_block, most=most.min_block,
                  least_name=f"{analytic.ACCELERATORS[least.accelerator].name}, {analytic.LINKS[least.link].name}",
                  most_name=f"{analytic.ACCELERATORS[most.accelerator].name}, {analytic.LINKS[most.link].name}",
                  hidden=hidden, pairs=len(found)))
    st.caption(T("choose.ring_source", value_bytes=cp.OVERLAP_VALUE_BYTES))

    st.subheader(T("choose.allgather.heading"))
    st.markdown(T("choose.allgather"))
    if p > 1:
        whole = 2 * b * s * d * 4  # K and V of every position, float32, one layer
        st.markdown(T("choose.allgather_held", whole=whole, block_bytes=whole // p, p=p))
    if p > 1 and measured_here:  # the bytes are the prediction's answer: shown once it is measured
        sent = {scheme: cp.formula_attention_bytes(scheme, settings.dims, settings.layers, b, p)
                for scheme in ("allgather", "ring")}
        st.markdown(T("choose.allgather_bytes" if sent["allgather"] == sent["ring"] else
                      "choose.allgather_bytes_differ", allgather=sent["allgather"], ring=sent["ring"], p=p))


# --- 6. sequence parallelism beside it ----------------------------------------------------------------------


def show_sequence_parallel() -> None:
    rows = [{"split": T("beside.sp.name"), "axis": T("beside.sp.axis"), "what": T("beside.sp.what"),
             "collectives": T("beside.sp.collectives"), "attention": T("beside.sp.attention")},
            {"split": T("beside.cp.name"), "axis": T("beside.cp.axis"), "what": T("beside.cp.what"),
             "collectives": T("beside.cp.collectives"), "attention": T("beside.cp.attention")}]
    dataframe(T, pd.DataFrame(rows))
    st.markdown(T("beside.explain"))
    st.page_link("labs/activation_memory.py", label=T("beside.link"), icon="💾")


# --- the page -----------------------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.caption(T("sources"))

cols = st.columns(7)
with cols[5]:
    devices = url_devices(T, 4)
with cols[0]:
    batch = url_int(T, "batch", cp.default_batch(devices), 1, cp.MAX_BATCH, slider=False)
with cols[1]:
    seq_len = url_int(T, "seq_len", cp.default_seq_len(devices), 2, cp.MAX_SEQ_LEN, slider=False)
with cols[2]:
    d_model = url_int(T, "d_model", transformer.Dims().d_model, 1, cp.MAX_D_MODEL, slider=False)
with cols[3]:
    heads = url_int(T, "heads", transformer.Dims().heads, 1, cp.MAX_HEADS, slider=False)
with cols[4]:
    layers = url_int(T, "layers", 2, cp.MIN_LAYERS, cp.MAX_LAYERS, slider=False)
with cols[6]:
    layout = url_choice(T, "layout", cp.LAYOUTS, "contiguous")

settings = None
with guard(T):
    settings = cp.check_settings(batch, seq_len, d_model, heads, layers, devices, layout)
split = settings is not None and settings.devices > 1
if settings is not None:
    st.caption(T("mesh", p=settings.devices, block=settings.block, s=settings.dims.seq_len, b=settings.batch))
    if not split:
        st.info(T("one_device"), icon="☝️")
    refused = cp.schemes_for(settings)["ulysses"]
    if split and refused is not None:
        st.warning(T("ulysses_refused", reason=input_error_text(T, refused)), icon="✂️")

st.header(T("schedule.heading"))
st.markdown(T("schedule.body"))
if split:
    with guard(T):
        show_schedule(settings)

st.header(T("work.heading"))
st.markdown(T("work.body"))
if split:
    with guard(T):
        show_work(settings)

st.header(T("predict.heading"))
st.markdown(T("predict.body"))
classroom.identity_form(T.page)  # whether the guess is recorded for a class, said plainly
st.caption(T("predict.no_controls"))
labels = answer_labels()
guess = st.radio(T("w.guess"), ANSWERS, format_func=lambda a: labels.get(a, a), index=None, key=GUESS,
                 horizontal=True, disabled=not split)
if guess is None and split:
    st.caption(T("predict.first"))

st.header(T("measure.heading"))
st.markdown(T("measure.body"))
measure_clicked = st.button(T("button.measure"), key="context_parallel.measure", disabled=not split or guess is None,
                            help=T("button.measure.help"))
with guard(T):
    if measure_clicked:
        run_measure(settings, guess)
last = st.session_state.get(LAST)
measured_here = last is not None and split and last.settings == settings
if measured_here:
    with guard(T):
        show_measured(last)
    trace_view.trace_panel("context_parallel", cp.run_config(settings))  # ring attention, once the guess is in
elif last is not None:
    st.info(T("measure.stale"), icon="🔁")
elif split:
    st.info(T("nothing_yet"), icon="👆")

st.header(T("sweep.heading"))
st.markdown(T("sweep.body"))
sweep_clicked = st.button(T("button.sweep"), key="context_parallel.sweep", disabled=not measured_here,
                          help=T("button.sweep.help"))
with guard(T):
    if sweep_clicked:
        run_sweep(settings)
swept = st.session_state.get(SWEPT)
if measured_here and swept is not None and swept[0] == settings:
    with guard(T):
        show_sweep(*swept)
elif split and not measured_here:
    st.caption(T("sweep.first"))

st.header(T("choose.heading"))
if settings is not None:
    with guard(T):
        show_choice(settings, measured_here)

st.header(T("beside.heading"))
show_sequence_parallel()

show_code(T, cp.ring_schedule, context.attention_core, cp.work_per_device, cp.scheme_step, cp.sweep_residuals)
