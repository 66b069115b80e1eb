"""Context parallelism: the transformer's positions split over a `seq` mesh axis, with data parallelism over
`data`. A `ParallelProgram` (`ContextParallelProgram`), registered as impl "context"
(`train --model transformer --mesh data=X,seq=P --context allgather|ring|ulysses`).

Each device holds its rows' block of positions (seq_len / P tokens of each sequence of its data group) and runs
the whole model on them, every parameter replicated: the embedding, the LayerNorms, the MLP and the head need
nothing from the other positions. Attention does — position i attends to every position ≤ i — and the three schemes
differ in how the keys and values of the other blocks reach it (`transformer.Split.attend`):

    allgather  Q stays in its block; K and V are all-gathered over `seq` (MaxText's default context parallelism; the
               Ultra-Scale Playbook; Llama 3, arXiv 2407.21783, §3.3.2). The backward pass reduce-scatters dK, dV.
    ring       Ring attention (Liu, Zaharia and Abbeel 2023, arXiv 2310.01889): the Q block stays, the K/V blocks
               are passed to the next device P − 1 times (`lax.ppermute`), each folded into an online softmax (a
               running maximum, numerator and denominator, as blockwise/flash attention keeps them), so the order
               in which the blocks arrive does not change the result. Which block a device holds at each step is
               `ring_schedule`'s: the program reads its permutation and its table of blocks from it.
    ulysses    DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509): `lax.all_to_all` turns Q, K and V from
               split by positions into split by heads; each device attends over the whole sequence with H/P heads;
               one more all-to-all turns the output back. Needs P dividing the heads (so P ≤ heads).

The backward pass is JAX's autodiff through each scheme (a choice: no custom VJP). For the ring that is the
transpose of the forward's `lax.scan`: dK and dV travel the ring the other way, P − 1 ppermutes, as the paper's
backward pass passes them; but autodiff keeps as residuals every K/V block a device saw and each step's
probabilities, so a device keeps as much for its backward pass as under allgather, where the paper's own backward
pass passes K and V around again to keep only its block (measured: `saved_activation_bytes`, benchmarks/
context_parallel.py).

Causal balance: with a causal mask and contiguous blocks, device P − 1 attends to every earlier position and device
0 to its own block only. The zig-zag layout (the Ultra-Scale Playbook's; Striped Attention, arXiv 2311.09431, is the
striped variant) cuts the sequence into 2P chunks and gives device i chunks i and 2P − 1 − i: every device then
has the same count of unmasked (query, key) pairs (`concepts.context.work_per_device`). The layout is a host-side
reordering of each sequence's tokens (`arrange`, as a data loader would do it); every scheme masks by the true
positions (`layout_positions`), and the loss, a mean over every token, does not depend on their order. These
programs compute every block densely, masked pairs included, so the work a kernel that skips masked blocks would
save is a count here, not a time.

The whole loss runs per device inside one `jax.shard_map` over (data, seq), the loss averaged with `lax.pmean`; the
gradient is taken outside it, so the transpose of the replicated parameters' broadcast all-reduces their gradient
over data × seq (the DESIGN's idiomatic form). The bytes per step of each collective, against
`costs.analytic.context_comm_terms`: benchmarks/context_parallel.py and tests/core/test_context.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from pmap_core.costs import analytic
from pmap_core.train import logical, models, transformer
from pmap_core.train.config import MAX_MESH_SEQ
from pmap_core.train.mesh import DATA_AXIS, SEQ_AXIS, build_mesh
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
from pmap_core.validation import LabInputError

SCHEMES = analytic.CONTEXT_SCHEMES          # allgather, ring, ulysses
LAYOUTS = ("contiguous", "zigzag")
# The tokens (batch, length): rows over `data`, positions over `seq` (train.logical.CONTEXT_PARALLEL).
TOKENS = logical.spec(logical.TOKENS, logical.CONTEXT_PARALLEL)
WHOLE = P()  # every parameter, on every device


# ---- the layout and the ring's schedule ----

def chunk_count(devices: int, layout: str) -> int:
    """How many equal chunks a layout cuts a sequence into: P (contiguous), 2P (zig-zag)."""
    return devices * (2 if layout == "zigzag" else 1)


def layout_chunks(devices: int, layout: str) -> tuple[tuple[int, ...], ...]:
    """[device]: the chunks of the sequence it holds, in order (`chunk_count` chunks in all): contiguous, device i
    chunk i; zig-zag, chunks i and 2P − 1 − i."""
    if layout not in LAYOUTS:
        raise LabInputError("unknown_context_layout", "context_layout must be one of {options}, got {value!r}",
                            options=", ".join(LAYOUTS), value=layout)
    if layout == "contiguous":
        return tuple((i,) for i in range(devices))
    return tuple((i, 2 * devices - 1 - i) for i in range(devices))


def layout_positions(seq_len: int, devices: int, layout: str) -> np.ndarray:
    """(P, seq_len / P): the positions in the sequence of each device's tokens, in the order it holds them."""
    size = seq_len // chunk_count(devices, layout)
    return np.array([[c * size + j for c in chunks for j in range(size)] for chunks in layout_chunks(devices, layout)])


def arrange(tokens: np.ndarray, devices: int, layout: str) -> np.ndarray:
    """Host tokens (rows, seq_len) reordered so that splitting them into P equal blocks by position gives each device
    its layout's tokens (the identity for the contiguous layout)."""
    return np.asarray(tokens)[:, layout_positions(tokens.shape[1], devices, layout).reshape(-1)]


@dataclasses.dataclass(frozen=True)
class RingSchedule:
    """Which K/V block each device holds at each step of ring attention, and where it passes it.

    pairs: the ppermute's (source, target) pairs: device i sends to i + 1 (mod P).
    blocks: [step][device] the block it holds at that step (a block is the device it started on): device i holds
        block (i − step) mod P, its own at step 0; P steps, P − 1 passes.
    chunks: [block] the sequence chunks it holds (`layout_chunks`), which say the block's positions.
    """

    devices: int
    layout: str
    pairs: tuple[tuple[int, int], ...]
    blocks: tuple[tuple[int, ...], ...]
    chunks: tuple[tuple[int, ...], ...]

    def positions(self, seq_len: int) -> np.ndarray:
        """(P, seq_len / P): each block's positions (`layout_positions`)."""
        return layout_positions(seq_len, self.devices, self.layout)


def ring_schedule(devices: int, layout: str = "contiguous") -> RingSchedule:
    """The ring of `devices` devices for `layout` (`RingSchedule`)."""
    pairs = tuple((i, (i + 1) % devices) for i in range(devices))
    blocks = tuple(tuple((i - step) % devices for i in range(devices)) for step in range(devices))
    return RingSchedule(devices, layout, pairs, blocks, layout_chunks(devices, layout))


# ---- the three attention cores, per device (inside shard_map over `seq`) ----

def _gathered(q, k, v, positions: np.ndarray):
    """All-gather CP: K and V whole over `seq`, Q this device's block."""
    table = jnp.asarray(positions)
    whole_k = lax.all_gather(k, SEQ_AXIS, axis=1, tiled=True)
    whole_v = lax.all_gather(v, SEQ_AXIS, axis=1, tiled=True)
    return transformer.causal_attention(q, whole_k, whole_v, table[lax.axis_index(SEQ_AXIS)], table.reshape(-1))


def _ulysses(q, k, v, positions: np.ndarray):
    """DeepSpeed-Ulysses: positions -> heads (all-to-all), attention over the whole sequence, heads -> positions."""
    def to_heads(a):
        return lax.all_to_all(a, SEQ_AXIS, split_axis=2, concat_axis=1, tiled=True)
    whole = jnp.asarray(positions).reshape(-1)  # the blocks in device order, as the all-to-all concatenates them
    out = transformer.causal_attention(to_heads(q), to_heads(k), to_heads(v), whole, whole)
    return lax.all_to_all(out, SEQ_AXIS, split_axis=1, concat_axis=2, tiled=True)


def _ring(q, k, v, schedule: RingSchedule):
    """Ring attention: the Q block stays; the K/V block held is folded into an online softmax, then passed on
    (`schedule.pairs`), P − 1 times; which block is held at each step is `schedule.blocks`."""
    me = lax.axis_index(SEQ_AXIS)
    positions = jnp.asarray(schedule.positions(q.shape[1] * schedule.devices))
    blocks = jnp.asarray(schedule.blocks)
    q_positions = positions[me]
    scale = jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    lowest = jnp.finfo(q.dtype).min

    def fold(state, kv, step):
        """The running maximum, denominator and numerator, with one more K/V block."""
        (maximum, denominator, acc), (k_block, v_block) = state, kv
        scores = jnp.einsum("bqhk,bshk->bhqs", q, k_block) / scale
        causal = q_positions[:, None] >= positions[blocks[step, me]][None, :]
        scores = jnp.where(causal, scores, lowest)
        new = jnp.maximum(maximum, scores.max(axis=-1))
        kept = jnp.exp(maximum - new)        # what the earlier blocks' sums are worth under the new maximum
        weights = jnp.exp(scores - new[..., None])
        acc = acc * jnp.moveaxis(kept, 1, 2)[..., None] + jnp.einsum("bhqs,bshk->bqhk", weights, v_block)
        return new, denominator * kept + weights.sum(axis=-1), acc

    b, t, h, _ = q.shape
    start = (jnp.full((b, h, t), lowest, q.dtype), jnp.zeros((b, h, t), q.dtype), jnp.zeros_like(q))
    state = fold(start, (k, v), 0)  # its own block first: it holds every query's own position, a finite maximum

    def step(carry, n):
        state, kv = carry
        kv = lax.ppermute(kv, SEQ_AXIS, schedule.pairs)
        return (fold(state, kv, n), kv), None

    (state, _), _ = lax.scan(step, (state, (k, v)), jnp.arange(1, schedule.devices))
    _, denominator, acc = state
    return acc / jnp.moveaxis(denominator, 1, 2)[..., None]


def attention_core(scheme: str, devices: int, seq_len: int, layout: str):
    """The attention core of `scheme` on P = `devices` devices of `seq`, (q, k, v) -> output, each a device's
    block (b, seq_len / P, heads, d_head), for `transformer.Split.attend` (to run inside a shard_map over `seq`)."""
    if scheme == "ring":
        schedule = ring_schedule(devices, layout)
        return lambda q, k, v: _ring(q, k, v, schedule)
    positions = layout_positions(seq_len, devices, layout)
    core = {"allgather": _gathered, "ulysses": _ulysses}[scheme]
    return lambda q, k, v: core(q, k, v, positions)


def loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mesh: Mesh, scheme: str,
         layout: str = "contiguous") -> jax.Array:
    """The transformer's cross-entropy over the global batch, each device running the whole model on its block of
    positions (x and y `arrange`d for `layout`, split by `TOKENS`): the embedding adds its positions' embeddings,
    attention reaches the other blocks by `scheme`, and the devices' losses (each a mean over as many tokens) are
    averaged over data × seq."""
    devices, seq_len = mesh.shape[SEQ_AXIS], x.shape[1]
    positions = layout_positions(seq_len, devices, layout)
    attend = attention_core(scheme, devices, seq_len, layout)

    def local(params_, x_, y_):
        split = transformer.Split(attend=attend, positions=jnp.asarray(positions)[lax.axis_index(SEQ_AXIS)])
        return lax.pmean(transformer.loss(params_, x_, y_, split), (DATA_AXIS, SEQ_AXIS))

    return jax.shard_map(local, mesh=mesh, in_specs=(WHOLE, TOKENS, TOKENS), out_specs=WHOLE)(params, x, y)


def context_mesh(data: int, seq: int) -> Mesh:
    """The first data·seq devices as a (data, seq) mesh, its axes Explicit (`jax.make_mesh`'s default)."""
    return build_mesh({DATA_AXIS: data, SEQ_AXIS: seq})


def chunk(mesh: Mesh, steps: int, scheme: str, layout: str):
    """`steps` SGD steps in one `lax.scan`: (params, x, y, learning_rate) -> (params, losses)."""
    def step(params, x, y, learning_rate):
        value, grads = jax.value_and_grad(loss)(params, x, y, mesh, scheme, layout)
        return jax.tree.map(lambda p, g: p - learning_rate * g, params, grads), value

    def run(params, x, y, learning_rate):
        return lax.scan(lambda p, _: step(p, x, y, learning_rate), params, None, length=steps)

    return run


def residual_bytes_per_device(mesh: Mesh, scheme: str, layout: str, params: dict, x: Any, y: Any) -> int:
    """The activations one device keeps for the backward pass: JAX's residuals of `loss` over the abstract sharded
    arguments, each counted by its shard (a residual of the shard_map is every device's, stacked over data × seq)."""
    with jax.set_mesh(mesh):
        return models.residual_bytes(models.saved_residuals(
            lambda p, x_, y_: loss(p, x_, y_, mesh, scheme, layout), params, x, y), per_device=True)


@dataclasses.dataclass(frozen=True)
class ContextParallelProgram(MeshProgram):
    """A compiled chunk on a data × seq mesh: run(params, x, y, learning_rate) -> (params, losses), the losses the
    global batch's, one per step; x and y are placed `arrange`d for the layout."""

    def place(self, params: dict[str, np.ndarray], data: Any, learning_rate: float) -> tuple:
        spec = self.spec
        tokens = [arrange(values, spec.mesh_seq, spec.context_layout) for values in (data.x, data.y)]
        return ({name: self.put(value, WHOLE) for name, value in params.items()},
                self.put(tokens[0], TOKENS), self.put(tokens[1], TOKENS), self.put(np.float32(learning_rate), WHOLE))

    def final_params(self, carry: Any) -> tuple[dict[str, np.ndarray], float]:
        """Every device's copy of each parameter compared with the first's."""
        diff = 0.0
        for leaf in carry.values():
            first = np.asarray(leaf.addressable_shards[0].data)
            for shard in leaf.addressable_shards[1:]:
                diff = max(diff, float(np.max(np.abs(np.asarray(shard.data) - first), initial=0.0)))
        return {name: np.asarray(leaf.addressable_shards[0].data) for name, leaf in carry.items()}, diff

    def held_bytes(self, carry: Any) -> HeldBytes:
        """Every device holds every parameter, and the whole gradient after its all-reduce; SGD keeps no state."""
        params = bytes_per_device(carry)
        return HeldBytes(params=params, grads=params, opt=0)


def build(spec: ProgramSpec) -> ContextParallelProgram:
    """Compile the chunk of `spec` on a (D / mesh_seq) × mesh_seq mesh."""
    mesh = context_mesh(spec.devices // spec.mesh_seq, spec.mesh_seq)
    dims = models.Dims(spec.d_model, spec.heads, spec.seq_len, spec.vocab)
    params = models.init_params(spec.model, spec.features, spec.hidden, 0, spec.layers, dims)
    x, y = models.input_shapes(spec.model, spec.devices * spec.per_device_batch, spec.features)
    args = ({name: abstract(mesh, np.shape(value), WHOLE) for name, value in params.items()},
            abstract(mesh, x.shape, TOKENS, x.dtype), abstract(mesh, y.shape, TOKENS, y.dtype),
            abstract(mesh, (), WHOLE))
    run = chunk(mesh, spec.steps, spec.context, spec.context_layout)
    lowered, compiled, seconds = compile_timed(jax.jit(run), args)
    saved = residual_bytes_per_device(mesh, spec.context, spec.context_layout, *args[:3])
    return ContextParallelProgram(spec, tuple(mesh.devices.flat), compiled, seconds, param_count(params),
                                  lowered.as_text(dialect="hlo"), mesh, saved_activation_bytes=saved)


# ---- the registry's entry ----

@declared
@dataclasses.dataclass(frozen=True)
class ContextSettings:
    """The settings this program owns (a run holds them in `TrainConfig.settings`). The CLI's `--mesh data=X,seq=Y`
    sets the seq axis and the devices together."""

    mesh_seq: int = setting(
        1, "Y devices on the seq axis (--mesh data=X,seq=Y): context parallelism, the transformer's positions split "
        "over them, attention reaching the others' by --context ({low}–{high})", low=1, high=MAX_MESH_SEQ,
        flag=False, reported=models.TRANSFORMER, axis=SEQ_AXIS)
    context: str = setting(
        "allgather", "with --mesh data=X,seq=Y: how attention reaches the positions of the other devices of the seq "
        "axis: allgather (K and V all-gathered, MaxText's default), ring (ring attention: K/V blocks passed around "
        "the ring, an online softmax) or ulysses (DeepSpeed-Ulysses: all-to-all from positions to heads; the seq "
        "axis must divide --heads) (default: {default})", choices=SCHEMES, reported=models.TRANSFORMER)
    context_layout: str = setting(
        "contiguous", "with --mesh data=X,seq=Y: which positions each device holds: contiguous (one block each), or "
        "zigzag (chunks i and 2P−1−i of 2P, the same causal work on every device) (default: {default})",
        choices=LAYOUTS, reported=models.TRANSFORMER)


def check(config) -> None:
    """A data × seq mesh trains the transformer with SGD in float32, its parameters replicated; the seq axis divides
    the devices and the sequence (twice over for zig-zag), and, for Ulysses, the heads."""
    plain = (config.optimizer, config.strategy, config.accum_steps, config.grad_dtype, config.precision) == (
        "sgd", "dp", 1, "float32", "float32")
    if config.model != models.TRANSFORMER or not plain:
        raise LabInputError("context_needs_transformer_sgd",
                            "impl context splits the transformer's positions and trains it with SGD in float32 "
                            "(strategy dp, no accumulation); got model {model}, optimizer {optimizer}, strategy "
                            "{strategy}", model=config.model, optimizer=config.optimizer, strategy=config.strategy)
    seq = config.mesh_seq
    if config.devices % seq:
        raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                            axis=SEQ_AXIS, count=seq, name="devices", size=config.devices)
    if config.context_layout == "zigzag" and config.seq_len % (2 * seq):
        raise LabInputError("zigzag_not_divisible", "the zig-zag layout cuts seq_len ({size}) into 2 × {count} "
                            "chunks, two for each device of the seq axis: 2 × {count} must divide it",
                            size=config.seq_len, count=seq)
    if config.seq_len % seq:
        raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                            axis=SEQ_AXIS, count=seq, name="seq_len", size=config.seq_len)
    if config.context == "ulysses" and config.heads % seq:
        raise LabInputError("ulysses_needs_heads", "Ulysses splits the {heads} heads over the {count} devices of the "
                            "seq axis: the seq axis must divide them (at most {heads} devices); use --context ring or "
                            "allgather", count=seq, heads=config.heads)


def refused_elsewhere(config) -> LabInputError:
    return LabInputError("context_needs_seq_mesh", "context parallelism ({context}, {layout}) splits positions over "
                         "the seq axis of a data × seq mesh (impl context, --mesh data=X,seq=Y); got impl {impl!r}",
                         context=config.context, layout=config.context_layout, impl=config.impl)


def comm_terms(config_or_spec: Any, params: float) -> tuple[analytic.CommTerm, ...]:
    """`costs.analytic.context_comm_terms` of a run (a TrainConfig or a ProgramSpec) with Ψ = `params`."""
    s = config_or_spec
    seq = s.mesh_seq
    batch = s.devices * s.per_device_batch
    return analytic.context_comm_terms(s.context, batch, s.seq_len, s.d_model, s.layers, params, s.devices // seq, seq)


def analytic_model(spec: ProgramSpec, params: int) -> AnalyticModel:
    """The bytes sent per step by the formula (`comm_terms`, every term); none of the bytes held."""
    return AnalyticModel(comm_bytes_per_step=sum(term.bytes for term in comm_terms(spec, params)))


def mesh_of(config) -> tuple[str, int]:
    """A run's data × seq mesh: its label ("4x2") and the seq axis's size."""
    return f"{config.devices // config.mesh_seq}x{config.mesh_seq}", config.mesh_seq


def _setup(config) -> tuple[str, ...]:
    return (config.context,) + ((config.context_layout,) if config.context_layout != "contiguous" else ())


def _metrics(config) -> dict[str, float]:
    """The formula's bytes per step beside the compiled program's (`comm_bytes_per_step`)."""
    params = transformer.param_count(config.dims, config.layers)
    return {"formula_comm_bytes_per_step": sum(term.bytes for term in comm_terms(config, params))}


def plans(layout: PlannedLayout) -> dict[str, Any] | None:
    """A seq axis beside data, ZeRO-0, one micro-batch, no remat, a dense model: K and V all-gathered, the scheme
    the planner's seq-axis formula prices."""
    if layout.axis == SEQ_AXIS and (layout.zero, layout.microbatches, layout.remat, layout.experts) == (
            0, 1, "none", 0):
        return {"mesh_seq": layout.size, "context": "allgather"}
    return None


PROGRAM = Program("context", build, ContextSettings, check, refused_elsewhere,
                  RunExtras(setup=_setup, metrics=_metrics, mesh=mesh_of, mesh_axis=SEQ_AXIS),
                  baseline=lambda config: {"mesh_seq": 1}, analytic=analytic_model, plans=plans)
