"""Expert parallelism: the transformer's mixture of experts (`transformer.Dims.experts`) with its experts split over
an `expert` mesh axis, and data parallelism over data × expert. A `ParallelProgram` (`ExpertParallelProgram`),
registered as impl "expert" (`train --model transformer --experts 8 --top-k 2 --capacity-factor 4 --mesh
data=2,expert=4`; `--experts E` alone trains the same model data-parallel, every device holding every expert).

What each device holds and runs (GShard, Lepikhin et al. 2020, §3.2: attention split by the batch, the experts over
devices; the split `train.logical.EXPERT_PARALLEL` gives):

    the batch          B / (X·Y) sequences: its rows split over data × expert, as MaxText and GShard split it, so that
                       every device routes tokens of its own. Each sequence is one routing group
                       (`transformer.Routing`): a device routes whole groups, the same groups one device routes.
    attention, the router, the embeddings, the LayerNorms, the head
                       whole on every device: data parallelism over all X·Y devices.
    the experts        E / Y of each block's E experts on each device of the expert axis (their weights' leading
                       `experts` axis over `expert`), the same ones on each of the X devices of `data`.

A block's mixture of experts, per device (`transformer.moe`, with `Split.experts` this module's `_exchanged`):
route its groups into a dispatched buffer (groups, E, C, d_model); one `lax.all_to_all` over `expert` sends each
device the slots of its E / Y experts from every device of its expert axis, (Y·groups, E / Y, C, d_model); the
experts' MLPs run there on their own weights; a second all-to-all sends the outputs back to the devices whose tokens
they are, and the combine product weighs them into the residual stream. Written per device inside one
`jax.shard_map` over (data, expert), as `train.context` is, so the compiled HLO holds the two all-to-alls of each
block (and, in the backward pass, their transposes: two more). The dense one-hot dispatch runs on CPU;
`lax.ragged_all_to_all`, which would send only the filled slots, does not.

The gradient is taken outside the shard_map, the losses of the devices averaged inside it by `lax.pmean`: the
transpose of a parameter's broadcast sums its gradient over the devices that hold the same copy, over data × expert
for the replicated parameters and over `data` only for the experts (each expert's weights live on one device of each
expert group). The bytes per step of each collective, against `costs.analytic.expert_comm_terms`: benchmarks/
expert_parallel.py and tests/core/test_experts.py.

What routing did is read from the trained parameters when a run ends (`RunExtras.trained`): the dropped fraction of
the token-expert choices counted from the dispatch of the run's batch, the one predicted from each sequence's load
of each expert and the capacity (equal, when the dispatch drops exactly the overflow), the one predicted from each
expert's load over the whole batch alone (lower: it misses how unevenly the sequences load the experts), and the
load-balancing loss (`transformer.RoutingStats`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.train import logical, models, transformer
from pmap_core.train.config import MAX_CAPACITY_FACTOR, MAX_EXPERTS, MIN_CAPACITY_FACTOR
from pmap_core.train.mesh import DATA_AXIS, EXPERT_AXIS, build_mesh
from pmap_core.train.program import (
    AnalyticModel,
    HeldBytes,
    MeshProgram,
    PlannedLayout,
    Program,
    ProgramSpec,
    RunExtras,
    abstract,
    bytes_per_device,
    compile_timed,
    param_count,
)
from pmap_core.train.settings import declared, setting
from pmap_core.validation import LabInputError, check_elements

# The tokens (batch, length): rows over data × expert (train.logical.EXPERT_PARALLEL).
TOKENS = logical.spec(logical.TOKENS, logical.EXPERT_PARALLEL)
MAX_MESH_EXPERT = 64  # devices on the expert axis
WHOLE = P()  # the loss, the learning rate
BOTH = (DATA_AXIS, EXPERT_AXIS)


def param_specs(layers: int, experts: int) -> dict[str, P]:
    """Each parameter's PartitionSpec under `logical.EXPERT_PARALLEL`: the experts' weights by their `experts` axis
    over `expert`, everything else whole."""
    return logical.partition_specs(logical.param_axes(models.TRANSFORMER, layers, experts), logical.EXPERT_PARALLEL)


def _exchanged(params: dict, prefix: str, dispatched: jax.Array) -> jax.Array:
    """`transformer.Split.experts` under expert parallelism, per device: the dispatched buffer (groups, E, C, d) split
    by experts into Y blocks, block j to device j of the expert axis (an all-to-all: each device then holds its E / Y
    experts' slots from every device, (Y·groups, E / Y, C, d)); its experts' MLPs on its own weights; the outputs
    returned by the reverse all-to-all, (groups, E, C, d) in the experts' order again."""
    to_experts = lax.all_to_all(dispatched, EXPERT_AXIS, split_axis=1, concat_axis=0, tiled=True)
    ran = transformer.expert_mlps(params, prefix, to_experts)
    return lax.all_to_all(ran, EXPERT_AXIS, split_axis=0, concat_axis=1, tiled=True)


def loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mesh: Mesh, routing: transformer.Routing,
         specs: Mapping[str, P]) -> jax.Array:
    """The transformer's loss over the global batch (cross-entropy plus α times the load-balancing terms), each device
    running it on its rows with its experts, the experts reached by all-to-all; the devices' losses (each over as
    many groups) averaged over data × expert."""
    split = transformer.Split(routing=routing, experts=_exchanged)

    def local(params_, x_, y_):
        return lax.pmean(transformer.loss(params_, x_, y_, split), BOTH)

    return jax.shard_map(local, mesh=mesh, in_specs=(dict(specs), TOKENS, TOKENS), out_specs=WHOLE)(params, x, y)


def expert_mesh(data: int, expert: int) -> Mesh:
    """The first data·expert devices as a (data, expert) mesh, its axes Explicit (`jax.make_mesh`'s default)."""
    return build_mesh({DATA_AXIS: data, EXPERT_AXIS: expert})


def chunk(mesh: Mesh, steps: int, routing: transformer.Routing, specs: Mapping[str, P]):
    """`steps` SGD steps in one `lax.scan`: (params, x, y, learning_rate) -> (params, losses)."""
    def step(params, x, y, learning_rate):
        value, grads = jax.value_and_grad(loss)(params, x, y, mesh, routing, specs)
        return jax.tree.map(lambda p, g: p - learning_rate * g, params, grads), value

    def run(params, x, y, learning_rate):
        return lax.scan(lambda p, _: step(p, x, y, learning_rate), params, None, length=steps)

    return run


def residual_bytes_per_device(mesh: Mesh, routing: transformer.Routing, specs: Mapping[str, P], params: dict,
                              x: Any, y: Any) -> int:
    """The activations one device keeps for the backward pass: JAX's residuals of `loss` over the abstract sharded
    arguments, each counted by its shard."""
    with jax.set_mesh(mesh):
        return models.residual_bytes(models.saved_residuals(
            lambda p, x_, y_: loss(p, x_, y_, mesh, routing, specs), params, x, y), per_device=True)


def dims_of(spec: Any) -> models.Dims:
    """The transformer's sizes of a run (a TrainConfig or a ProgramSpec), its experts and routing with them."""
    return models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab, spec.experts, spec.top_k,
                       spec.capacity_factor)


@dataclasses.dataclass(frozen=True)
class ExpertParallelProgram(MeshProgram):
    """A compiled chunk on a data × expert mesh: run(params, x, y, learning_rate) -> (params, losses), the losses the
    global batch's, one per step."""

    specs: Any = None  # each parameter's PartitionSpec (`param_specs`)

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        return ({name: self.put(value, self.specs[name]) for name, value in params.items()},
                self.put(data.x, TOKENS), self.put(data.y, TOKENS), self.put(np.float32(learning_rate), WHOLE))

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """Each part's copies on the devices that hold it are compared (a replicated parameter's on every device, an
        expert's on the data axis's devices); then each parameter is gathered whole."""
        return self.gathered_params(carry)

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Every device holds the replicated parameters and its E / Y experts of each block; the gradient the step
        computes has the same shards; SGD keeps no state."""
        params = bytes_per_device(carry)
        return HeldBytes(params=params, grads=params, opt=0)


def build(spec: ProgramSpec) -> ExpertParallelProgram:
    """Compile the chunk of `spec` on a (D / mesh_expert) × mesh_expert mesh."""
    mesh = expert_mesh(spec.devices // spec.mesh_expert, spec.mesh_expert)
    dims = dims_of(spec)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers, dims)
    specs = param_specs(spec.layers, spec.experts)
    x, y = models.input_shapes(spec.model, spec.devices * spec.per_device_batch, spec.features)
    args = ({name: abstract(mesh, np.shape(value), specs[name]) for name, value in params.items()},
            abstract(mesh, x.shape, TOKENS, x.dtype), abstract(mesh, y.shape, TOKENS, y.dtype),
            abstract(mesh, (), WHOLE))
    run = chunk(mesh, spec.steps, dims.routing, specs)
    lowered, compiled, seconds = compile_timed(jax.jit(run), args)
    saved = residual_bytes_per_device(mesh, dims.routing, specs, *args[:3])
    return ExpertParallelProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                                 lowered.as_text(dialect="hlo"), mesh, saved_activation_bytes=saved, specs=specs)


# ---- the registry's entry ----

@declared
@dataclasses.dataclass(frozen=True)
class ExpertSettings:
    """The settings this program owns (a run holds them in `TrainConfig.settings`). The CLI's
    `--mesh data=X,expert=Y` sets the expert axis and the devices together; `--experts E` without it selects this
    program with an expert axis of 1."""

    experts: int = setting(0, "transformer: experts E of a mixture of experts in place of every block's MLP, routed "
                           "by --top-k and --capacity-factor (impl expert; with --mesh data=X,expert=Y the experts "
                           "are split over the expert axis) ({low}–{high}; default: {default}, the dense MLP)", low=0,
                           high=MAX_EXPERTS, reported=models.TRANSFORMER)
    top_k: int = setting(2, "with --experts: experts each token is routed to, weighted by their router "
                         "probabilities ({low}–{high}, at most --experts; default: {default})", low=1, high=MAX_EXPERTS,
                         reported=models.TRANSFORMER)
    capacity_factor: float = setting(
        1.25, "with --experts: c of each expert's slots per sequence, ⌈c·seq_len·top_k/experts⌉; a token past them "
        "is dropped by that expert ({low}–{high}; default: {default})", kind=float, low=MIN_CAPACITY_FACTOR,
        high=MAX_CAPACITY_FACTOR, reported=models.TRANSFORMER)
    mesh_expert: int = setting(
        1, "Y devices on the expert axis (--mesh data=X,expert=Y): expert parallelism, the --experts split over them, "
        "the batch over data × expert ({low}–{high})", low=1, high=MAX_MESH_EXPERT, flag=False,
        reported=models.TRANSFORMER, axis=EXPERT_AXIS)


def check(config) -> None:
    """A data × expert mesh trains the transformer's mixture of experts with SGD in float32: at least one expert, k ≤ E,
    the expert axis dividing the devices and the experts, the dispatch tensors within the memory budget."""
    plain = (config.optimizer, config.strategy, config.accum_steps, config.grad_dtype, config.precision) == (
        "sgd", "dp", 1, "float32", "float32")
    if config.model != models.TRANSFORMER or not plain:
        raise LabInputError("experts_need_transformer_sgd",
                            "impl expert trains the transformer's mixture of experts with SGD in float32 (strategy "
                            "dp, no accumulation); got model {model}, optimizer {optimizer}, strategy {strategy}",
                            model=config.model, optimizer=config.optimizer, strategy=config.strategy)
    if config.experts < 1:
        raise LabInputError("expert_impl_needs_experts", "impl expert routes tokens to experts: give --experts E (at "
                            "least 1; E = 0 is the dense MLP, which impl pmap, shard_map or jit trains)")
    if config.top_k > config.experts:
        raise LabInputError("top_k_above_experts", "top_k ({top_k}) must be at most experts ({experts}): each token "
                            "chooses k different experts", top_k=config.top_k, experts=config.experts)
    if config.devices % config.mesh_expert:
        raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                            axis=EXPERT_AXIS, count=config.mesh_expert, name="devices", size=config.devices)
    if config.experts % config.mesh_expert:
        fits = [n for n in range(1, config.experts + 1) if config.experts % n == 0 and n <= config.devices]
        raise LabInputError("experts_not_divisible", "the expert axis ({count} devices) must divide the {experts} "
                            "experts, each device holding experts / {count} of them; expert axes that do: {fits}",
                            count=config.mesh_expert, experts=config.experts, fits=", ".join(map(str, fits)))
    capacity = analytic.expert_capacity(config.capacity_factor, config.seq_len, config.top_k, config.experts)
    slots = config.global_batch * config.seq_len * config.experts * capacity
    check_elements("dispatch and combine tensors", slots)


def refused_elsewhere(config) -> LabInputError:
    return LabInputError("experts_need_expert_impl", "a mixture of experts (experts {experts}, top_k {top_k}, capacity "
                         "factor {capacity}) trains with impl expert (--experts E; --mesh data=X,expert=Y splits the "
                         "experts); got impl {impl!r}", experts=config.experts, top_k=config.top_k,
                         capacity=config.capacity_factor, impl=config.impl)


def comm_terms(config_or_spec: Any, params: float) -> tuple[analytic.CommTerm, ...]:
    """`costs.analytic.expert_comm_terms` of a run (a TrainConfig or a ProgramSpec) with Ψ = `params`."""
    s = config_or_spec
    batch = s.devices * s.per_device_batch
    experts = transformer.expert_param_count(dims_of(s), s.layers)
    return analytic.expert_comm_terms(batch, s.seq_len, s.d_model, s.layers, s.experts, s.top_k, s.capacity_factor,
                                      params, experts, s.devices // s.mesh_expert, s.mesh_expert)


def analytic_model(spec: ProgramSpec, params: int) -> AnalyticModel:
    """The bytes sent per step by the formula (`comm_terms`, every term); none of the bytes held."""
    return AnalyticModel(comm_bytes_per_step=sum(term.bytes for term in comm_terms(spec, params)))


def routing_of(config: Any, params: Mapping[str, np.ndarray]) -> transformer.RoutingStats:
    """What the parameters route on the run's batch (the seed's global batch), every sequence a group."""
    dims = dims_of(config)
    data = models.make_data(models.TRANSFORMER, config.global_batch, config.seq_len, config.seed, dims)
    return transformer.routing_stats(dict(params), data.x, dims.routing)


def _setup(config) -> tuple[str, ...]:
    return (f"E{config.experts}",
            f"k{config.top_k}", f"c{config.capacity_factor:g}")


def _metrics(config) -> dict[str, float]:
    """The formula's bytes per step beside the compiled program's (`comm_bytes_per_step`)."""
    params = transformer.param_count(dims_of(config), config.layers)
    return {"formula_comm_bytes_per_step": sum(term.bytes for term in comm_terms(config, params))}


def _trained(config, params: Mapping[str, np.ndarray]) -> dict[str, float]:
    """The routing of the trained parameters on the run's batch: the dropped fraction counted and predicted, and
    the load-balancing loss the step adds."""
    stats = routing_of(config, params)
    return {"dropped_fraction": stats.dropped_fraction, "predicted_dropped_fraction": stats.predicted_dropped_fraction,
            "mean_load_dropped_fraction": stats.mean_load_dropped_fraction,
            "load_balance_loss": stats.load_balance_loss}


def plans(layout: PlannedLayout) -> dict[str, Any] | None:
    """A model with experts on data alone or data × expert, ZeRO-0, one micro-batch, no remat."""
    if layout.experts and layout.axis in (None, EXPERT_AXIS) and (layout.zero, layout.microbatches, layout.remat) == (
            0, 1, "none"):
        return {"mesh_expert": layout.size}
    return None


PROGRAM = Program("expert", build, ExpertSettings, check, refused_elsewhere,
                  RunExtras(setup=_setup, metrics=_metrics, trained=_trained),
                  baseline=lambda config: {"mesh_expert": 1}, analytic=analytic_model, selects=("experts",),
                  plans=plans)
