"""Activation memory lab: what a transformer layer keeps for its backward pass, predicted term by term from
Korthikanti et al. 2022 (arXiv 2205.05198, §4.1, Table 2), then — after a prediction — read off JAX's saved
residuals and the compiler under each remat policy (none, selective, full), and swept over sequence lengths
to fit the s² term (`concepts.activation_memory`). Nothing heavy runs before a button is pressed."""

import dataclasses
import re

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts, classroom, heavy_jobs, predicting
from labs.ui.blocks import dataframe, show_code
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_int
from labs.ui.visitor import guard
from pmap_core.concepts import activation_memory as am
from pmap_core.concepts import sequence_parallel as seqpar
from pmap_core.train import tensor, transformer

T = texts("activation_memory")
LAST = "activation_memory.last"          # session state: Run of the last Measure click
SWEPT = "activation_memory.swept"        # session state: (Settings, sweeps) of the last Sweep click
SPLIT = "activation_memory.splits"       # session state: SplitComparison of the last Compare click
GUESS = "activation_memory.guess"        # the learner's prediction, before measuring
RECORDED = "activation_memory.recorded"  # what became of the guess's record for the class
PREDICT_STEP = "fewest_bytes"            # the guess as a class records it: sheet "activation_memory", this step
# Each of am.TERMS, in order, as its texts name it (term.<key>.name / term.<key>.note).
TERM_KEYS = ("ln_inputs", "qkv_input", "q_k", "v", "softmax", "softmax_mask", "softmax_dropout", "proj_input",
             "attn_mask", "mlp_in", "gelu_in", "mlp2_in", "mlp_mask", "ln_internals", "gelu_internals", "exp",
             "zeros", "causal")
# am.predict's Table 2 variants, in their order, as the texts name them (variant.<key>).
VARIANT_KEYS = ("none", "tensor", "tensor_sequence", "tensor_selective", "tensor_sequence_selective", "full")
SOURCE_PATH = re.compile(r"\S*/(pmap_core/)")  # JAX names a residual's line by its absolute path


@dataclasses.dataclass(frozen=True)
class Run:
    """What one Measure click ran, and the prediction made before it."""

    measured: am.Measured
    guess: str


def policy_labels() -> dict[str, str]:
    return {remat: T(f"policy.{remat}") for remat in am.POLICIES}


def unit_sum(setting: str, unit: str) -> float:
    return sum((t.paper if setting == "paper" else t.lab) for t in am.TERMS if t.unit == unit)


# --- 1. predict ---------------------------------------------------------------------------------------


def show_formula(settings: am.Settings, t: int) -> None:
    s, b, h, a = settings.dims.seq_len, settings.batch, settings.dims.d_model, settings.dims.heads
    paper, lab = am.predict("paper", s, b, h, a, t), am.predict("lab", s, b, h, a, t)
    st.markdown(T("formula.explain", s=s, b=b, h=h, a=a, paper=paper.total, lab=lab.total,
                  paper_linear=unit_sum("paper", "sbh"), paper_quadratic=unit_sum("paper", "as²b"),
                  lab_linear=unit_sum("lab", "sbh"), lab_quadratic=unit_sum("lab", "as²b")))
    rows = [{"term": T(f"term.{key}.name"), "unit": term.unit, "paper_per_unit": term.paper, "lab_per_unit": term.lab,
             "paper_bytes": paper_bytes, "lab_bytes": lab_bytes, "source": term.source, "note": T(f"term.{key}.note")}
            for key, term, (_, paper_bytes), (_, lab_bytes) in zip(TERM_KEYS, am.TERMS, paper.terms, lab.terms,
                                                                   strict=True)]
    dataframe(T, pd.DataFrame(rows))
    st.markdown(T("formula.departures"))

    st.subheader(T("policies.heading"))
    labels = policy_labels()
    dataframe(T, pd.DataFrame([{"policy": labels[remat], "formula_bytes": am.policy_formula(remat, settings)}
                               for remat in am.POLICIES]))
    st.markdown(T("policies.explain", layers=settings.layers))

    st.subheader(T("table2.heading", t=t))
    dataframe(T, pd.DataFrame([{"variant": T(f"variant.{key}"), "paper_bytes": paper.variants[name],
                                "lab_bytes": lab.variants[name]}
                               for key, name in zip(VARIANT_KEYS, paper.variants, strict=True)]))
    st.markdown(T("table2.explain", t=t))
    if t == 1:
        st.caption(T("table2.one_device"))
    elif a % t:
        st.caption(T("table2.uneven", a=a, t=t))


# --- 2. measure ---------------------------------------------------------------------------------------


def run_measure(settings: am.Settings, guess: str) -> None:
    labels = policy_labels()
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.measure", policy=labels[am.POLICIES[0]]))

        def on_policy(remat: str) -> None:
            bar.progress(am.POLICIES.index(remat) / len(am.POLICIES), text=T("progress.measure", policy=labels[remat]))

        measured = am.measure(settings, on_policy)
        bar.empty()
    st.session_state[LAST] = Run(measured, guess)
    right = guess == measured.fewest  # with a class code, the guess is recorded before the page shows the answer
    st.session_state[RECORDED] = predicting.record_attempt(T.page, PREDICT_STEP, guess, measured.fewest, right,
                                                           {PREDICT_STEP: right})


def show_outcome(run: Run) -> None:
    predicting.show_outcome(T, PREDICT_STEP, run.guess, run.measured.fewest, policy_labels(),
                            st.session_state.get(RECORDED))


def policy_rows(measured: am.Measured) -> list[dict]:
    labels, none = policy_labels(), measured.of("none")
    return [{"policy": labels[p.remat], "residual_bytes": p.residual_bytes, "formula_bytes": p.formula_bytes,
             "temp_bytes": p.temp, "peak_bytes": p.peak, "flops": p.flops, "flops_vs_none": p.flops / none.flops}
            for p in measured.policies]


def bytes_chart(measured: am.Measured) -> alt.Chart:
    labels = policy_labels()
    figures = {"residual_bytes": T("series.residuals"), "temp_bytes": T("series.temp"), "peak_bytes": T("series.peak")}
    frame = pd.DataFrame([{"policy": labels[p.remat], "figure": figures[name], "bytes": value}
                          for p in measured.policies
                          for name, value in (("residual_bytes", p.residual_bytes), ("temp_bytes", p.temp),
                                               ("peak_bytes", p.peak)) if value is not None])
    order = list(labels.values())
    return alt.Chart(frame, title=T("chart.measure")).mark_bar().encode(
        x=alt.X("policy:N", title=T("axis.policy"), sort=order),
        xOffset=alt.XOffset("figure:N", sort=list(figures.values())),
        y=alt.Y("bytes:Q", title=T("axis.bytes")),
        color=alt.Color("figure:N", title=T("axis.figure"), sort=list(figures.values()),
                        scale=alt.Scale(scheme=charts.DEVICE_SCHEME)),
        tooltip=charts.tooltips(frame))


def beyond_formula_text(beyond: am.BeyondFormula, formula: int, layers: int) -> str:
    """What JAX saves under none beyond the formula for the blocks: outside the blocks, and inside them by part."""
    if beyond.total < 0:
        return T("measure.outside_negative", outside=-beyond.total, formula=formula, layers=layers)
    if beyond.inside < 0:
        return T("measure.outside_over", total=beyond.total, outside=beyond.outside, over=-beyond.inside,
                 formula=formula, layers=layers)
    if beyond.inside == 0:
        inside = T("measure.inside_none")
    elif beyond.other >= 0:
        inside = T("measure.inside", inside=beyond.inside, per_row=beyond.per_row, other=beyond.other)
    else:
        inside = T("measure.inside_whole", inside=beyond.inside)
    return " ".join((T("measure.outside", total=beyond.total, outside=beyond.outside, formula=formula,
                       layers=layers), inside))


def show_measured(run: Run) -> None:
    measured, labels = run.measured, policy_labels()
    show_outcome(run)
    st.altair_chart(bytes_chart(measured), width="stretch")
    dataframe(T, pd.DataFrame(policy_rows(measured)))
    none, selective, full = (measured.of(remat) for remat in am.POLICIES)
    st.markdown(T("measure.residuals", none=none.residual_bytes, selective=selective.residual_bytes,
                  full=full.residual_bytes, selective_share=selective.residual_bytes / none.residual_bytes,
                  full_share=full.residual_bytes / none.residual_bytes, fewest=labels[measured.fewest]))
    st.markdown(beyond_formula_text(measured.beyond_formula, none.formula_bytes, measured.settings.layers))
    lowest = measured.lowest_peak
    if lowest is None:
        st.markdown(T("measure.no_peak"))
    else:
        st.markdown(T("measure.peak", lowest=labels[lowest], none=none.peak, full=full.peak, selective=selective.peak))
        saved = none.peak - full.peak
        st.markdown(T("measure.peak.saved" if saved > 0 else "measure.peak.not_saved", saved=abs(saved)))
    extra = full.flops - none.flops
    modelled = am.recomputed_flops(measured.settings.dims, measured.settings.layers, measured.settings.batch, "full")
    # Full remat's extra FLOPs against the model of what its backward runs again (XLA drops what is never read).
    key = ("measure.flops_none" if extra <= 0 else "measure.flops" if abs(extra - modelled) <= 0.1 * modelled
           else "measure.flops_off_model")
    st.markdown(T(key, extra=extra, none=none.flops,
                  full=full.flops, forward=measured.forward_flops, share=measured.recomputed_share,
                  modelled=modelled, selective_extra=selective.flops - none.flops))
    show_residuals(measured)


def show_residuals(measured: am.Measured) -> None:
    st.subheader(T("residuals.heading"))
    remat = url_choice(T, "policy", am.POLICIES, "selective")
    figures = measured.of(remat)
    kinds = {True: T("kind.argument"), False: T("kind.activation")}
    frame = pd.DataFrame([{"shape": str(r.shape), "dtype": r.dtype, "bytes": r.bytes, "kind": kinds[r.argument],
                           "source": SOURCE_PATH.sub(r"\1", r.source)} for r in figures.residuals])
    dataframe(T, frame)
    arguments = [r for r in figures.residuals if r.argument]
    st.caption(T("residuals.explain", count=len(figures.residuals), activations=len(figures.residuals) - len(arguments),
                 activation_bytes=figures.residual_bytes, arguments=len(arguments),
                 argument_bytes=sum(r.bytes for r in arguments),
                 scores=am.score_residual_bytes(figures.residuals, measured.settings)))


# --- 3. sweep -----------------------------------------------------------------------------------------


def run_sweep(settings: am.Settings) -> None:
    labels = policy_labels()
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.sweep", policy=labels[am.POLICIES[0]]))

        def on_policy(remat: str) -> None:
            bar.progress(am.POLICIES.index(remat) / len(am.POLICIES), text=T("progress.sweep", policy=labels[remat]))

        sweeps = am.sweep_policies(settings, am.SEQ_LENS, on_policy)
        bar.empty()
    st.session_state[SWEPT] = (settings, sweeps)


def show_sweep(settings: am.Settings, sweeps: tuple[am.Sweep, ...]) -> None:
    labels = policy_labels()
    b, h, a, layers = settings.batch, settings.dims.d_model, settings.dims.heads, settings.layers
    points = pd.DataFrame([{"seq_len": s, "bytes": value, "policy": labels[sw.remat]}
                           for sw in sweeps for s, value in zip(sw.seq_lens, sw.residual_bytes, strict=True)])
    st.altair_chart(charts.line(points, "seq_len", "bytes", x_title=T("axis.seq_len"), y_title=T("axis.bytes"),
                                color="policy", color_title=T("axis.policy"), title=T("chart.sweep")),
                    width="stretch")
    rows = []
    for sw in sweeps:
        linear, quadratic = am.policy_coefficients(sw.remat, b, h, a)
        c0, c1, c2 = sw.residual_fit
        rows.append({"policy": labels[sw.remat], "c0": c0, "c1": c1, "c2": c2, "formula_linear": linear * layers,
                     "formula_quadratic": quadratic * layers})
    dataframe(T, pd.DataFrame(rows))
    by = {sw.remat: sw for sw in sweeps}
    none_c2, selective_c2 = by["none"].residual_fit[2], by["selective"].residual_fit[2]
    none_quadratic = am.policy_coefficients("none", b, h, a)[1] * layers
    st.markdown(T("sweep.none", c2=none_c2, formula=none_quadratic, ratio=none_c2 / none_quadratic,
                  seq_lens=", ".join(map(str, am.SEQ_LENS)), b=b, a=a, layers=layers, per=unit_sum("lab", "as²b")))
    gone = abs(selective_c2) < 0.01 * abs(none_c2)
    st.markdown(T("sweep.selective_gone" if gone else "sweep.selective_kept", c2=selective_c2, none=none_c2))
    extra = by["none"].residual_fit[1] - am.policy_coefficients("none", b, h, a)[0] * layers
    st.caption(T("sweep.linear" if extra >= 0 else "sweep.linear_short", extra=abs(extra)))


# --- 4. sequence parallelism ------------------------------------------------------------------------------


def run_split(settings: am.Settings, model: int) -> None:
    labels = split_labels()
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.split", split=labels["one"]))

        def on_split(name: str) -> None:
            bar.progress(seqpar.COMPARED.index(name) / len(seqpar.COMPARED),
                         text=T("progress.split", split=labels[name]))

        compared = seqpar.compare_splits(settings, model, on_split)
        bar.empty()
    st.session_state[SPLIT] = compared


def split_labels() -> dict[str, str]:
    return {name: T(f"split.{name}") for name in seqpar.COMPARED}


def show_split(compared: seqpar.SplitComparison) -> None:
    labels, tp, whole = split_labels(), compared.of("off"), compared.one_device.residual_bytes
    rows = [{"split": labels[name], "all_reduce": step.comm_by_kind.get("all-reduce", 0.0),
             "all_gather": step.comm_by_kind.get("all-gather", 0.0),
             "reduce_scatter": step.comm_by_kind.get("reduce-scatter", 0.0), "comm_bytes": step.comm_bytes,
             "comm_vs_tensor": step.comm_bytes / tp.comm_bytes, "residual_bytes": step.residual_bytes,
             "residual_vs_one": step.residual_bytes / whole}
            for name, step in (("one", compared.one_device), *zip(seqpar.SPLITS, compared.splits, strict=True))]
    dataframe(T, pd.DataFrame(rows))
    keep, on, t = compared.of("keep"), compared.of("on"), compared.model
    ratio = keep.comm_bytes / tp.comm_bytes
    bytes_equal = abs(ratio - 1) <= 0.02
    st.markdown(T("split.bytes_equal" if bytes_equal else "split.bytes_differ", keep=keep.comm_bytes,
                  tp=tp.comm_bytes, ratio=ratio))
    extra, formula = keep.comm_bytes - tp.comm_bytes, compared.parameter_gradients
    st.markdown(T("split.parameter_gradients" if abs(extra - formula) <= 0.01 * formula
                  else "split.parameter_gradients_off", extra=extra, formula=formula, t=t,
                  layers=compared.settings.layers, activations=keep.comm_bytes - formula,
                  share=formula / keep.comm_bytes))
    extra, formula = on.comm_bytes - keep.comm_bytes, compared.regathered
    st.markdown(T("split.regather" if abs(extra - formula) <= 0.01 * formula else "split.regather_off_formula",
                  extra=extra, formula=formula, t=t, layers=compared.settings.layers))
    divided = on.residual_bytes / whole
    st.markdown(T("split.divided" if abs(divided * t - 1) <= 0.1 else "split.not_divided", on=on.residual_bytes,
                  whole=whole, share=divided, inverse=1 / t, t=t, tp=tp.residual_bytes,
                  tp_share=tp.residual_bytes / whole, keep=keep.residual_bytes, keep_share=keep.residual_bytes / whole))
    extra, formula = keep.residual_bytes - on.residual_bytes, compared.regathered
    st.markdown(T("split.kept_inputs" if abs(extra - formula) <= 0.01 * formula else "split.kept_inputs_off",
                  extra=extra, formula=formula, t=t, layers=compared.settings.layers))
    keep_share = keep.residual_bytes / whole
    keep_divided = abs(keep_share * t - 1) <= 0.1
    st.markdown(T("split.keep_short" if not keep_divided else "split.keep_both" if bytes_equal
                  else "split.keep_divided_bytes_differ", input_share=compared.gathered_inputs / whole,
                  keep_share=keep_share, inverse=1 / t, ratio=ratio))


# --- the page -----------------------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.latex(rf"\text{{paper (16-bit)}}:\; sbh\left({unit_sum('paper', 'sbh'):g} + "
         rf"\frac{{{unit_sum('paper', 'as²b'):g}\,as}}{{h}}\right) \qquad \text{{lab (float32, JAX)}}:\; "
         rf"sbh\cdot {unit_sum('lab', 'sbh'):g} + as^2b\cdot {unit_sum('lab', 'as²b'):g}")
st.caption(T("formulas"))

cols = st.columns(6)
with cols[0]:
    batch = url_int(T, "batch", 8, 1, am.MAX_BATCH, slider=False)
with cols[1]:
    seq_len = url_int(T, "seq_len", transformer.Dims().seq_len, am.MIN_SEQ_LEN, am.MAX_SEQ_LEN, slider=False)
with cols[2]:
    d_model = url_int(T, "d_model", transformer.Dims().d_model, 1, am.MAX_D_MODEL, slider=False)
with cols[3]:
    heads = url_int(T, "heads", transformer.Dims().heads, 1, am.MAX_HEADS, slider=False)
with cols[4]:
    layers = url_int(T, "layers", 2, 1, am.MAX_LAYERS, slider=False)
with cols[5]:
    devices = url_devices(T, 4)
st.caption(T("one_device", devices=devices))

settings = None
with guard(T):
    settings = am.check_settings(batch, seq_len, d_model, heads, layers)

st.header(T("predict.heading"))
if settings is not None:
    with guard(T):
        show_formula(settings, devices)
classroom.identity_form(T.page)  # whether the guess is recorded for a class, said plainly
st.caption(T("predict.no_controls"))
labels = policy_labels()
guess = st.radio(T("w.guess"), am.POLICIES, format_func=lambda p: labels.get(p, p), index=None, key=GUESS,
                 horizontal=True, disabled=settings is None)
if guess is None:
    st.caption(T("predict.first"))

st.header(T("measure.heading"))
st.markdown(T("measure.body"))
measure_clicked = st.button(T("button.measure"), key="activation_memory.measure",
                            disabled=settings is None or guess is None, help=T("button.measure.help"))
with guard(T):
    if measure_clicked:
        run_measure(settings, guess)
last = st.session_state.get(LAST)
measured_here = last is not None and settings is not None and last.measured.settings == settings
if measured_here:
    with guard(T):
        show_measured(last)
elif last is not None:
    st.info(T("measure.stale"), icon="🔁")
else:
    st.info(T("nothing_yet"), icon="👆")

st.header(T("sweep.heading"))
st.markdown(T("sweep.body", seq_lens=", ".join(map(str, am.SEQ_LENS))))
sweep_clicked = st.button(T("button.sweep"), key="activation_memory.sweep", disabled=not measured_here,
                          help=T("button.sweep.help"))
with guard(T):
    if sweep_clicked:
        run_sweep(settings)
swept = st.session_state.get(SWEPT)
if measured_here and swept is not None and swept[0] == settings:
    with guard(T):
        show_sweep(*swept)
elif not measured_here:
    st.caption(T("sweep.first"))

st.header(T("split.heading", t=devices))
st.markdown(T("split.body", t=devices))
if devices == 1:
    st.caption(T("split.one_device"))
split_clicked = st.button(T("button.split"), key="activation_memory.split", help=T("button.split.help"),
                          disabled=not measured_here or devices == 1)
with guard(T):
    if split_clicked:
        run_split(settings, devices)
compared = st.session_state.get(SPLIT)
if measured_here and compared is not None and (compared.settings, compared.model) == (settings, devices):
    with guard(T):
        show_split(compared)
elif not measured_here:
    st.caption(T("split.first"))

show_code(T, am.predict, am.saved_residuals, am.compiled_step, am.sweep, transformer.remat_policy, seqpar.split_step,
          tensor.sequence_parallel_loss)
