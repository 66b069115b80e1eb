"""Every layout of D devices over the mesh axes, each with its best choice of ZeRO stage, remat policy,
micro-batches and interleaved stages; ranked by predicted step time among those that fit, with why the first wins
and what bounds it."""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable

from pmap_core.concepts.planner.predict import (
    DEFAULT_ASSUMPTIONS,
    OUTER_AXES,
    REMAT,
    ZERO_STAGES,
    Assumptions,
    Layout,
    Prediction,
    Workload,
    predict,
)
from pmap_core.concepts.planner.presets import Hardware, ModelShape, PublishedRun, check_hardware, check_model, divisors
from pmap_core.costs import analytic
from pmap_core.validation import LabInputError, check_float, check_int

MAX_PLAN_DEVICES = 65_536
MAX_VIRTUAL = 8
MEMORY, BUBBLE, COMPUTE = "memory", "bubble", "compute"


@dataclasses.dataclass(frozen=True)
class Plan:
    """The best variant of one layout of the axes, and how many of its variants fit."""

    prediction: Prediction
    variants: int
    fitting: int

    @property
    def layout(self) -> Layout:
        return self.prediction.layout


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Why the first plan wins over the runner-up (the step-time part that separates them most, in seconds), and
    what bounds it: `memory` (a faster variant of its layout does not fit; `bound_s` the seconds it would save),
    `bubble` or an axis's exposed communication, whichever is the largest part of its step beside compute (its
    seconds), or `compute` where no part beside compute takes any time (`bound_s` the compute's seconds)."""

    bound: str
    bound_s: float
    faster_unfitting: Layout | None
    separating: str | None
    separating_s: float


@dataclasses.dataclass(frozen=True)
class PlanResult:
    model: ModelShape
    hardware: Hardware
    workload: Workload
    assumptions: Assumptions
    devices: int
    plans: tuple[Plan, ...]          # every layout with a fitting variant, best first
    unfit: tuple[Plan, ...]          # layouts none of whose variants fits, least memory first
    verdict: Verdict | None


def step_parts(p: Prediction, overlap: float) -> dict[str, float]:
    """A plan's step time in parts, seconds: compute, the bubble (its share of compute and inner comm), and each
    axis's exposed communication (`predict.exposed_seconds`: what `overlap` and the axis leave beside compute); they
    sum to `step_s`."""
    inner = sum(c.exposed_s for c in p.comm if c.axis not in OUTER_AXES)
    parts = {COMPUTE: p.compute_s, BUBBLE: (p.compute_s + inner) * p.bubble}
    for c in p.comm:
        parts[c.axis] = c.exposed_s
    return parts


def axis_layouts(model: ModelShape, devices: int, workload: Workload, node: int) -> list[Layout]:
    """Every (data, stage, expert, seq, model) with product D that the model allows: `model` divides the heads,
    `seq` the sequence, `expert` the experts, at most one block per stage, whole sequences per data replica."""
    out = []
    for model_axis in divisors(devices):
        if model.heads % model_axis:
            continue
        rest = devices // model_axis
        for seq in divisors(rest):
            if workload.seq_len % seq:
                continue
            for expert in divisors(rest // seq):
                if expert > 1 and (not model.experts or model.experts % expert):
                    continue
                for stage in divisors(rest // seq // expert):
                    data = rest // seq // expert // stage
                    if stage > model.layers or workload.sequences % (data * expert):
                        continue
                    out.append(Layout(data=data, stage=stage, expert=expert, seq=seq, model=model_axis))
    return out


def _choices(model: ModelShape, layout: Layout, workload: Workload) -> list[tuple[int, int]]:
    """(micro-batches, interleaved stages) to try: every micro-batch count that splits a replica's sequences
    (those ≥ P under a pipeline, and its largest), v up to the blocks per stage."""
    per_replica = workload.sequences // (layout.replica * layout.data * layout.expert)
    counts = divisors(per_replica)
    if layout.stage > 1:
        counts = sorted({m for m in counts if m >= layout.stage} | {counts[-1]})
        top = min(MAX_VIRTUAL, model.layers // layout.stage)
        virtuals = sorted({v for v in (1, 2, 4, top) if 1 <= v <= top})
    else:
        counts = [m for m in counts if m & (m - 1) == 0 or m == counts[-1]]
        virtuals = [1]
    return [(m, v) for m in counts for v in virtuals]


def contexts(model: ModelShape, layout: Layout, workload: Workload) -> tuple[str, ...]:
    """How a seq axis of P may split attention: zig-zag where the sequence cuts into 2P chunks (else, or where the
    layout asks for it, contiguous), and Ulysses where P divides the heads a device holds (its head limit)."""
    if layout.seq == 1:
        return (layout.context,)
    zigzag = workload.seq_len % (2 * layout.seq) == 0 and layout.context != "contiguous"
    ring = "zigzag" if zigzag else "contiguous"
    return (ring, "ulysses") if (model.heads // layout.model) % layout.seq == 0 else (ring,)


Runnable = Callable[[Layout], bool]  # whether a variant can run where the plan is for (the lab: `check.runnable`)


def variants(model: ModelShape, layout: Layout, workload: Workload, remats: tuple[str, ...] = REMAT,
             runnable: Runnable | None = None) -> list[Layout]:
    """Every variant of a layout the search tries: each ZeRO stage (over a group of more than one device), remat
    policy, micro-batch count and interleaving; only those `runnable` accepts, where given."""
    group = layout.data * layout.seq * layout.expert
    stages = ZERO_STAGES if group > 1 else (0,)
    found = [dataclasses.replace(layout, zero=z, remat=r, microbatches=m, virtual=v, context=c)
             for (m, v), z, r, c in itertools.product(_choices(model, layout, workload), stages, remats,
                                                       contexts(model, layout, workload))]
    return [v for v in found if runnable(v)] if runnable is not None else found


def best_variant(model: ModelShape, layout: Layout, workload: Workload, hardware: Hardware,
                 assumptions: Assumptions, remats: tuple[str, ...] = REMAT,
                 runnable: Runnable | None = None, dropout: bool = False) -> tuple[Plan, Prediction] | None:
    """The fastest fitting variant of a layout (or, none fitting, the one with least memory), and the fastest
    variant of all, fitting or not; None where `runnable` accepts none of its variants."""
    predictions = [predict(model, variant, workload, hardware, assumptions, dropout)
                   for variant in variants(model, layout, workload, remats, runnable)]
    if not predictions:
        return None
    fitting = [p for p in predictions if p.fits]
    fastest = min(predictions, key=lambda p: p.step_s)
    chosen = min(fitting, key=lambda p: p.step_s) if fitting else min(predictions, key=lambda p: p.memory.total)
    return Plan(chosen, len(predictions), len(fitting)), fastest


def check_inputs(devices: int, workload: Workload, assumptions: Assumptions) -> None:
    """The setting's numbers in range and its names known, before anything is enumerated."""
    check_int("devices", devices, 1, MAX_PLAN_DEVICES)
    check_int("sequences", workload.sequences, 1, 2**40)
    check_int("seq_len", workload.seq_len, 1, 2**22)
    if assumptions.achievable is not None:
        check_float("achievable", assumptions.achievable, 0.01, 1.0)
    check_float("overlap", assumptions.overlap, 0.0, 1.0)
    if workload.precision not in ("mixed", "float32"):
        raise LabInputError("unknown_precision", "precision must be one of {options}, got {value!r}",
                            options="mixed, float32", value=workload.precision)
    if workload.optimizer not in analytic.OPTIMIZER_STATE_BYTES:
        raise LabInputError("unknown_optimizer", "no optimizer called {name!r}", name=workload.optimizer)
    check_float("capacity_factor", assumptions.capacity_factor, 0.01, 64.0)


PLANS_KEPT = 16  # results of `plan` over every layout kept in this process (a 16,384-device search: about 7 s)


def plan(model: ModelShape, hardware: Hardware, devices: int, workload: Workload,
         assumptions: Assumptions = DEFAULT_ASSUMPTIONS, layouts: list[Layout] | None = None,
         runnable: Runnable | None = None) -> PlanResult:
    """Rank the layouts of `devices` (or the `layouts` given) by their best fitting variant's step time, trying
    only the variants `runnable` accepts where it is given (a layout with none is left out). A search of every
    layout is kept (`PLANS_KEPT`): the same inputs are planned once per process."""
    if layouts is None and runnable is None and _hashable(model, hardware, devices, workload, assumptions):
        return _plan_every_layout(model, hardware, devices, workload, assumptions)
    return _plan(model, hardware, devices, workload, assumptions, layouts, runnable)


def _hashable(*values: object) -> bool:
    """Whether `values` can key the cache (an input of the wrong type is refused by the checks, not by the cache)."""
    try:
        hash(values)
    except TypeError:
        return False
    return True


@functools.lru_cache(maxsize=PLANS_KEPT)
def _plan_every_layout(model: ModelShape, hardware: Hardware, devices: int, workload: Workload,
                       assumptions: Assumptions) -> PlanResult:
    return _plan(model, hardware, devices, workload, assumptions, None, None)


def _plan(model: ModelShape, hardware: Hardware, devices: int, workload: Workload, assumptions: Assumptions,
          layouts: list[Layout] | None, runnable: Runnable | None) -> PlanResult:
    check_model(model)
    check_hardware(hardware)
    check_inputs(devices, workload, assumptions)
    candidates = layouts if layouts is not None else axis_layouts(model, devices, workload, hardware.node)
    if not candidates:
        raise LabInputError("no_layout", "no layout of {devices} devices splits this model and batch: the "
                            "sequences per step ({sequences}) must divide among the data replicas, and an axis "
                            "must divide the heads, the sequence or the blocks",
                            devices=devices, sequences=workload.sequences)
    found = [best for layout in candidates
             if (best := best_variant(model, layout, workload, hardware, assumptions, runnable=runnable))]
    if not found:
        raise LabInputError("no_runnable_layout", "none of the {count} layouts of {devices} devices has a variant "
                            "that can run here", count=len(candidates), devices=devices)
    # Of layouts alike in time, the one that splits the sequence least first (context parallelism adds a collective).
    plans = sorted((p for p, _ in found if p.prediction.fits), key=lambda p: (p.prediction.step_s, p.layout.seq))
    unfit = sorted((p for p, _ in found if not p.prediction.fits), key=lambda p: p.prediction.memory.total)
    fastest = {id(p): f for p, f in found}
    verdict = None
    if plans:
        verdict = _verdict(plans, fastest[id(plans[0])], assumptions)
    return PlanResult(model, hardware, workload, assumptions, devices, tuple(plans), tuple(unfit), verdict)


def _verdict(plans: list[Plan], fastest: Prediction, assumptions: Assumptions) -> Verdict:
    first = plans[0].prediction
    parts = step_parts(first, assumptions.overlap)
    faster = fastest.layout if (not fastest.fits and fastest.step_s < first.step_s) else None
    beside = {name: seconds for name, seconds in parts.items() if name != COMPUTE and seconds > 0}
    if faster:
        bound, bound_s = MEMORY, first.step_s - fastest.step_s
    else:
        bound, bound_s = max(beside.items(), key=lambda kv: kv[1], default=(COMPUTE, first.compute_s))
    separating, separating_s = None, 0.0
    if len(plans) > 1:
        other = step_parts(plans[1].prediction, assumptions.overlap)
        names = [*parts, *(n for n in other if n not in parts)]  # an order, so a tie names the same part each run
        most = max(((n, other.get(n, 0.0) - parts.get(n, 0.0)) for n in names), key=lambda kv: kv[1])
        if most[1] > 0:  # a part no slower in the second explains nothing
            separating, separating_s = most
    return Verdict(bound, bound_s, faster, separating, separating_s)


def published_workload(run: PublishedRun) -> Workload:
    return Workload(sequences=run.sequences, seq_len=run.seq_len)


def published_layout(run: PublishedRun) -> Layout:
    return Layout(data=run.data_axis, stage=run.stage_axis, seq=run.seq_axis, model=run.model_axis,
                  sequence_parallel=run.sequence_parallel)


def evaluate_published(run: PublishedRun, model: ModelShape, hardware: Hardware,
                       assumptions: Assumptions = DEFAULT_ASSUMPTIONS, as_run: bool = False) -> Plan:
    """The paper's own layout (its TP, CP, PP and DP, its kernels), with the planner's best choice of what the paper
    leaves open (ZeRO stage, micro-batches, interleaving, and the remat policy unless `as_run` and the paper says).
    As run, the fastest variant of what the paper ran, whether or not the planner's memory fits it: the paper's run
    fitted, and the planner counts the activations of unfused kernels (Korthikanti et al.), more than a fused
    training framework keeps."""
    remats = (run.remat,) if as_run and run.remat else REMAT
    assumptions = dataclasses.replace(assumptions, flash_attention=run.flash_attention)
    layout, workload = published_layout(run), published_workload(run)
    if not as_run:
        best = best_variant(model, layout, workload, hardware, assumptions, remats, dropout=run.dropout)
        assert best is not None  # every variant is tried
        return best[0]
    tried = [v for v in variants(model, layout, workload, remats)
             if run.zero in (None, v.zero) and run.context in (None, v.context)]
    found = [predict(model, v, workload, hardware, assumptions, run.dropout) for v in tried]
    return Plan(min(found, key=lambda p: p.step_s), len(found), sum(p.fits for p in found))
