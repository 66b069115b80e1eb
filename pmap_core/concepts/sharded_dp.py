"""Every ZeRO strategy at every D of a ladder, in float32 and in mixed precision, measured beside the
formulas: what the sharded data parallel lab draws and says. Pure: runs `train.loop.train`, reads
each run's compiled program, and turns what ran into tidy rows and figures.

Each point is a short real run (`MEASURE_STEPS` steps) of the user's model and settings with one
strategy on D devices: bytes held per device come from its arrays' shards, bytes sent per step from
its compiled HLO (`train.footprint.Footprint`, and `step_comm` for the instructions behind them);
the formulas from `costs.analytic.zero_*`, their one home. Every figure a sentence of the page
states is one of these measurements, taken at the D the sentence names.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence

from pmap_core.costs import analytic
from pmap_core.runtime import device_ladder
from pmap_core.train import loop, models, programs
from pmap_core.train.config import STRATEGIES, TrainConfig, chunk_lengths
from pmap_core.train.footprint import Footprint, collective_runs
from pmap_core.train.plan import validate

MEASURE_STEPS = 2  # bytes do not depend on how long a run trains: a short run measures them all
KINDS = ("params", "grads", "optimizer")
PRECISIONS = analytic.PRECISIONS
OTHER_PRECISION = {"float32": "mixed", "mixed": "float32"}
COLLECTIVE_ORDER = ("all-reduce", "reduce-scatter", "all-gather")

# The formulas of each strategy (Ψ parameters; p, g, k bytes per parameter; K micro-batches per step)
# and where they come from: ZeRO = Rajbhandari et al. 2020, FSDP = Zhao et al. 2023.
MEMORY_FORMULAS = {"dp": "Ψ(p + g + k)", "zero1": "Ψ(p + g + k/D)", "zero2": "Ψ(p + (g + k)/D)",
                   "zero3": "Ψ(p + g + k)/D"}
COMM_FORMULAS = {"dp": "2Ψg·(D−1)/D", "zero1": "Ψ(g + p)·(D−1)/D", "zero2": "Ψ(Kg + p)·(D−1)/D",
                 "zero3": "KΨ(g + 2p)·(D−1)/D"}
SOURCES = {"dp": "ZeRO §3, §7.1", "zero1": "ZeRO §5.1, §7.2.1", "zero2": "ZeRO §5.2, §7.2.1",
           "zero3": "ZeRO §5.3, §7.2.2; FSDP, Zhao et al. 2023"}


# --- the runs ---------------------------------------------------------------------------------


def effective(config: TrainConfig) -> TrainConfig:
    """The config as it trains: mixed precision sends bfloat16 gradients whatever `grad_dtype` says,
    so the config says so too (the run's heading and MLflow then name what ran)."""
    return dataclasses.replace(config, grad_dtype="bfloat16") if config.precision == "mixed" else config


def in_precision(config: TrainConfig, precision: str) -> TrainConfig:
    """The same run in `precision`: the config itself, or the other precision (float32 with float32
    gradients, or mixed)."""
    if precision == config.precision:
        return effective(config)
    return effective(dataclasses.replace(config, precision=precision, grad_dtype="float32"))


def companion(config: TrainConfig) -> TrainConfig:
    """The second run the page trains beside `config` on request: in float32, the other gradient
    dtype; in mixed precision, float32 throughout."""
    config = effective(config)
    if config.precision == "mixed":
        return in_precision(config, "float32")
    return dataclasses.replace(config, grad_dtype="bfloat16" if config.grad_dtype == "float32" else "float32")


def measure_counts(devices: int, measure_max: int) -> tuple[int, ...]:
    """The D the measure button visits: 1, 2, 4, … up to `measure_max`, and the chosen D itself."""
    return tuple(sorted({*device_ladder(measure_max), devices}))


def ladder_configs(config: TrainConfig, device_counts: Sequence[int]) -> list[TrainConfig]:
    """One short run per precision (the config's first), strategy and D (same global batch: strong),
    keeping the D whose D × accumulation steps divides the batch."""
    config = validate(config)  # the ladder below divides by its numbers
    steps = min(MEASURE_STEPS, config.steps)
    return [validate(dataclasses.replace(in_precision(config, p), strategy=s, devices=d, steps=steps, chunk=steps,
                                         impl="jit"))
            for p in (config.precision, OTHER_PRECISION[config.precision])
            for s in STRATEGIES for d in sorted(set(device_counts))
            if config.global_batch % (d * config.accum_steps) == 0]


@dataclasses.dataclass(frozen=True)
class KindComm:
    """One kind of collective in a compiled step, per device."""

    kind: str
    instructions_per_step: float  # instructions run per step
    values_per_step: float        # elements of the whole arrays they carry (a reduce-scatter's input)
    bytes_per_step: float         # ring bytes one device sends (as compiled)
    in_micro_loop: bool           # some of them run once per micro-batch


@dataclasses.dataclass(frozen=True)
class StepComm:
    """What a compiled step communicates, instruction by instruction (train.footprint.collective_runs)."""

    kinds: tuple[KindComm, ...]
    compiled_dtypes: tuple[str, ...]  # element types of the collectives as this backend compiled them
    emitted_dtypes: tuple[str, ...]   # … and as JAX emitted them
    layers: int                       # layers of the model (ZeRO-3 gathers each on its own)

    def kind(self, name: str) -> KindComm | None:
        return next((k for k in self.kinds if k.kind == name), None)


_SHAPE = re.compile(r"^\w+\[(?P<dims>[\d,]*)\]")


def _values(shape: str) -> int:
    match = _SHAPE.match(shape)
    return math.prod(int(d) for d in match["dims"].split(",") if d) if match else 0


def _dtypes(text: str, trips: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(sorted({s.split("[")[0] for r in collective_runs(text, trips) for s in r.collective.shapes}))


def step_comm(config: TrainConfig) -> StepComm:
    """The collectives of the compiled program `config` trained with (its first chunk's): the
    program comes from the registry's cache, so a run just made is read, not compiled again."""
    spec = config.program_spec(chunk_lengths(config.steps, config.chunk)[0])
    program = programs.build(spec)
    trips = (spec.steps, spec.accum_steps)
    kinds: dict[str, list] = {}
    for run in collective_runs(program.compiled.as_text(), trips):
        c = run.collective
        whole = sum(_values(s) for s in c.shapes) * ((c.group_size or 1) if c.kind == "reduce-scatter" else 1)
        entry = kinds.setdefault(c.kind, [0.0, 0.0, 0.0, False])
        entry[0] += run.runs_per_call / spec.steps
        entry[1] += whole * run.runs_per_call / spec.steps
        entry[2] += run.ring_bytes * run.runs_per_call / spec.steps
        entry[3] = entry[3] or run.loop_depth >= 2
    ordered = sorted(kinds, key=lambda k: COLLECTIVE_ORDER.index(k) if k in COLLECTIVE_ORDER else len(COLLECTIVE_ORDER))
    emitted = program.emitted_hlo or program.compiled.as_text()
    return StepComm(tuple(KindComm(k, *kinds[k]) for k in ordered), _dtypes(program.compiled.as_text(), trips),
                    _dtypes(emitted, trips), len(models.LAYERS[config.model]))


@dataclasses.dataclass(frozen=True)
class Measurement:
    """The footprint and the compiled collectives of every run of a ladder, in the same order."""

    footprints: tuple[Footprint, ...]
    comms: tuple[StepComm, ...]

    def at(self, strategy: str, devices: int, precision: str) -> tuple[Footprint, StepComm] | None:
        for f, c in zip(self.footprints, self.comms, strict=True):
            if (f.strategy, f.devices, f.precision) == (strategy, devices, precision):
                return f, c
        return None


def measure_all(config: TrainConfig, device_counts: Sequence[int],
                on_run: Callable[[int, int], None] | None = None) -> Measurement:
    """Every strategy at every D, in both precisions; `on_run(done, total)` after each run."""
    runs = ladder_configs(config, device_counts)
    footprints, comms = [], []
    for index, run in enumerate(runs):
        footprints.append(loop.train(run, measure_scaling=False).footprint)
        comms.append(step_comm(run))
        if on_run is not None:
            on_run(index + 1, len(runs))
    return Measurement(tuple(footprints), tuple(comms))


def of_precision(footprints: Sequence[Footprint], precision: str) -> list[Footprint]:
    return [f for f in footprints if f.precision == precision]


def shown_devices(footprints: Sequence[Footprint], devices: int) -> int:
    """The D the page details: the chosen D when it was measured, else the largest D measured."""
    measured = sorted({f.devices for f in footprints})
    return devices if devices in measured else measured[-1]


# --- bytes held -----------------------------------------------------------------------------


def held(footprint: Footprint) -> dict[str, float]:
    """Measured bytes per device by kind."""
    return {"params": footprint.param_bytes_per_device, "grads": footprint.grad_bytes_per_device,
            "optimizer": footprint.opt_bytes_per_device}


def modelled(footprint: Footprint) -> dict[str, float]:
    m = footprint.model_memory
    return {"params": m.params, "grads": m.grads, "optimizer": m.optimizer}


def memory_rows(footprints: Sequence[Footprint]) -> list[dict]:
    """One row per precision, strategy, D and kind: bytes measured and given by the formula."""
    return [{"precision": f.precision, "strategy": f.strategy, "D": f.devices, "kind": kind,
             "measured": float(held(f)[kind]), "model": float(modelled(f)[kind])} for f in footprints for kind in KINDS]


def total_bytes(footprint: Footprint) -> float:
    return float(sum(held(footprint).values()))


def formula_terms(strategy: str, precision: str, optimizer: str, devices: int) -> str:
    """ZeRO §5's bytes per parameter with this precision's p, g, k: "4 + 4 + 8/3"."""
    b = analytic.state_bytes(precision, optimizer)
    sharded = analytic.ZERO_SHARDED[strategy]
    terms = [f"{v:g}/{devices}" if s and devices > 1 else f"{v:g}"
             for v, s in zip((b.params, b.grads, b.optimizer), sharded, strict=True)]
    return " + ".join(terms)


def formula_bytes_per_param(strategy: str, precision: str, optimizer: str, devices: int) -> float:
    b = analytic.state_bytes(precision, optimizer)
    return analytic.zero_memory_per_device(1.0, devices, strategy, b.params, b.grads, b.optimizer).total


def bytes_per_param_rows(footprints: Sequence[Footprint], devices: int, optimizer: str) -> list[dict]:
    """At `devices`, per precision and strategy: bytes held per parameter, measured (params, gradient
    and optimizer state over Ψ) and by the formula, and how many times less than dp each holds."""
    rows = []
    for precision in dict.fromkeys(f.precision for f in footprints):
        here = {f.strategy: f for f in footprints if f.precision == precision and f.devices == devices}
        dp = here.get("dp")
        for strategy, f in sorted(here.items(), key=lambda item: STRATEGIES.index(item[0])):
            measured = total_bytes(f) / f.param_count
            formula = formula_bytes_per_param(strategy, precision, optimizer, devices)
            rows.append({"precision": precision, "strategy": strategy,
                         "formula": formula_terms(strategy, precision, optimizer, devices),
                         "formula_bytes": formula, "measured_bytes": measured,
                         "saving_measured": total_bytes(dp) / total_bytes(f) if dp else None,
                         "saving_formula": formula_bytes_per_param("dp", precision, optimizer, devices) / formula})
    return rows


@dataclasses.dataclass(frozen=True)
class Zero1Saving:
    """ZeRO-1 against dp at one D, measured, in one precision."""

    precision: str
    zero1_bytes_per_param: float
    dp_bytes_per_param: float

    @property
    def saving(self) -> float:
        return self.dp_bytes_per_param / self.zero1_bytes_per_param


def zero1_savings(footprints: Sequence[Footprint], devices: int) -> dict[str, Zero1Saving]:
    """Per precision measured at `devices` with both dp and zero1."""
    found = {}
    for precision in PRECISIONS:
        here = {f.strategy: f for f in footprints if f.precision == precision and f.devices == devices}
        if "dp" in here and "zero1" in here:
            found[precision] = Zero1Saving(precision, total_bytes(here["zero1"]) / here["zero1"].param_count,
                                           total_bytes(here["dp"]) / here["dp"].param_count)
    return found


def same_at_one_device(footprints: Sequence[Footprint], precision: str) -> float | None:
    """The bytes every strategy held at D = 1 in `precision`, when they all held the same (else None)."""
    totals = {total_bytes(f) for f in footprints if f.devices == 1 and f.precision == precision}
    return totals.pop() if len(totals) == 1 else None


@dataclasses.dataclass(frozen=True)
class Accumulator:
    """What one device holds of the gradient after a step's micro-batches and collective."""

    k: int
    grad_bytes: int          # measured: the accumulator as the strategy keeps it
    whole_bytes: float       # Ψ values at the gradient's element size: a whole gradient
    holds: str               # "whole", "shard" (about 1/D of it) or "part"

    @property
    def ratio(self) -> float:
        return self.grad_bytes / self.whole_bytes


def accumulator(footprint: Footprint, accum_steps: int, optimizer: str) -> Accumulator:
    """Measured: the gradient bytes one device holds against Ψ values of the gradient's element size
    (the parameters' dtype: float32, or bfloat16 in mixed precision)."""
    whole = footprint.param_count * analytic.state_bytes(footprint.precision, optimizer).grads
    ratio = footprint.grad_bytes_per_device / whole
    holds = "whole" if ratio >= 0.99 else "shard" if ratio <= 1.1 / footprint.devices else "part"
    return Accumulator(accum_steps, footprint.grad_bytes_per_device, whole, holds)


@dataclasses.dataclass(frozen=True)
class Peak:
    """One device's bytes during a call of the compiled chunk (`compiled.memory_analysis()`)."""

    total: int
    arguments: int    # the state it holds and its rows of the batch
    outputs: int      # outputs not written over the arguments
    temporaries: int  # the compiler's buffers: activations, gathered layers, gradients


def peak(footprint: Footprint) -> Peak | None:
    if footprint.peak_bytes_per_device is None:
        return None
    m = footprint.compiled_memory
    return Peak(footprint.peak_bytes_per_device, m.get("argument_size_in_bytes", 0),
                m.get("output_size_in_bytes", 0) - m.get("alias_size_in_bytes", 0), m.get("temp_size_in_bytes", 0))


# --- bytes sent -----------------------------------------------------------------------------


def comm_rows(footprints: Sequence[Footprint]) -> list[dict]:
    """One row per strategy and D: bytes each device sends per step, measured (compiled HLO, and the
    program as JAX emitted it) and by the formula."""
    return [{"strategy": f.strategy, "D": f.devices, "measured": float(f.comm_bytes_per_step),
             "emitted": float(f.emitted_comm_bytes_per_step), "model": float(f.model_comm_bytes_per_step)}
            for f in footprints]


def comm_parts(footprint: Footprint) -> list[tuple[str, float]]:
    """(kind, bytes sent per device per step) of the compiled step: all-reduce, reduce-scatter, all-gather."""
    kinds = footprint.comm_by_kind
    return sorted(kinds.items(), key=lambda item: COLLECTIVE_ORDER.index(item[0])
                  if item[0] in COLLECTIVE_ORDER else len(COLLECTIVE_ORDER))


def sends_nothing(footprint: Footprint) -> bool:
    """True on one device: its collectives, compiled or not, carry 0 bytes."""
    return footprint.comm_bytes_per_step == 0 and footprint.emitted_comm_bytes_per_step == 0


def widened(footprint: Footprint) -> bool:
    """True when the backend compiled collectives wider than JAX emitted them (XLA:CPU: bfloat16 as float32)."""
    return footprint.emitted_comm_bytes_per_step > 0 and (
        footprint.comm_bytes_per_step > 1.5 * footprint.emitted_comm_bytes_per_step)


@dataclasses.dataclass(frozen=True)
class LayerGathers:
    """ZeRO-3's all-gathers in one compiled step, against the padded parameters they gather."""

    instructions: float      # all-gather instructions run per step
    layers: int
    accum_steps: int
    values: float            # elements gathered per step
    padded_params: float     # elements of the whole padded parameter buffer

    @property
    def times_params(self) -> float:
        return self.values / self.padded_params

    @property
    def per_layer_and_micro_batch(self) -> float:
        return self.instructions / (self.layers * self.accum_steps)

    @property
    def forward_and_backward(self) -> bool:
        """Each layer gathered twice per micro-batch (before its forward, again before its backward)."""
        return math.isclose(self.per_layer_and_micro_batch, 2.0) and math.isclose(
            self.times_params, 2.0 * self.accum_steps, rel_tol=1e-6)


def layer_gathers(footprint: Footprint, comm: StepComm, accum_steps: int, optimizer: str) -> LayerGathers | None:
    """For a zero3 run on more than one device: its gathers, read from the compiled step."""
    gather = comm.kind("all-gather")
    if footprint.strategy != "zero3" or sends_nothing(footprint) or gather is None:
        return None
    per_value = analytic.state_bytes(footprint.precision, optimizer).params
    padded = footprint.devices * footprint.param_bytes_per_device / per_value  # every device's row
    return LayerGathers(gather.instructions_per_step, comm.layers, accum_steps, gather.values_per_step, padded)


def strategy_rows(measurement: Measurement, devices: int, precision: str) -> list[dict]:
    """At `devices`, per strategy: its formulas and source beside what its compiled step sent (by kind),
    the formula's bytes, its padding and its peak bytes per device."""
    rows = []
    for strategy in STRATEGIES:
        found = measurement.at(strategy, devices, precision)
        if found is None:
            continue
        f, _ = found
        rows.append({"strategy": strategy, "memory_formula": MEMORY_FORMULAS[strategy],
                     "comm_formula": COMM_FORMULAS[strategy], "source": SOURCES[strategy],
                     "hlo": " + ".join(f"{kind} {sent:,.0f}" for kind, sent in comm_parts(f)),
                     "sent": float(f.comm_bytes_per_step), "emitted": float(f.emitted_comm_bytes_per_step),
                     "model_sent": float(f.model_comm_bytes_per_step), "padding": f.padding_bytes_per_device,
                     "peak": f.peak_bytes_per_device})
    return rows


# --- what fits --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Fit:
    """The largest model whose states fit a per-device budget, for one strategy at one D."""

    strategy: str
    devices: int
    measured_bytes_per_param: float  # the run's bytes held per device / Ψ
    model_bytes_per_param: float     # analytic.zero_memory_per_device(1, D, …).total
    largest_measured: float          # budget / measured bytes per parameter
    largest_model: float             # analytic.largest_model_params

    @property
    def ratio(self) -> float:
        return self.largest_measured / self.largest_model


def largest_models(footprints: Sequence[Footprint], budget_bytes: float, devices: int,
                   optimizer: str, precision: str = "float32") -> list[Fit]:
    """Per strategy, in `precision`, at `devices` when it was measured, else at the largest D measured."""
    footprints = of_precision(footprints, precision)
    d = shown_devices(footprints, devices)
    b = analytic.state_bytes(precision, optimizer)
    fits = []
    for f in footprints:
        if f.devices != d:
            continue
        model_per_param = analytic.zero_memory_per_device(1.0, d, f.strategy, b.params, b.grads, b.optimizer).total
        per_param = total_bytes(f) / f.param_count
        fits.append(Fit(f.strategy, d, per_param, model_per_param, budget_bytes / per_param,
                        analytic.largest_model_params(budget_bytes, d, f.strategy, b.params, b.grads, b.optimizer)))
    return fits


def worst_ratio(footprints: Sequence[Footprint]) -> tuple[Footprint, str, float] | None:
    """The point, figure and measured/model ratio farthest from 1 (None when the model is zero everywhere)."""
    found = [(f, name, r) for f in footprints for name, r in f.ratios().items() if r is not None]
    return max(found, key=lambda item: abs(item[2] - 1.0), default=None)


# --- one point of the ladder: what the worksheet reads ------------------------------------------


def measure_point(strategy: str, devices: int, precision: str = "float32", optimizer: str = "adam",
                  batch: int = 48, features: int = 16, hidden: int = 64) -> Footprint:
    """One run of the Measure button's ladder (`ladder_configs`: the lab's MLP, `MEASURE_STEPS` steps)
    with this strategy, precision and D: its bytes held per device (params, gradient, optimizer state,
    padding) read from its arrays' shards, and the bytes it sends per step from its compiled HLO."""
    config = validate(effective(TrainConfig(model="mlp", devices=devices, global_batch=batch, hidden=hidden,
                                            features=features, impl="jit", optimizer=optimizer, strategy=strategy,
                                            precision=precision, steps=MEASURE_STEPS, chunk=MEASURE_STEPS)))
    run = next(c for c in ladder_configs(config, [devices])
               if (c.strategy, c.precision, c.devices) == (strategy, precision, devices))
    return loop.train(run, measure_scaling=False).footprint
