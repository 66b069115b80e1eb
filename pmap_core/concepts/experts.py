"""Expert parallelism: the transformer's mixture of experts with its experts over an `expert` axis (`train.experts`),
for a page that shows where the tokens go and what it costs.

- `tokens_per_expert(…)`: [device, expert] the token choices each device routes to each expert in one block, before
  and after capacity (a heatmap), and which device of the expert axis holds each expert.
- `dropped_by_capacity(…)`: for each capacity factor c, the slots C per expert, the dropped fraction of the
  choices counted from the dispatch, the one predicted from each sequence's load and C, the one predicted from the
  batch's load alone, and a balanced router's.
- `expert_step(…)`: one value-and-gradient step compiled and run on a data × expert mesh: its loss and gradients
  (beside `one_device`'s), its bytes by collective read from the compiled HLO beside the formula's
  (`costs.analytic.expert_comm_terms`), the all-to-alls alone (`all_to_all_hlo`, `all_to_all_formula`).
- `all_to_all_vs_all_gather(…)`: one array split over D devices, resharded by an all-to-all and gathered by an
  all-gather: each device's bytes read from the two compiled programs, beside the formulas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.train import experts, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import BytesBeside, comm_per_step
from pmap_core.train.mesh import DATA_AXIS, build_mesh
from pmap_core.train.plan import validate

__all__ = ["CapacityRow", "CollectiveBytes", "ExpertStep", "TokenMap", "all_to_all_vs_all_gather",
           "dropped_by_capacity", "expert_step", "formula_bytes", "formula_terms", "one_device", "tokens_per_expert"]

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
    the experts) (`transformer.RoutingStats`); and what a perfectly balanced router would drop, max(0, 1 − c)
    (every expert loaded k·T/E by every sequence)."""

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
                                max(0.0, 1.0 - float(factor))))
    return tuple(rows)


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
