"""What the "Plan a run" page shows beside the planner's ranking, each figure the planner's own.

- A workload from a global batch in tokens (`workload`): whole sequences, or an input error that says so.
- A layout the learner picks: its axes as a link keeps them (`layout_key`, "data=64,stage=16,model=8"), one of the
  planner's candidates for the model, D and the batch, with a ZeRO stage, a remat policy, M micro-batches and v
  interleaved stages (`Pick`, `picked`), and the one figure of it the learner predicts first (`figure`,
  `QUANTITIES`); `layout_figure` is the same figure from plain values, for a worksheet.
- The verdict read as cases (`read_verdict`): the first plan and its runner-up, the step-time part that separates
  them with its axis's level and link, and what bounds the first (memory, the bubble, an axis's link, or nothing
  beside compute) — each case chosen by the figures of what ran, so a sentence built from one is true of it.
- The published runs, each predicted at the paper's layout twice: the planner's best variant, and as the paper ran
  it where it says its remat policy (`published_rows`).
"""

from __future__ import annotations

import dataclasses

from pmap_core.concepts.planner.predict import (
    DEFAULT_ASSUMPTIONS,
    PLAN_AXES,
    REMAT,
    ZERO_STAGES,
    Assumptions,
    AxisComm,
    Layout,
    Prediction,
    Workload,
    predict,
)
from pmap_core.concepts.planner.presets import (
    HARDWARE,
    MODELS,
    PUBLISHED,
    Hardware,
    ModelShape,
    PublishedRun,
    check_model,
)
from pmap_core.concepts.planner.search import (
    BUBBLE,
    COMPUTE,
    MEMORY,
    Plan,
    PlanResult,
    axis_layouts,
    check_inputs,
    evaluate_published,
    step_parts,
)
from pmap_core.train import config as train_config
from pmap_core.train import transformer
from pmap_core.train.mesh import DATA_AXIS
from pmap_core.validation import LabInputError, check_int

LAB_MODEL = "lab"  # the lab's own transformer, at the learner's sizes, beside the presets
MAX_TOKENS = 2**40
PRECISIONS = ("mixed", "float32")
# What the learner predicts of a picked layout, and its unit: GB per device, seconds, percent of peak, the bubble
# over the ideal time, GB each device sends per step.
QUANTITIES = ("memory", "step", "mfu", "bubble", "comm")
GB = 1e9
FLAT_ACHIEVABLE = 0.6  # the share of peak a worksheet's question takes for every FLOP
# The verdict's cases (`Reading`): how the first plan stands against its runner-up, and what bounds it.
SINGLE, ONLY, TIE, SEPARATED = "single", "only", "tie", "separated"
BY_COMPUTE, BY_BUBBLE, BY_AXIS = "compute", "bubble", "axis"
BOUND_MEMORY, BOUND_NOTHING, BOUND_BUBBLE, BOUND_AXIS = "memory", "nothing", "bubble", "axis"


def lab_dims(d_model: int, heads: int, seq_len: int, vocab: int) -> transformer.Dims:
    """The lab's transformer's sizes, within the training lab's limits, its heads dividing its width (each head gets
    d_model / heads dimensions)."""
    check_int("d_model", d_model, 1, train_config.MAX_D_MODEL)
    check_int("heads", heads, 1, train_config.MAX_HEADS)
    check_int("seq_len", seq_len, 1, train_config.MAX_SEQ_LEN)
    check_int("vocab", vocab, train_config.MIN_VOCAB, train_config.MAX_VOCAB)
    if d_model % heads:
        nearest = sorted({max(heads, d_model // heads * heads), -(-d_model // heads) * heads})
        raise LabInputError("block_not_divisible", "heads ({parts}) must divide d_model ({size}): each head gets "
                            "d_model / heads dimensions; d_model that do: {nearest}", spec="heads", dim="d_model",
                            size=d_model, parts=heads, nearest=", ".join(map(str, nearest)))
    return transformer.Dims(d_model, heads, seq_len, vocab)


def workload(tokens: int, seq_len: int, precision: str) -> Workload:
    """One step's sequences from a global batch in tokens: whole sequences of `seq_len`, or an input error (the
    precision is checked where the planner ranks, `search.check_inputs`)."""
    check_int("seq_len", seq_len, 1, 2**22)
    check_int("tokens", tokens, 1, MAX_TOKENS)
    if tokens % seq_len:
        whole = max(seq_len, tokens // seq_len * seq_len)
        raise LabInputError("tokens_not_sequences", "a global batch of {tokens} tokens is not a whole number of "
                            "sequences of {seq_len} tokens; try {suggestion}", tokens=tokens, seq_len=seq_len,
                            suggestion=whole)
    return Workload(tokens // seq_len, seq_len, precision)


def layout_key(layout: Layout) -> str:
    """A layout's axes as a link keeps them: the axes of more than one device, outermost first."""
    return ",".join(f"{axis}={layout.size(axis)}" for axis in PLAN_AXES if layout.size(axis) > 1) or f"{DATA_AXIS}=1"


def _check_setting(model: ModelShape, devices: int, work: Workload) -> None:
    """The model's sizes, D and the workload, checked before any layout is enumerated."""
    check_model(model)
    check_inputs(devices, work, DEFAULT_ASSUMPTIONS)


def layout_keys(model: ModelShape, devices: int, work: Workload) -> list[str]:
    """Every layout of D devices the planner ranks for this model and batch, as keys."""
    _check_setting(model, devices, work)
    return [layout_key(layout) for layout in axis_layouts(model, devices, work, 0)]


@dataclasses.dataclass(frozen=True)
class Pick:
    """A layout the learner picks: its axes (`layout_key`) and the choices that go with them."""

    layout: str
    zero: int = 0
    remat: str = "none"
    microbatches: int = 1
    virtual: int = 1


def pick_of(layout: Layout) -> Pick:
    return Pick(layout_key(layout), layout.zero, layout.remat, layout.microbatches, layout.virtual)


def picked_layout(model: ModelShape, devices: int, work: Workload, pick: Pick) -> Layout:
    """The picked layout, checked: one of the planner's candidates, a ZeRO stage and remat policy it knows, M
    micro-batches that split a data replica's sequences, v interleaved stages no more than a stage's blocks."""
    _check_setting(model, devices, work)
    candidates = {layout_key(layout): layout for layout in axis_layouts(model, devices, work, 0)}
    if pick.layout not in candidates:
        raise LabInputError("layout_not_a_candidate", "{layout} is not a layout of {devices} devices for this model "
                            "and batch", layout=pick.layout, devices=devices)
    layout = candidates[pick.layout]
    check_int("zero", pick.zero, min(ZERO_STAGES), max(ZERO_STAGES))
    if pick.remat not in REMAT:
        raise LabInputError("unknown_remat", "remat must be one of {options}, got {value!r}",
                            options=", ".join(REMAT), value=pick.remat)
    per_replica = work.sequences // (layout.replica * layout.data * layout.expert)
    check_int("microbatches", pick.microbatches, 1, per_replica)
    if per_replica % pick.microbatches:
        raise LabInputError("microbatches_not_splitting", "{microbatches} micro-batches do not split the "
                            "{sequences} sequences of a data replica", microbatches=pick.microbatches,
                            sequences=per_replica)
    check_int("virtual", pick.virtual, 1, max(1, model.layers // layout.stage) if layout.stage > 1 else 1)
    return dataclasses.replace(layout, zero=pick.zero, remat=pick.remat, microbatches=pick.microbatches,
                               virtual=pick.virtual)


def picked(model: ModelShape, hardware: Hardware, devices: int, work: Workload, assumptions: Assumptions,
           pick: Pick) -> Prediction:
    """The planner's prediction of the picked layout."""
    return predict(model, picked_layout(model, devices, work, pick), work, hardware, assumptions)


def figure(prediction: Prediction, quantity: str) -> float:
    """One figure of a prediction, in the unit `QUANTITIES` says."""
    values = {"memory": lambda p: p.memory.total / GB, "step": lambda p: p.step_s, "mfu": lambda p: 100 * p.mfu,
              "bubble": lambda p: p.bubble, "comm": lambda p: sum(c.bytes for c in p.comm) / GB}
    if quantity not in values:
        raise LabInputError("unknown_quantity", "quantity must be one of {options}, got {value!r}",
                            options=", ".join(QUANTITIES), value=quantity)
    return float(values[quantity](prediction))


def layout_figure(model: str, hardware: str, devices: int, seq_len: int, tokens: int, precision: str, layout: str,
                  quantity: str, zero: int = 0, remat: str = "none", microbatches: int = 1, virtual: int = 1,
                  achievable: float | None = FLAT_ACHIEVABLE,
                  overlap: float = DEFAULT_ASSUMPTIONS.overlap) -> float:
    """`figure` of a preset model's picked layout on preset hardware, from plain values (a worksheet's step: every
    FLOP at `achievable` of peak, as its questions say, unless None: each operation at its own rate)."""
    if model not in MODELS or hardware not in HARDWARE:
        raise LabInputError("unknown_preset", "no model {model!r} or no hardware {hardware!r} among the presets",
                            model=model, hardware=hardware)
    assumptions = dataclasses.replace(DEFAULT_ASSUMPTIONS, achievable=achievable, overlap=overlap)
    prediction = picked(MODELS[model], HARDWARE[hardware], devices, workload(tokens, seq_len, precision), assumptions,
                        Pick(layout, zero, remat, microbatches, virtual))
    return figure(prediction, quantity)


# --- the verdict, read as cases --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Reading:
    """The verdict of a ranking as the page says it. `standing`: SINGLE (no other layout of D was tried), ONLY (no
    other layout has a variant that fits), TIE (no part of the runner-up's step is longer) or SEPARATED, by `by`
    (BY_COMPUTE: the runner-up recomputes more; BY_BUBBLE; BY_AXIS: the runner-up's exposed communication on `axis`,
    its `axis_comm`) by `separating_s` seconds. `bound`:
    BOUND_MEMORY (a faster variant of the first's layout, `faster`, needs `faster_bytes`), BOUND_NOTHING (no exposed
    communication and no bubble beside compute), BOUND_BUBBLE or BOUND_AXIS (`bound_comm` the first's axis), its
    `bound_s` seconds of the first's step."""

    first: Prediction
    runner: Prediction | None
    standing: str
    by: str | None
    separating_s: float
    axis_comm: AxisComm | None
    bound: str
    bound_s: float
    bound_comm: AxisComm | None
    faster: Layout | None
    faster_bytes: float


def read_verdict(result: PlanResult) -> Reading | None:
    """The verdict's cases for the page's sentences; None when no plan fits."""
    verdict = result.verdict
    if verdict is None or not result.plans:
        return None
    first = result.plans[0].prediction
    runner = result.plans[1].prediction if len(result.plans) > 1 else None
    standing, by, axis_comm = (ONLY if result.unfit else SINGLE), None, None
    if runner is not None:
        standing = SEPARATED if verdict.separating is not None and verdict.separating_s > 0 else TIE
    if standing == SEPARATED:
        by = {COMPUTE: BY_COMPUTE, BUBBLE: BY_BUBBLE}.get(verdict.separating, BY_AXIS)
        axis_comm = runner.comm_on(verdict.separating) if by == BY_AXIS else None
    faster_bytes, bound_comm = 0.0, None
    if verdict.bound == MEMORY and verdict.faster_unfitting is not None:
        bound = BOUND_MEMORY
        faster_bytes = predict(result.model, verdict.faster_unfitting, result.workload, result.hardware,
                               result.assumptions).memory.total
    elif verdict.bound == COMPUTE:
        bound = BOUND_NOTHING
    elif verdict.bound == BUBBLE:
        bound = BOUND_BUBBLE
    else:
        bound, bound_comm = BOUND_AXIS, first.comm_on(verdict.bound)
    return Reading(first, runner, standing, by, verdict.separating_s, axis_comm, bound, verdict.bound_s, bound_comm,
                   verdict.faster_unfitting, faster_bytes)


def memory_parts(prediction: Prediction) -> list[tuple[str, float]]:
    """A device's memory by part (`predict.Memory`'s fields, in their order), the parts of zero bytes left out."""
    memory = prediction.memory
    return [(field.name, held) for field in dataclasses.fields(memory) if (held := getattr(memory, field.name)) > 0]


def parts(prediction: Prediction, overlap: float) -> dict[str, float]:
    """A plan's step in parts (`search.step_parts`), the parts of zero seconds left out."""
    return {name: seconds for name, seconds in step_parts(prediction, overlap).items() if seconds > 0}


# --- the published runs ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PublishedRow:
    """A published run, predicted at its layout: the planner's best variant, and as the paper ran it."""

    run: PublishedRun
    model: ModelShape
    hardware: Hardware
    best: Plan
    as_run: Plan


def published_rows(assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> tuple[PublishedRow, ...]:
    rows = []
    for run in PUBLISHED.values():
        model, hardware = MODELS[run.model], HARDWARE[run.hardware]
        rows.append(PublishedRow(run, model, hardware, evaluate_published(run, model, hardware, assumptions),
                                 evaluate_published(run, model, hardware, assumptions, as_run=True)))
    return tuple(rows)


# --- the planner's first plan beside a published layout ---------------------------------------------------

GAP_POINTS = 0.05  # the first plan beats the paper's layout by more than 5 points of utilisation: say why


@dataclasses.dataclass(frozen=True)
class Gap:
    """Where the planner's first plan beats a published layout (as run) by more than `GAP_POINTS`: the step part
    (`time_parts`) by which the paper's step is longest over the first's, each one's seconds of it."""

    first: Prediction
    paper: Prediction
    points: float          # the first's utilisation over the paper's, in the paper's counting (MFU or HFU)
    term: str
    first_s: float
    paper_s: float


def time_parts(prediction: Prediction, overlap: float) -> dict[str, float]:
    """A step in the parts the planner prices: compute by kind (`Prediction.compute_parts`), the bubble, each axis's
    exposed communication."""
    found = {name: seconds for name, seconds in step_parts(prediction, overlap).items() if name != COMPUTE}
    return {**dict(prediction.compute_parts), **found}


def utilisation(prediction: Prediction, run: PublishedRun) -> float:
    """MFU, or HFU where the paper counts its recomputation's FLOPs."""
    return prediction.hfu if run.counts_recompute else prediction.mfu


def published_gap(result: PlanResult, run: PublishedRun, first: Prediction | None = None) -> Gap | None:
    """The first plan (or `first`) against the run's layout as the paper ran it, where the first is better by more
    than `GAP_POINTS` or splits the sequence more than the paper did; None otherwise."""
    if not result.plans:
        return None
    first = first or result.plans[0].prediction
    paper = evaluate_published(run, result.model, result.hardware, result.assumptions, as_run=True).prediction
    if utilisation(first, run) - utilisation(paper, run) <= GAP_POINTS and first.layout.seq <= run.seq_axis:
        return None
    return separating(first, paper, run, result.assumptions.overlap)


def separating(first: Prediction, paper: Prediction, run: PublishedRun, overlap: float) -> Gap:
    """The step part (`time_parts`) by which `paper`'s step is longest over `first`'s (both of one workload on one
    number of devices, so seconds compare)."""
    mine, theirs = time_parts(first, overlap), time_parts(paper, overlap)
    term = max(sorted(mine.keys() | theirs.keys()), key=lambda n: theirs.get(n, 0.0) - mine.get(n, 0.0))
    return Gap(first, paper, utilisation(first, run) - utilisation(paper, run), term, mine.get(term, 0.0),
               theirs.get(term, 0.0))


# --- validation: every published run, predicted as it ran -----------------------------------------------

# The constants fitted to the published runs (`benchmarks/plan_published.py --fit` finds them): each hardware's share
# of peak on large matrix products, on the rows of that hardware. Everything else is a datasheet's, a cited
# measurement's or a count (`compute`).
FITTED = (("a100", "matmul_share"), ("h100", "matmul_share"))


@dataclasses.dataclass(frozen=True)
class Validated:
    """A published run beside the planner's prediction of it as it ran (`evaluate_published(as_run=True)`), in the
    paper's counting: `counts` "mfu" or "hfu"."""

    run: PublishedRun
    prediction: Prediction
    counts: str
    predicted: float
    reported: float

    @property
    def error(self) -> float:
        return self.predicted - self.reported


def validate(assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
             hardware: dict[str, Hardware] | None = None) -> tuple[Validated, ...]:
    """Every run of `PUBLISHED`, predicted at its layout as the paper ran it (on `hardware`, the presets by
    default)."""
    hardware = hardware or HARDWARE
    rows = []
    for run in PUBLISHED.values():
        prediction = evaluate_published(run, MODELS[run.model], hardware[run.hardware], assumptions,
                                        as_run=True).prediction
        rows.append(Validated(run, prediction, "hfu" if run.counts_recompute else "mfu",
                              utilisation(prediction, run), run.utilisation))
    return tuple(rows)


def mean_absolute_error(rows: tuple[Validated, ...]) -> float:
    return sum(abs(r.error) for r in rows) / len(rows)


def worst(rows: tuple[Validated, ...]) -> Validated:
    return max(rows, key=lambda r: abs(r.error))
