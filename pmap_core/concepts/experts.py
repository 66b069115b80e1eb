"""Expert parallelism: the transformer's mixture of experts with its experts over an `expert` axis (`train.experts`),
for a page that shows where the tokens go and what it costs.

- `tokens_per_expert(…)`: [device, expert] the token choices each device routes to each expert in one block, before
  and after capacity (a heatmap), and which device of the expert axis holds each expert.
- `dropped_by_capacity(…)`: for each capacity factor c, the slots C per expert, the dropped fraction of the
  choices counted from the dispatch, the one predicted from each sequence's load and C, the one predicted from the
  batch's load alone, and a perfectly balanced router's (`balanced_loads`, `balanced_dropped`).
- `expert_step(…)`: one value-and-gradient step compiled and run on a data × expert mesh: its loss and gradients
  (beside `one_device`'s), its bytes by collective read from the compiled HLO beside the formula's
  (`costs.analytic.expert_comm_terms`), the all-to-alls alone (`all_to_all_hlo`, `all_to_all_formula`).
- `all_to_all_vs_all_gather(…)`: one array split over D devices, resharded by an all-to-all and gathered by an
  all-gather: each device's bytes read from the two compiled programs, beside the formulas.

For the page (`labs/expert_parallel.py`), its worksheet and its interview questions: `check_settings` (the page's
limits, then the run as the CLI checks it; the expert axis gcd(D, E) unless given), `measured` (the four above for
those settings, each kept), the prediction's answer (`answer`: the band of the dropped fraction at c = 1), the Scaling
Book's critical batch raised by E/k (`critical_batch`), and small functions a worksheet names (`capacity`,
`dropped_fraction`, `all_to_all_sent`, `step_all_to_all_bytes`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.train import experts, transformer
from pmap_core.train.config import MAX_CAPACITY_FACTOR, MIN_CAPACITY_FACTOR, TrainConfig
from pmap_core.train.footprint import BytesBeside, comm_per_step
from pmap_core.train.mesh import DATA_AXIS, build_mesh
from pmap_core.train.plan import validate
from pmap_core.validation import check_float, check_int

__all__ = ["BANDS", "BalancedLoads", "CapacityRow", "CollectiveBytes", "ExpertStep", "Measurement", "Settings",
           "TokenMap", "all_to_all_sent", "all_to_all_vs_all_gather", "answer", "balanced_dropped", "balanced_loads",
           "buffer_elements", "capacity", "check_settings", "critical_batch", "default_batch", "default_experts",
           "drop_band", "dropped_at", "dropped_by_capacity", "dropped_fraction", "expert_axis", "expert_step",
           "factors_for", "formula_bytes", "formula_terms", "measured", "one_device", "run_config",
           "step_all_to_all_bytes", "step_all_to_all_formula", "tokens_per_expert"]

ALL_TO_ALL = "all-to-all"


def _config(dims: transformer.Dims, layers: int, batch: int, data: int, expert: int) -> TrainConfig:
    """The run these settings are, checked as the CLI checks it: every refusal a LabInputError of one line."""
    return validate(TrainConfig(model="transformer", impl="expert", devices=data * expert, global_batch=batch,
                                layers=layers, d_model=dims.d_model, heads=dims.heads, seq_len=dims.seq_len,
                                vocab=dims.vocab, experts=dims.experts, top_k=dims.top_k,
                                capacity_factor=dims.capacity_factor, mesh_expert=expert))


def _inputs(dims: transformer.Dims, layers: int, batch: int, seed: int):
    params = transformer.init_params(dims, layers, seed)
    x, y = transformer.make_sequences(dims, batch, seed)
    return params, x, y


# ---- where the tokens go ----

@dataclasses.dataclass(frozen=True)
class TokenMap:
    """One block's routing of a batch split over data × expert devices (device d holds rows d·B/D … (d+1)·B/D − 1,
    the mesh's order). `routed` [device, expert]: the choices its tokens make of each expert; `kept`: those given a
    slot; `holder` [expert]: the device of the expert axis that holds it (E / Y consecutive experts each); C slots
    per expert per sequence, so `capacity` × sequences per device is the most an expert can keep of one device."""

    routed: np.ndarray
    kept: np.ndarray
    holder: tuple[int, ...]
    capacity: int
    sequences_per_device: int


def tokens_per_expert(dims: transformer.Dims, layers: int, batch: int, data: int, expert: int, seed: int = 0,
                      block: int = 0, params: Mapping[str, np.ndarray] | None = None) -> TokenMap:
    """Block `block`'s routing of the seed's `batch` sequences (by `params`, or the seed's initial parameters) as a
    `data` × `expert` mesh splits them."""
    _config(dims, layers, batch, data, expert)
    initial, x, _ = _inputs(dims, layers, batch, seed)
    stats = transformer.routing_stats(dict(params or initial), x, dims.routing)
    devices = data * expert
    per_device = batch // devices

    def by_device(counts: np.ndarray) -> np.ndarray:
        return counts[block].reshape(devices, per_device, dims.experts).sum(axis=1)

    holder = tuple(e // (dims.experts // expert) for e in range(dims.experts))
    return TokenMap(by_device(stats.load), by_device(stats.kept), holder, stats.capacity, per_device)


@dataclasses.dataclass(frozen=True)
class CapacityRow:
    """One capacity factor: C slots per expert per sequence; the dropped fraction of the choices counted from the
    dispatch (`measured`), predicted from each sequence's load of each expert and C (`predicted`, equal to it), and
    from each expert's load over the whole batch alone (`from_mean_load`, lower by how unevenly the sequences load
    the experts) (`transformer.RoutingStats`); and what a perfectly balanced router would drop (`balanced_dropped`:
    every sequence loads each expert ⌊k·T/E⌋ or ⌈k·T/E⌉ times, so with C = ⌈c·k·T/E⌉ it is not max(0, 1 − c) unless
    E divides k·T)."""

    capacity_factor: float
    capacity: int
    measured: float
    predicted: float
    from_mean_load: float
    balanced: float


def dropped_by_capacity(dims: transformer.Dims, layers: int, batch: int, factors: Sequence[float] = (0.5, 1, 2, 4),
                        seed: int = 0, params: Mapping[str, np.ndarray] | None = None) -> tuple[CapacityRow, ...]:
    """The routing of the seed's `batch` sequences (by `params`, or the seed's initial parameters) under each capacity
    factor of `factors`: the router's choices do not depend on c, only how many of them find a slot."""
    initial, x, _ = _inputs(dims, layers, batch, seed)
    rows = []
    for factor in factors:
        stats = transformer.routing_stats(dict(params or initial), x, transformer.Routing(dims.top_k, factor))
        rows.append(CapacityRow(float(factor), stats.capacity, stats.dropped_fraction,
                                stats.predicted_dropped_fraction, stats.mean_load_dropped_fraction,
                                balanced_dropped(factor, dims.seq_len, dims.top_k, dims.experts)))
    return tuple(rows)


@dataclasses.dataclass(frozen=True)
class BalancedLoads:
    """A perfectly balanced router's loads in one sequence of T tokens: its k·T choices spread as evenly as E experts
    allow, `high_count` experts chosen `low` + 1 times and the other E − `high_count` `low` times (`low` = ⌊k·T/E⌋,
    `high_count` = k·T mod E; none of them chosen `low` + 1 times where E divides k·T)."""

    choices: int
    experts: int
    low: int
    high_count: int

    @property
    def even(self) -> float:
        """k·T/E, which need not be whole."""
        return self.choices / self.experts

    @property
    def most(self) -> int:
        """⌈k·T/E⌉: the most choices the router sends one expert."""
        return self.low + (self.high_count > 0)


def balanced_loads(seq_len: int, top_k: int, experts: int) -> BalancedLoads:
    """The loads of a router that sends each expert of `experts` as nearly k·T/E of a sequence's choices as whole
    numbers allow (each token still picks k different experts: token i picks (i·k + j) mod E, j < k)."""
    choices = seq_len * top_k
    return BalancedLoads(choices, experts, choices // experts, choices % experts)


def balanced_dropped(capacity_factor: float, seq_len: int, top_k: int, experts: int) -> float:
    """The fraction of its choices a perfectly balanced router drops at C = ⌈c·k·T/E⌉ slots per expert and
    sequence: Σ_e max(0, load_e − C) / (k·T), with the loads of `balanced_loads`. None at c ≥ 1 (C ≥ ⌈k·T/E⌉, the
    most it sends one expert); below 1, max(0, 1 − c) where E divides k·T and c·k·T/E is whole, else less (the
    ceiling rounds the slots up)."""
    loads = balanced_loads(seq_len, top_k, experts)
    slots = capacity(capacity_factor, seq_len, top_k, experts)
    over = (loads.high_count * max(0, loads.low + 1 - slots)
            + (experts - loads.high_count) * max(0, loads.low - slots))
    return over / loads.choices


# ---- one step on a data × expert mesh, its bytes ----

def formula_terms(dims: transformer.Dims, layers: int, batch: int, data: int, expert: int
                  ) -> tuple[analytic.CommTerm, ...]:
    """Each term of a step's bytes per device (`costs.analytic.expert_comm_terms`)."""
    return analytic.expert_comm_terms(batch, dims.seq_len, dims.d_model, layers, dims.experts, dims.top_k,
                                      dims.capacity_factor, transformer.param_count(dims, layers),
                                      transformer.expert_param_count(dims, layers), data, expert)


def formula_bytes(dims: transformer.Dims, layers: int, batch: int, data: int, expert: int) -> dict[str, float]:
    """The formula's bytes per device per step, by collective (the names compiled HLO gives them)."""
    return analytic.comm_by_collective(formula_terms(dims, layers, batch, data, expert))


@dataclasses.dataclass(frozen=True)
class ExpertStep(BytesBeside):
    """One value-and-gradient step on a data × expert mesh, per device."""

    data: int
    expert: int
    loss: float
    grads: dict[str, np.ndarray]        # gathered whole
    comm_by_kind: dict[str, float]      # ring bytes per collective, from the compiled HLO
    formula_by_kind: dict[str, float]   # the same by the formula
    all_to_alls: int                    # all-to-all instructions the compiled step runs
    hlo: str                            # the compiled program

    @property
    def all_to_all_hlo(self) -> float:
        return self.comm_by_kind.get(ALL_TO_ALL, 0.0)

    @property
    def all_to_all_formula(self) -> float:
        return self.formula_by_kind.get(ALL_TO_ALL, 0.0)


def expert_step(dims: transformer.Dims, layers: int, batch: int, data: int, expert: int,
                seed: int = 0) -> ExpertStep:
    """`jax.value_and_grad` of `train.experts.loss` for `batch` sequences, compiled on a `data` × `expert` mesh and run
    once on the seed's parameters and sequences."""
    _config(dims, layers, batch, data, expert)
    mesh = experts.expert_mesh(data, expert)
    specs = experts.param_specs(layers, dims.experts)
    params, x, y = _inputs(dims, layers, batch, seed)
    placed = ({name: jax.device_put(value, NamedSharding(mesh, specs[name])) for name, value in params.items()},
              *(jax.device_put(t, NamedSharding(mesh, experts.TOKENS)) for t in (x, y)))
    step = jax.value_and_grad(lambda p, x_, y_: experts.loss(p, x_, y_, mesh, dims.routing, specs))
    compiled = jax.jit(step).lower(*placed).compile()
    loss, grads = compiled(*placed)
    hlo = compiled.as_text()
    count = sum(1 for line in hlo.splitlines() if f" {ALL_TO_ALL}(" in line)
    return ExpertStep(data, expert, float(loss), {name: np.asarray(g) for name, g in grads.items()},
                      comm_per_step(hlo, 1).by_kind, formula_bytes(dims, layers, batch, data, expert), count, hlo)


def one_device(dims: transformer.Dims, layers: int, batch: int, seed: int = 0) -> tuple[float, dict[str, np.ndarray]]:
    """The model's loss and gradients on one device, every expert on it, the same parameters, sequences and groups
    (one sequence each, as every device of a split run routes them)."""
    params, x, y = _inputs(dims, layers, batch, seed)
    split = transformer.Split(routing=dims.routing)
    loss, grads = jax.jit(jax.value_and_grad(lambda p: transformer.loss(p, jnp.asarray(x), jnp.asarray(y), split)))(
        params)
    return float(loss), {name: np.asarray(g) for name, g in grads.items()}


# ---- all-to-all against all-gather ----

@dataclasses.dataclass(frozen=True)
class CollectiveBytes:
    """One float32 array of `array_bytes` split over `devices` devices (each holding 1/D of it): what each device sends
    to reshard it by an all-to-all (it keeps 1/D of its block) and to gather it whole by an all-gather, read from the
    two compiled programs (`*_hlo`) beside the formulas (`*_formula`): (D − 1)/D of its block, (D − 1)/D of the array.
    The all-to-all sends 1/D of the all-gather's bytes; the JAX Scaling Book ("Sharded Matrices", the AllToAll) times
    it at a quarter of the all-gather on a bidirectional ring, whose links forward the chunks part of the way."""

    devices: int
    array_bytes: int
    all_to_all_hlo: float
    all_gather_hlo: float
    all_to_all_formula: float
    all_gather_formula: float

    @property
    def ratio(self) -> float:
        """all-to-all bytes over all-gather bytes, from the HLO: 1/D."""
        return self.all_to_all_hlo / self.all_gather_hlo


def all_to_all_vs_all_gather(elements: int, devices: int) -> CollectiveBytes:
    """An array of `elements` float32 values, split by rows over `devices` devices of `data`, resharded by one
    `lax.all_to_all` (rows to columns) and gathered by one `lax.all_gather`: each program compiled, its bytes per
    device read from the HLO (`train.footprint.comm_per_step`)."""
    mesh = build_mesh({DATA_AXIS: devices})
    width = devices
    rows = max(1, elements // (width * devices)) * devices  # whole rows for every device (`elements` rounded down)
    shape = jax.ShapeDtypeStruct((rows, width), np.float32, sharding=NamedSharding(mesh, P(DATA_AXIS)))

    def reshard(block):
        return lax.all_to_all(block, DATA_AXIS, split_axis=1, concat_axis=0, tiled=True)

    def gather(block):
        return lax.all_gather(block, DATA_AXIS, axis=0, tiled=True)

    found = {}
    for name, body, out in (("all-to-all", reshard, P(None, DATA_AXIS)), ("all-gather", gather, P())):
        program = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P(DATA_AXIS), out_specs=out, check_vma=False))
        found[name] = comm_per_step(program.lower(shape).compile().as_text(), 1).bytes_per_step
    array_bytes = rows * width * 4
    return CollectiveBytes(devices, array_bytes, found["all-to-all"], found["all-gather"],
                           analytic.all_to_all_bytes(array_bytes / devices, devices),
                           (devices - 1) / devices * array_bytes)


# ---- for the page (`labs/expert_parallel.py`), its worksheet and its interview questions ----

VOCAB = transformer.Dims().vocab
# The page's model: small enough that a step compiles in seconds on 2 shared cores at the largest settings.
PAGE_D_MODEL, PAGE_HEADS, PAGE_SEQ_LEN, PAGE_LAYERS = 16, 2, 16, 2
MAX_BATCH, MAX_EXPERTS, MAX_DEVICES = 32, 16, 16
FACTORS = (0.5, 1.0, 2.0, 4.0)       # the capacity factors every measurement routes under
PREDICT_FACTOR = 1.0                 # the prediction asks for the dropped fraction at c = 1
# The prediction's answers: the dropped fraction of the token-expert choices at c = 1, in bands.
NONE, UNDER_QUARTER, UNDER_HALF, OVER_HALF = "none", "under 25%", "25% to 50%", "over 50%"
BANDS = (NONE, UNDER_QUARTER, UNDER_HALF, OVER_HALF)
# The JAX Scaling Book's dense threshold: a bfloat16 matmul is compute-bound on a TPU v5e when each device multiplies
# more than peak FLOP/s ÷ HBM bandwidth = 1.97e14 / 8.2e11 ≈ 240 tokens ("Rooflines"); an expert sees k/E of them.
DENSE_CRITICAL_TOKENS = 240.0


def drop_band(fraction: float) -> str:
    """The band of BANDS a dropped fraction falls in: NONE only for 0; a fraction on a boundary goes up."""
    if fraction <= 0:
        return NONE
    return UNDER_QUARTER if fraction < 0.25 else UNDER_HALF if fraction < 0.5 else OVER_HALF


def default_experts(devices: int) -> int:
    """The page's first expert count on D devices: the fewest, at least 4, that D divides (at most MAX_EXPERTS)."""
    devices = max(devices, 1)
    return min(devices * -(-4 // devices), MAX_EXPERTS)


def default_batch(devices: int) -> int:
    """The page's first batch on D devices: the fewest sequences, at least 8, that split over them."""
    devices = max(devices, 1)
    return min(devices * -(-8 // devices), MAX_BATCH)


def expert_axis(devices: int, experts: int) -> int:
    """The expert axis the page picks: the most devices of D that divide E (gcd(D, E)); the rest form `data`."""
    return math.gcd(max(devices, 1), max(experts, 1))


@dataclasses.dataclass(frozen=True)
class Settings:
    """A page's run: `batch` sequences over D = `devices` devices, Y = `expert` of them on the expert axis, X = D / Y
    on `data`, the page's model with `dims.experts` experts (top-k, capacity factor)."""

    batch: int
    devices: int
    expert: int
    dims: transformer.Dims
    layers: int = PAGE_LAYERS

    @property
    def data(self) -> int:
        return self.devices // self.expert


def check_settings(batch: int, experts: int, top_k: int, capacity_factor: float, devices: int,
                   expert: int | None = None) -> Settings:
    """The page's sizes within its limits, then the run as the CLI checks it (`train.plan.validate`: top-k at most E,
    the expert axis dividing D and E, D dividing the batch); a LabInputError of one line that says which otherwise.
    `expert` None: `expert_axis(D, E)`."""
    batch = check_int("batch", batch, 1, MAX_BATCH)
    experts = check_int("experts", experts, 1, MAX_EXPERTS)
    top_k = check_int("top_k", top_k, 1, MAX_EXPERTS)
    devices = check_int("devices", devices, 1, MAX_DEVICES)
    capacity_factor = check_float("capacity_factor", capacity_factor, MIN_CAPACITY_FACTOR, MAX_CAPACITY_FACTOR)
    expert = expert_axis(devices, experts) if expert is None else check_int("expert", expert, 1, MAX_DEVICES)
    dims = transformer.Dims(PAGE_D_MODEL, PAGE_HEADS, PAGE_SEQ_LEN, VOCAB, experts, top_k, capacity_factor)
    validate(TrainConfig(model="transformer", impl="expert", devices=devices, global_batch=batch,
                         layers=PAGE_LAYERS, d_model=dims.d_model, heads=dims.heads, seq_len=dims.seq_len,
                         vocab=dims.vocab, experts=experts, top_k=top_k, capacity_factor=capacity_factor,
                         mesh_expert=expert))
    return Settings(batch, devices, expert, dims)


def factors_for(capacity_factor: float) -> tuple[float, ...]:
    """FACTORS with the page's own capacity factor among them, in order."""
    return tuple(sorted({*FACTORS, float(capacity_factor)}))


@dataclasses.dataclass(frozen=True)
class Measurement:
    """What one Measure click ran: block 0's routing per device and expert (`tokens_per_expert`), the drops per
    capacity factor (`dropped_by_capacity`, FACTORS and the page's c), one compiled step (`expert_step`), and one
    array of the dispatched buffer's size resharded by an all-to-all against gathered by an all-gather over the
    expert axis (`all_to_all_vs_all_gather`; None with one device on it)."""

    tokens: TokenMap
    drops: tuple[CapacityRow, ...]
    step: ExpertStep
    versus: CollectiveBytes | None


PARTS = ("routing", "drops", "step", "versus")  # what `measured` runs, in order (`on_part` names each)


def buffer_elements(settings: Settings) -> int:
    """Values in one device's dispatched buffer of one block: its B/D sequences × E experts × C slots × d_model."""
    dims = settings.dims
    slots = analytic.expert_capacity(dims.capacity_factor, dims.seq_len, dims.top_k, dims.experts)
    return settings.batch // settings.devices * dims.experts * slots * dims.d_model


@functools.lru_cache(maxsize=8)
def _part(settings: Settings, part: str):
    dims, layers, batch = settings.dims, settings.layers, settings.batch
    if part == "routing":
        return tokens_per_expert(dims, layers, batch, settings.data, settings.expert)
    if part == "drops":
        return dropped_by_capacity(dims, layers, batch, factors_for(dims.capacity_factor))
    if part == "step":
        return expert_step(dims, layers, batch, settings.data, settings.expert)
    if settings.expert == 1:
        return None
    return all_to_all_vs_all_gather(buffer_elements(settings) * settings.expert, settings.expert)


def run_config(settings: Settings) -> TrainConfig:
    """The page's run as `train` takes it (X = D / Y on data, Y on the expert axis): what its trace steps."""
    return _config(settings.dims, settings.layers, settings.batch, settings.data, settings.expert)


def measured(settings: Settings, on_part=None) -> Measurement:
    """Every part of a Measurement of the page's settings, each kept for the next click of the same settings;
    `on_part(name)` before each of PARTS."""
    found = {}
    for part in PARTS:
        if on_part is not None:
            on_part(part)
        found[part] = _part(settings, part)
    return Measurement(found["routing"], found["drops"], found["step"], found["versus"])


def dropped_at(drops: Sequence[CapacityRow], factor: float) -> CapacityRow:
    """The row of `drops` at capacity factor `factor`."""
    return next(row for row in drops if row.capacity_factor == float(factor))


def answer(measurement: Measurement) -> str:
    """The prediction's answer: the band of the dropped fraction counted at c = 1 (`drop_band`)."""
    return drop_band(dropped_at(measurement.drops, PREDICT_FACTOR).measured)


# ---- small functions a worksheet or a question names ----

def capacity(capacity_factor: float, seq_len: int, top_k: int, experts: int) -> int:
    """C = ⌈c · T · k / E⌉ slots per expert per sequence (`costs.analytic.expert_capacity`)."""
    return analytic.expert_capacity(capacity_factor, seq_len, top_k, experts)


def dropped_fraction(experts: int, top_k: int, batch: int, capacity_factor: float = PREDICT_FACTOR) -> float:
    """The dropped fraction of the choices, counted from the dispatch, of the seed's `batch` sequences routed by the
    page's model (initial parameters) under capacity factor c: runs on one device, whatever D is."""
    dims = transformer.Dims(PAGE_D_MODEL, PAGE_HEADS, PAGE_SEQ_LEN, VOCAB, experts, top_k, capacity_factor)
    return dropped_by_capacity(dims, PAGE_LAYERS, batch, (capacity_factor,))[0].measured


def critical_batch(experts: int, top_k: int, dense: float = DENSE_CRITICAL_TOKENS) -> float:
    """Tokens per device above which the experts' matmuls are compute-bound: the dense threshold × E / k, since
    each expert multiplies only k/E of a device's tokens (JAX Scaling Book, "All the Transformer Math", Sparsity and
    Mixture-of-Experts)."""
    return dense * experts / top_k


def all_to_all_sent(elements: int, devices: int) -> float:
    """Bytes each device sends to reshard an array of `elements` float32 values split over `devices` devices by an
    all-to-all, read from the compiled program (`all_to_all_vs_all_gather`); 0 on one device."""
    return 0.0 if devices == 1 else all_to_all_vs_all_gather(elements, devices).all_to_all_hlo


@functools.lru_cache(maxsize=8)
def _page_step(experts: int, top_k: int, capacity_factor: float, batch: int, expert: int) -> ExpertStep:
    settings = check_settings(batch, experts, top_k, capacity_factor, expert, expert)
    return expert_step(settings.dims, settings.layers, batch, 1, expert)


def step_all_to_all_bytes(experts: int, top_k: int, capacity_factor: float, batch: int, expert: int) -> float:
    """Bytes per device per step the all-to-alls of the page's model send on a 1 × `expert` mesh, read from the
    compiled step's HLO."""
    return _page_step(experts, top_k, capacity_factor, batch, expert).all_to_all_hlo


def step_all_to_all_formula(experts: int, top_k: int, capacity_factor: float, batch: int, expert: int) -> float:
    """The formula's bytes for the same (`costs.analytic.expert_comm_terms`)."""
    return _page_step(experts, top_k, capacity_factor, batch, expert).all_to_all_formula
