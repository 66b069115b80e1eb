"""Expert parallelism lab: the transformer's mixture of experts with its E experts over an expert axis of Y devices
and the batch over data × expert (`train.experts`, impl expert). The Scaling Book's critical batch from the learner's
E and k, then — after a prediction of the dropped fraction at capacity factor 1 — one Measure click: the tokens each
device routes to each expert (a heatmap), the drops per capacity factor counted beside predicted, one compiled step's
all-to-all bytes beside the formula's, and one array's all-to-all against its all-gather (`concepts.experts`).
Nothing heavy runs, and nothing measured shows, before the button is pressed."""

import dataclasses

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts, classroom, heavy_jobs, predicting, trace_view
from labs.ui.blocks import dataframe, show_code
from labs.ui.i18n import texts
from labs.ui.links import url_devices, url_float, url_int
from labs.ui.visitor import guard
from pmap_core.concepts import experts as ce
from pmap_core.train import experts

T = texts("expert_parallel")
LAST = "expert_parallel.last"          # session state: Run of the last Measure click
GUESS = "expert_parallel.guess"        # the learner's prediction, before measuring
RECORDED = "expert_parallel.recorded"  # what became of the guess's record for the class
PREDICT_STEP = "dropped_c1"            # the guess as a class records it: sheet "expert_parallel", this step
MAX_SHOWN_FACTOR = 8.0                 # the page's capacity factors: MIN_CAPACITY_FACTOR … 8
# Slots per expert, and the bytes each device's all-to-alls send per step (costs.analytic.expert_comm_terms).
FORMULA = (r"C = \left\lceil \frac{c\,T\,k}{E} \right\rceil \qquad "
           r"\text{all-to-all per step} = 4L\cdot\frac{Y-1}{Y}\cdot\frac{B}{D}\,E\,C\,d\cdot 4\ \text{bytes}")


@dataclasses.dataclass(frozen=True)
class Run:
    """What one Measure click ran, at which settings, and the prediction made before it."""

    settings: ce.Settings
    measurement: ce.Measurement
    answer: str
    guess: str


def answer_labels() -> dict[str, str]:
    return {ce.NONE: T("answer.none"), ce.UNDER_QUARTER: T("answer.under_25"), ce.UNDER_HALF: T("answer.25_to_50"),
            ce.OVER_HALF: T("answer.over_50")}


def part_labels() -> dict[str, str]:
    return {"routing": T("part.routing"), "drops": T("part.drops"), "step": T("part.step"),
            "versus": T("part.versus")}


# --- 1. the critical batch -----------------------------------------------------------------------------


def show_critical(settings: ce.Settings) -> None:
    e, k, d, t = settings.dims.experts, settings.dims.top_k, settings.devices, settings.dims.seq_len
    dense, moe = ce.DENSE_CRITICAL_TOKENS, ce.critical_batch(e, k)
    st.markdown(T("critical.arithmetic", dense=dense, e=e, k=k, ratio=e / k, moe=moe, d=d, total=moe * d,
                  sequences=-(-int(moe * d) // t), t=t))
    if e == k:
        st.caption(T("critical.dense_like", e=e))
    st.caption(T("critical.source"))


# --- 2. predict, then measure ----------------------------------------------------------------------------


def show_slots(settings: ce.Settings) -> None:
    """The slots at c = 1 beside what a perfectly balanced router sends each expert of a sequence."""
    dims = settings.dims
    loads = ce.balanced_loads(dims.seq_len, dims.top_k, dims.experts)
    c1 = ce.capacity(ce.PREDICT_FACTOR, dims.seq_len, dims.top_k, dims.experts)
    shared = dict(c1=c1, k=dims.top_k, t=dims.seq_len, e=dims.experts)
    if c1 == loads.even:
        st.markdown(T("predict.slots_even", **shared))
    else:
        st.markdown(T("predict.slots_uneven", even=loads.even, high=loads.high_count, most=loads.most,
                      low_count=dims.experts - loads.high_count, low=loads.low, slots=dims.experts * c1,
                      empty=dims.experts * c1 - loads.choices, **shared))


def run_measure(settings: ce.Settings, guess: str) -> None:
    labels = part_labels()
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress.measure", part=labels[ce.PARTS[0]]))

        def on_part(name: str) -> None:
            bar.progress(ce.PARTS.index(name) / len(ce.PARTS), text=T("progress.measure", part=labels[name]))

        measurement = ce.measured(settings, on_part)
        bar.empty()
    answer = ce.answer(measurement)
    st.session_state[LAST] = Run(settings, measurement, answer, guess)
    right = guess == answer  # with a class code, the guess is recorded before the page shows the answer
    st.session_state[RECORDED] = predicting.record_attempt(T.page, PREDICT_STEP, guess, answer, right,
                                                           {PREDICT_STEP: right})


def token_frame(tokens: ce.TokenMap) -> pd.DataFrame:
    """Every (device, expert): the choices routed, kept and dropped in block 0."""
    return pd.DataFrame([{"device": d, "expert": e, "routed": int(tokens.routed[d, e]), "kept": int(tokens.kept[d, e]),
                          "dropped": int(tokens.routed[d, e] - tokens.kept[d, e]), "holder": tokens.holder[e]}
                         for d in range(tokens.routed.shape[0]) for e in range(tokens.routed.shape[1])])


def show_tokens(run: Run) -> None:
    tokens, settings = run.measurement.tokens, run.settings
    frame = token_frame(tokens)
    c = settings.dims.capacity_factor
    for value, value_title, title in (("routed", T("axis.routed"), T("chart.routed")),
                                      ("dropped", T("axis.dropped"), T("chart.dropped", c=c))):
        st.altair_chart(charts.heatmap(frame, "expert", "device", value, x_title=T("axis.expert"),
                                       y_title=T("chart.device"), value_title=value_title, title=title),
                        width="stretch")
    dataframe(T, frame)
    per_expert = tokens.routed.sum(axis=0)
    even = tokens.routed.sum() / settings.dims.experts
    st.markdown(T("tokens.explain", most=int(per_expert.max()), least=int(per_expert.min()), even=even,
                  busiest=int(per_expert.argmax()), slots=tokens.capacity * tokens.sequences_per_device,
                  c=settings.dims.capacity_factor, y=settings.expert, per=settings.dims.experts // settings.expert))


def drops_chart(drops: tuple[ce.CapacityRow, ...]) -> alt.Chart:
    names = {"measured": T("series.measured"), "predicted": T("series.predicted"),
             "from_mean_load": T("series.from_mean_load"), "balanced": T("series.balanced")}
    frame = pd.DataFrame([{"capacity_factor": row.capacity_factor, "fraction": getattr(row, key), "series": name}
                          for row in drops for key, name in names.items()])
    return charts.line(frame, "capacity_factor", "fraction", x_title=T("axis.capacity_factor"),
                       y_title=T("axis.dropped_fraction"), color="series", color_title=T("axis.series"),
                       title=T("chart.drops"))


def show_measured(run: Run) -> None:
    settings, measurement = run.settings, run.measurement
    dims = settings.dims
    predicting.show_outcome(T, PREDICT_STEP, run.guess, run.answer, answer_labels(), st.session_state.get(RECORDED))
    at_one = ce.dropped_at(measurement.drops, ce.PREDICT_FACTOR)
    mine = ce.dropped_at(measurement.drops, dims.capacity_factor)
    why = "measure.drops.over" if at_one.measured > 0 else "measure.drops.none"
    st.markdown(" ".join((
        T("measure.drops", c1=at_one.capacity, measured=at_one.measured, predicted=at_one.predicted,
          mean=at_one.from_mean_load, balanced=at_one.balanced, choices=settings.batch * dims.seq_len * dims.top_k),
        T(why, c1=at_one.capacity),
        T("measure.drops.yours", c=dims.capacity_factor, cap=mine.capacity, mine=mine.measured,
          balanced=mine.balanced))))
    st.latex(FORMULA)
    st.caption(T("formulas"))
    st.subheader(T("tokens.heading"))
    show_tokens(run)
    st.subheader(T("drops.heading"))
    st.altair_chart(drops_chart(measurement.drops), width="stretch")
    dataframe(T, pd.DataFrame([dataclasses.asdict(row) for row in measurement.drops]))
    st.subheader(T("bytes.heading"))
    step = measurement.step
    rows = [{"collective": kind, "hlo_bytes": step.comm_by_kind.get(kind, 0.0),
             "formula_bytes": step.formula_by_kind.get(kind, 0.0)}
            for kind in sorted(set(step.comm_by_kind) | set(step.formula_by_kind))]
    dataframe(T, pd.DataFrame(rows))
    buffer = ce.buffer_elements(settings) * 4
    if settings.expert > 1:
        st.markdown(T("bytes.all_to_all", hlo=step.all_to_all_hlo, formula=step.all_to_all_formula,
                      count=step.all_to_alls, layers=settings.layers, y=settings.expert, buffer=buffer))
    else:
        st.markdown(T("bytes.none", hlo=step.all_to_all_hlo, formula=step.all_to_all_formula,
                      allreduce=step.comm_by_kind.get("all-reduce", 0.0)))
    versus = measurement.versus
    if versus is not None:
        st.markdown(T("bytes.versus", array=versus.array_bytes, y=versus.devices, a2a=versus.all_to_all_hlo,
                      a2a_formula=versus.all_to_all_formula, ag=versus.all_gather_hlo,
                      ag_formula=versus.all_gather_formula, ratio=versus.ratio))
    else:
        st.caption(T("bytes.versus_none"))
    st.caption(T("time.why_not", e=dims.experts))


# --- the page -----------------------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.caption(T("sources"))

cols = st.columns(6)
with cols[0]:
    devices = url_devices(T, 4)
with cols[1]:
    n_experts = url_int(T, "experts", ce.default_experts(devices), 1, ce.MAX_EXPERTS, slider=False)
with cols[2]:
    top_k = url_int(T, "top_k", 2, 1, ce.MAX_EXPERTS, slider=False)
with cols[3]:
    factor = url_float(T, "capacity_factor", 1.25, experts.MIN_CAPACITY_FACTOR, MAX_SHOWN_FACTOR)
with cols[4]:
    batch = url_int(T, "batch", ce.default_batch(devices), 1, ce.MAX_BATCH, slider=False)
with cols[5]:
    axis = url_int(T, "expert", ce.expert_axis(devices, n_experts), 1, ce.MAX_DEVICES, slider=False)

settings = None
with guard(T):
    settings = ce.check_settings(batch, n_experts, top_k, factor, devices, axis)
if settings is not None:
    st.caption(T("mesh", d=settings.devices, y=settings.expert, x=settings.data, e=settings.dims.experts,
                 per=settings.dims.experts // settings.expert, rows=settings.batch // settings.devices,
                 b=settings.batch, t=settings.dims.seq_len))
    if settings.devices == 1:
        st.info(T("one_device"), icon="☝️")
    elif settings.expert == 1:
        st.info(T("no_expert_axis", d=settings.devices, e=settings.dims.experts,
                  pick=ce.expert_axis(settings.devices, settings.dims.experts)), icon="✂️")

st.header(T("critical.heading"))
st.markdown(T("critical.body"))
if settings is not None:
    with guard(T):
        show_critical(settings)

st.header(T("predict.heading"))
if settings is not None:
    show_slots(settings)
st.markdown(T("predict.body"))
classroom.identity_form(T.page)  # whether the guess is recorded for a class, said plainly
st.caption(T("predict.no_controls"))
labels = answer_labels()
guess = st.radio(T("w.guess"), ce.BANDS, format_func=lambda a: labels.get(a, a), index=None, key=GUESS,
                 horizontal=True, disabled=settings is None)
if guess is None and settings is not None:
    st.caption(T("predict.first"))

st.header(T("measure.heading"))
st.markdown(T("measure.body"))
measure_clicked = st.button(T("button.measure"), key="expert_parallel.measure",
                            disabled=settings is None or guess is None, help=T("button.measure.help"))
with guard(T):
    if measure_clicked:
        run_measure(settings, guess)
last = st.session_state.get(LAST)
measured_here = last is not None and settings is not None and last.settings == settings
if measured_here:
    with guard(T):
        show_measured(last)
    trace_view.trace_panel("expert_parallel", ce.run_config(settings))  # once the guess is in
elif last is not None:
    st.info(T("measure.stale"), icon="🔁")
elif settings is not None:
    st.info(T("nothing_yet"), icon="👆")

show_code(T, ce.tokens_per_expert, ce.dropped_by_capacity, ce.expert_step, ce.all_to_all_vs_all_gather)
