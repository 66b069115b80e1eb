"""One plan's predictions per device: memory, communication per mesh axis, compute, the pipeline's bubble, the
step time and the utilisation — every formula the lab's own, each already checked against compiled programs on
the pages of its axis.

A plan puts D = replica · data · stage · expert · seq · model devices on the lab's mesh axes (`train.mesh.MESH_AXES`,
outermost first: `model` spans neighbouring devices), with a ZeRO stage over the devices that hold the same
parameters, a remat policy, M micro-batches per step and v interleaved stages per device.

- Memory (bytes per device, the first pipeline stage, which holds the most):
  - parameters, gradients, optimizer state: `costs.analytic.state_bytes` of the precision, each divided by its ZeRO
    group where the stage shards it (ZeRO, Rajbhandari et al. 2020, §5), the dense parameters' weights split by
    `model` (their norms and row-parallel biases whole, as Megatron-LM splits them; the embedding and head by the
    vocabulary where `Assumptions.vocab_parallel`) and the blocks by `stage`, the experts' by `expert · model · stage`;
  - activations: Korthikanti et al. 2022 (arXiv 2205.05198) §4, term by term (`concepts.activation_memory.TERMS`:
    the paper's 16-bit bytes under mixed precision, the lab's float32 ones as XLA keeps them, `COMPILED_LAB`,
    otherwise), widths scaled to the model's (an MLP of f instead of 4h, grouped K and V), the tensor terms divided
    by t and the rest too under sequence parallelism, for the micro-batches in flight on the first stage: 1 without
    a pipeline, min(M, P) under 1F1B (§4.2.3), times 1 + (P − 1)/(P · v) interleaved (Narayanan et al. 2021,
    arXiv 2104.04473, §2.2.2); under recomputation, one block's recomputed activations besides, which its backward
    pass holds again; the embedding's output and the final LayerNorm's (`ends_bytes`);
  - the loss's vocabulary-wide float32 tensors, `LOSS_TENSORS` × b · s · V;
  - the step's tokens (x and y, int32); where the state is not donated (`Assumptions.donated_state`), the new
    parameters and optimizer state the step writes beside the ones it reads; the lab pipeline's flat buffers.
- Communication (ring bytes each device sends per step, as `train.footprint` reads them from HLO), by axis:
  `model` Megatron's 4 all-reduces of the residual stream per block (`analytic.transformer_tensor_comm_bytes_per_step`;
  under sequence parallelism the same bytes as all-gathers and reduce-scatters, 2 more all-gathers per block in the
  backward pass, and the whole parameters' gradient all-reduced), `seq` K and V gathered and their gradients
  scattered (`analytic.context_comm_terms`, all-gather), `expert` 4 all-to-alls per block
  (`analytic.expert_comm_terms`), `stage` one activation forward and one gradient back per micro-batch and virtual
  stage (in lockstep, `Assumptions.lab_pipeline`: one each way per slot of 2(M + P − 1)), `data` the gradient's
  collectives by ZeRO stage (`analytic.zero_comm_bytes_per_step`).
  An axis whose devices all sit in one node (with the axes inside it) uses the node's link, else the link across
  nodes; time = bytes / bandwidth (the α term left out).
- Compute: model FLOPs per token 6Ψ_active + 12 · L · q · s (PaLM, Chowdhery et al. 2022, Appendix B), the
  hardware's also the recomputation (full remat: one more forward, 8Ψ; selective: the attention core's forward),
  at `achievable` × peak.
- Step: (compute + exposed comm inside the pipeline) · (1 + (P − 1)/(v · M)) + exposed data-axis comm; a share
  `overlap` of every axis's comm is hidden behind compute. MFU = model FLOPs / (step · D · peak).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types

import pmap_core.concepts.planner.compute as compute
from pmap_core.concepts.activation_memory import TERMS, Term
from pmap_core.concepts.planner.presets import Hardware, Level, ModelShape
from pmap_core.costs import analytic
from pmap_core.train.mesh import DATA_AXIS, EXPERT_AXIS, MESH_AXES, MODEL_AXIS, REPLICA_AXIS, SEQ_AXIS, STAGE_AXIS

REMAT = ("none", "selective", "full")
ZERO_STAGES = (0, 1, 2, 3)
STRATEGY_OF_STAGE = ("dp", "zero1", "zero2", "zero3")
NODE, CLUSTER = "node", "cluster"
# The lab's mesh axes, replica outermost (hybrid sharded data parallelism, `train.hsdp`): the state sharded over `data`
# within a replica, the gradient's shard all-reduced over `replica`, each axis priced on the level its devices span.
PLAN_AXES = MESH_AXES
OUTER_AXES = (REPLICA_AXIS, DATA_AXIS)  # their collectives run once a step, outside the pipeline's micro-batches
LOGIT_BYTES = 4  # a vocabulary-wide value of the loss: float32, whatever the precision


@dataclasses.dataclass(frozen=True)
class Layout:
    """Devices per mesh axis, and the choices that go with them."""

    data: int = 1
    stage: int = 1
    expert: int = 1
    seq: int = 1
    model: int = 1
    zero: int = 0                  # ZeRO stage over the devices that hold the same parameters
    remat: str = "none"
    microbatches: int = 1          # M per step on each data replica
    virtual: int = 1               # interleaved stages per device (1: plain GPipe / 1F1B bubble)
    sequence_parallel: bool = True  # Megatron's: the residual stream split by positions over `model`
    context: str = "zigzag"        # how `seq` splits attention: zigzag, contiguous (ring) or ulysses (`compute`)
    replica: int = 1               # replicas of the data axis's ZeRO group (HSDP), outermost

    @property
    def devices(self) -> int:
        return self.replica * self.data * self.stage * self.expert * self.seq * self.model

    def size(self, axis: str) -> int:
        return getattr(self, axis)

    def label(self) -> str:
        """e.g. "data=64 stage=16 model=8 · ZeRO-1 · remat none · SP on · M=16 · v=2" (SP: sequence parallelism,
        named where a model axis makes it a choice)."""
        axes = " ".join(f"{axis}={self.size(axis)}" for axis in PLAN_AXES if self.size(axis) > 1) or "data=1"
        parts = [axes, f"ZeRO-{self.zero}", f"remat {self.remat}"]
        if self.model > 1:
            parts.append(f"SP {'on' if self.sequence_parallel else 'off'}")
        if self.seq > 1:
            parts.append(f"CP {self.context}")
        if self.stage > 1 or self.microbatches > 1:
            parts.append(f"M={self.microbatches}")
        if self.virtual > 1:
            parts.append(f"v={self.virtual}")
        return " · ".join(parts)


@dataclasses.dataclass(frozen=True)
class Workload:
    """What one step trains: `sequences` of `seq_len` tokens, in a precision ("mixed": bfloat16 values with
    float32 master weights and Adam; "float32"), with an optimizer."""

    sequences: int
    seq_len: int
    precision: str = "mixed"
    optimizer: str = "adam"
    fp8: bool = False  # the products in FP8 at the hardware's FP8 rate (state and activations as `precision` says)

    @property
    def tokens(self) -> int:
        return self.sequences * self.seq_len

    @property
    def value_bytes(self) -> int:
        return 2 if self.precision == "mixed" else 4


@dataclasses.dataclass(frozen=True)
class Assumptions:
    """What the planner takes without measuring it: the share of peak a device sustains on the step's products,
    the share of each axis's communication hidden behind compute, whether attention is a fused kernel that keeps
    no score-sized tensor (FlashAttention), and a mixture of experts' capacity factor.

    And how the programs that run the plan are written, where it changes what a device holds or sends (the
    defaults: a training framework's, Megatron-LM's; the lab's own programs: `check.LAB_ASSUMPTIONS`):
    `donated_state`, the step updates the training state in place (its buffers donated to the compiled step);
    else it writes a second copy of the parameters and optimizer state beside the one it reads. `vocab_parallel`,
    the embedding and the output head are split over `model` by the vocabulary (Megatron-LM's); else they are whole
    on every device of the model axis. `lab_pipeline`, a pipeline runs as the lab's `train.pipeline` does: one
    program for every stage, in lockstep (each of the 2(M + P − 1) slots of its schedule sends an activation forward
    and a gradient back between every pair of neighbouring stages, busy or not; else each boundary carries each
    micro-batch's activation and gradient once per virtual stage); a stage's parameters in one flat buffer (its
    backward cuts each parameter out of it, a copy, and returns a flat gradient, which the slot adds to the stage's
    accumulator: one more of each); and a backward that recomputes its stage's forward through a switch over
    every stage's forward, whose linearisation keeps every branch's residuals (JAX's, for `lax.switch`): the
    recomputation holds every stage's blocks for one micro-batch, not its own only."""

    achievable: float | None = None  # None: each operation at its own rate (`compute`); a share: every FLOP at it
    overlap: float = 0.5
    flash_attention: bool = True
    capacity_factor: float = 1.25
    donated_state: bool = True
    vocab_parallel: bool = True
    lab_pipeline: bool = False


DEFAULT_ASSUMPTIONS = Assumptions()


@dataclasses.dataclass(frozen=True)
class AxisComm:
    axis: str
    size: int
    level: str            # NODE or CLUSTER
    link: str             # the link's name
    bytes: float          # ring bytes each device sends per step
    seconds: float        # bytes / bandwidth
    exposed_s: float = 0.0  # the seconds left beside compute (`exposed_seconds`)


@dataclasses.dataclass(frozen=True)
class Memory:
    """Bytes one device holds at its peak, by part (`activation_bytes` says what each covers)."""

    params: float
    grads: float
    optimizer: float
    activations: float     # its blocks' saved activations, the recomputed block's, the embedding's and final norm's
    logits: float          # the loss's b · s · V float32 tensors (`LOSS_TENSORS`)
    inputs: float = 0.0    # the step's tokens, x and y
    state_copy: float = 0.0  # the parameters and optimizer state the step writes, where not donated
    buffers: float = 0.0   # a flat stage buffer's copies (`Assumptions.lab_pipeline`)

    @property
    def total(self) -> float:
        return (self.params + self.grads + self.optimizer + self.activations + self.logits + self.inputs
                + self.state_copy + self.buffers)


@dataclasses.dataclass(frozen=True)
class Prediction:
    layout: Layout
    memory: Memory
    comm: tuple[AxisComm, ...]
    model_flops: float        # one step, every device
    hardware_flops: float     # the same with recomputation
    compute_s: float          # per device
    bubble: float             # (P − 1)/(v · M): the bubble over the ideal time
    exposed_comm_s: float
    step_s: float
    mfu: float
    hfu: float
    fits: bool
    memory_budget: float
    compute_parts: tuple[tuple[str, float], ...] = ()  # compute's seconds by kind (`shaped_compute`)

    def comm_on(self, axis: str) -> AxisComm | None:
        return next((c for c in self.comm if c.axis == axis), None)


# ---- memory ----

# What XLA keeps of JAX's list for the lab's float32 blocks where its fusion keeps less than autodiff saves, read off
# XLA's buffer assignment of the lab's compiled steps (the buffers live when the backward pass starts;
# `check.check_plan` sets the total beside the compiled peak): bytes per unit, in place of `TERMS`' lab column.
COMPILED_LAB = {
    # A LayerNorm's 2(h − mean) is its h − mean doubled, recomputed inside the fusion that reads it: each keeps h − mean
    # and the normalised value (8sbh) in place of its input (4sbh), not three tensors (12sbh).
    "LayerNorm internals (two)": 8,
    # 1 − tanh² and the two products are recomputed from tanh inside the backward's fusion: of the three, tanh is kept.
    "tanh-GELU internals (4h)": 16,
    # A broadcast constant: fused into the select that reads it, never a buffer of its own.
    "zeros for the masked scores": 0,
    # An iota comparison: recomputed inside each fusion that reads it.
    "causal mask": 0,
}
# The vocabulary-wide float32 tensors (b · s · V each) live when the backward pass starts. Mixed precision
# (Megatron-LM's fused cross-entropy, a gathered embedding): the logits and their gradient. The lab (float32, as XLA
# compiles JAX's unfused code): the embedding's one-hot tokens (its product's input, kept for the table's gradient),
# the head's product and the logits (its bias added), and the logits times the targets' one-hot.
LOSS_TENSORS = {"mixed": 2, "float32": 4}
TOKEN_BYTES = 4  # an int32 token id
LAB_VALUE_BYTES = 4  # the lab's activations: float32


def _mlp_scale(model: ModelShape) -> float:
    """A 4h-wide term of the paper's list, at this model's MLP: f (three of them under SwiGLU's gate)."""
    return model.d_ff * (1.5 if model.gated_mlp else 1.0) / (4 * model.d_model)


def _width(term: Term, model: ModelShape) -> float:
    """The term's width relative to the paper's: its MLP terms scale with f, K and V with the grouped heads."""
    if "(4h)" in term.name:
        return _mlp_scale(model) * (model.top_k * 1.0 if model.experts else 1.0)
    if term.name.startswith("Q and K"):
        return (model.q_width + model.kv_width) / (2 * model.d_model)
    if term.name.startswith("V "):
        return model.kv_width / model.d_model
    return 1.0


def coefficient(term: Term, precision: str) -> float:
    """A term's bytes per unit: the paper's 16-bit ones under mixed precision; the lab's float32 ones as XLA keeps
    them (`COMPILED_LAB`) otherwise."""
    return term.paper if precision == "mixed" else COMPILED_LAB.get(term.name, term.lab)


@functools.lru_cache(maxsize=2)  # one per precision, read once per prediction
def _coefficients(precision: str) -> types.MappingProxyType[str, float]:
    return types.MappingProxyType({term.name: coefficient(term, precision) for term in TERMS})


@functools.lru_cache(maxsize=4096)  # pure, and a search asks again for the same few blocks
def layer_activation_bytes(model: ModelShape, precision: str, positions: int, keys: int, t: int, remat: str,
                           sequence_parallel: bool, flash_attention: bool, dropout: bool) -> float:
    """One block's saved activations for one sequence on one device, of which it holds `positions` and attends to
    `keys` (both s without context parallelism), tensor-parallel degree t (Korthikanti et al. 2022, Table 2: the
    paper's 16-bit bytes under mixed precision, the lab's float32 ones as XLA keeps them otherwise). In float32 (the
    lab's JAX, whose autodiff keeps the all-gather's result), context parallelism's gathered K and V of the other
    positions too."""
    seq_split = t if sequence_parallel else 1
    if remat == "full":  # the block's input only (§4.3: 2sbh in 16-bit)
        return (2 if precision == "mixed" else 4) * positions * model.d_model / seq_split
    total = 0.0
    for term in TERMS:
        value = coefficient(term, precision)
        if not value or ("dropout" in term.name and not dropout):
            continue
        if remat == "selective" and not term.kept_by_selective:
            continue
        divide = t if term.split_by_tensor else seq_split
        if term.unit == "sbh":
            total += value * _width(term, model) * positions * model.d_model / divide
        elif not flash_attention:
            total += value * model.heads * positions * keys / t
    if precision != "mixed" and keys > positions:  # K and V of the other positions, as gathered
        total += 2 * LAB_VALUE_BYTES * (keys - positions) * model.kv_width / t
    return total


def ends_bytes(model: ModelShape, precision: str, positions: int, t: int, sequence_parallel: bool) -> float:
    """What the embedding and the head keep for one sequence outside the blocks: the residual stream's first value
    (the embedding's output) and the final LayerNorm's input, internals and output, each of the residual stream's
    width, by the same coefficients as a block's LayerNorms (16 float32 bytes per position and unit of width in the
    lab, as XLA keeps them; 6 in the paper's 16-bit setting, which counts no internals)."""
    c = _coefficients(precision)
    stream = c["LayerNorm inputs (two)"] / 2  # one value of the residual stream
    per_unit = stream + stream + c["LayerNorm internals (two)"] / 2 + c["QKV input (LayerNorm output)"]
    return per_unit * positions * model.d_model / (t if sequence_parallel else 1)


def activation_bytes(model: ModelShape, layout: Layout, workload: Workload, assumptions: Assumptions,
                     dropout: bool = False) -> tuple[float, float]:
    """(activations, the loss's tensors) bytes on the first pipeline stage's device.

    Activations: its blocks' saved activations for the micro-batches in flight; under recomputation, one block's
    recomputed activations for one micro-batch besides (its backward pass holds them again: those the policy did
    not keep; every stage's, under `Assumptions.lab_pipeline`); and the embedding's and final LayerNorm's
    (`ends_bytes`). The loss's: `LOSS_TENSORS` b · s · V float32 tensors of the last stage's micro-batch, split by
    `model` where the vocabulary is (`Assumptions.vocab_parallel`)."""
    b = micro_batch_sequences(layout, workload)
    s = workload.seq_len // layout.seq
    sequence_parallel = layout.sequence_parallel and layout.model > 1

    def per_sequence(remat: str) -> float:
        return layer_activation_bytes(model, workload.precision, s, workload.seq_len, layout.model, remat,
                                      sequence_parallel, assumptions.flash_attention, dropout)

    blocks = model.layers / layout.stage
    if layout.stage == 1:
        in_flight = 1.0
    else:
        in_flight = min(layout.microbatches, layout.stage) * (1 + (layout.stage - 1) / (layout.stage * layout.virtual)
                                                              if layout.virtual > 1 else 1.0)
    kept = per_sequence(layout.remat)
    recomputed = per_sequence("none") - kept if layout.remat != "none" else 0.0
    if assumptions.lab_pipeline and layout.stage > 1:  # the switch keeps every stage's blocks' residuals
        recomputed *= layout.stage * blocks
    ends = ends_bytes(model, workload.precision, s, layout.model, sequence_parallel)
    vocab_split = layout.model if assumptions.vocab_parallel else 1
    loss = LOSS_TENSORS[workload.precision] * b * s * model.vocab * LOGIT_BYTES / vocab_split
    return b * (blocks * in_flight * kept + recomputed + ends), loss


def micro_batch_sequences(layout: Layout, workload: Workload) -> float:
    """b: the sequences of one micro-batch on one data replica."""
    return workload.sequences / (layout.replica * layout.data * layout.expert * layout.microbatches)


def input_bytes(layout: Layout, workload: Workload) -> float:
    """The step's tokens on one device, x and y: its data replica's sequences (every micro-batch), its positions."""
    return (2 * TOKEN_BYTES * workload.sequences / (layout.replica * layout.data * layout.expert) * workload.seq_len
            / layout.seq)


def state_memory(model: ModelShape, layout: Layout, workload: Workload,
                 assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> tuple[float, float, float]:
    """(params, grads, optimizer) bytes per device: the dense parameters over model · stage and ZeRO's group
    data · seq · expert; the experts' over expert · model · stage and ZeRO's group data · seq."""
    per = analytic.state_bytes(workload.precision, workload.optimizer)
    dense = dense_params_per_device(model, layout, assumptions)
    experts = model.expert_params / (layout.expert * layout.model * layout.stage)
    sharded = analytic.ZERO_SHARDED[STRATEGY_OF_STAGE[layout.zero]]
    groups = (layout.data * layout.seq * layout.expert, layout.data * layout.seq)
    parts = []
    for index, bytes_per in enumerate((per.params, per.grads, per.optimizer)):
        divide = [group if sharded[index] else 1 for group in groups]
        parts.append((dense / divide[0] + experts / divide[1]) * bytes_per)
    return parts[0], parts[1], parts[2]


def whole_block_params(model: ModelShape) -> float:
    """The parameters of one block that tensor parallelism leaves whole on every device of `model` (Megatron-LM's
    split, the lab's `train.tensor`): its two norms, the attention's and the MLP's row-parallel output biases, the
    router."""
    norms = 2 * (2 * model.d_model if model.norm_bias else model.d_model)
    biases = 2 * model.d_model if model.biases else 0
    return norms + biases + model.param_counts()["router"]


def dense_params_per_device(model: ModelShape, layout: Layout,
                            assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """The dense parameters the first stage's device holds: its blocks' (their weights and column-parallel biases
    split by `model`, `whole_block_params` whole), and the embedding (with the head too when there is one stage),
    split by `model` where the vocabulary is (`Assumptions.vocab_parallel`)."""
    c = model.param_counts()
    block = model.dense_block_params
    whole = whole_block_params(model)
    blocks = ((block - whole) / layout.model + whole) * model.layers / layout.stage
    ends = c["embed"] + (c["head"] if layout.stage == 1 else 0)
    return blocks + ends / (layout.model if assumptions.vocab_parallel else 1)


# ---- communication ----

def axis_level(layout: Layout, axis: str, hardware: Hardware) -> tuple[int, Level]:
    """The innermost level of the interconnect whose groups hold the axis's devices with every axis inside it (a ring
    that crosses a level runs at the next level's link); its index, innermost 0."""
    inner = PLAN_AXES[PLAN_AXES.index(axis):]
    return _level(math.prod(layout.size(a) for a in inner), hardware)


@functools.lru_cache(maxsize=4096)
def _level(span: int, hardware: Hardware) -> tuple[int, Level]:
    levels = hardware.link_levels
    index = next((i for i, level in enumerate(levels) if level.size == 0 or span <= level.size), len(levels) - 1)
    return index, levels[index]


def comm_bytes(model: ModelShape, layout: Layout, workload: Workload, assumptions: Assumptions) -> dict[str, float]:
    """Ring bytes each device sends per step, by mesh axis (axes of one device left out)."""
    v = workload.value_bytes
    b = micro_batch_sequences(layout, workload)
    s = workload.seq_len // layout.seq
    blocks = model.layers / layout.stage
    m = layout.microbatches
    recompute = 1.5 if layout.remat == "full" else 1.0  # full remat runs the forward's collectives again
    found: dict[str, float] = {}
    if layout.model > 1:
        per_micro = analytic.transformer_tensor_comm_bytes_per_step(b, s, model.d_model, 1, 0, 0, 1, layout.model, v)
        if layout.sequence_parallel and layout.remat != "full":
            # Megatron-LM's sequence parallelism keeps each column-parallel product's input split and all-gathers it
            # again in the backward pass for its weight's gradient: 2 more all-gathers per block (under full
            # recomputation the recomputed forward's gathers serve the backward instead).
            per_micro += 2 * b * s * model.d_model * v * (layout.model - 1) / layout.model
        found[MODEL_AXIS] = per_micro * blocks * m * recompute
        if layout.sequence_parallel:
            # Each device computed the gradient of the parameters left whole over `model` (the norms, the output
            # biases; the embedding and head where the vocabulary is not split) from its positions only: all-reduced
            # over `model` once per step.
            whole = whole_block_params(model) * blocks + (0 if assumptions.vocab_parallel else (
                model.param_counts()["embed"] + (model.param_counts()["head"] if layout.stage == 1 else 0)))
            found[MODEL_AXIS] += 2 * whole * v * (layout.model - 1) / layout.model
    if layout.seq > 1 and layout.context == "ulysses":  # Q, K, V and the output, each of its own width
        width = (2 * model.q_width + 2 * model.kv_width) / 4 / layout.model
        terms = analytic.context_comm_terms("ulysses", b, workload.seq_len, width, 1, 0.0, 1, layout.seq, v)
        found[SEQ_AXIS] = sum(t.bytes for t in terms[:2]) * blocks * m * recompute
    elif layout.seq > 1:
        terms = analytic.context_comm_terms("allgather", b, workload.seq_len, model.kv_width // layout.model, 1, 0.0,
                                            1, layout.seq, v)
        found[SEQ_AXIS] = sum(t.bytes for t in terms[:2]) * blocks * m * recompute
    if layout.expert > 1 and model.experts:
        terms = analytic.expert_comm_terms(int(b * layout.expert), workload.seq_len // layout.seq, model.d_model, 1,
                                           model.experts, model.top_k, assumptions.capacity_factor, 0.0, 0.0, 1,
                                           layout.expert, v)
        found[EXPERT_AXIS] = sum(t.bytes for t in terms[:2]) * blocks * m * recompute
    if layout.stage > 1:
        boundary = b * s * model.d_model * v / (layout.model if layout.sequence_parallel else 1)
        # Each boundary carries each micro-batch's activation and gradient once per virtual stage; in lockstep, every
        # slot of the 2(M + P − 1) sends one each way (`Assumptions.lab_pipeline`).
        crossings = 2 * (m + layout.stage - 1) if assumptions.lab_pipeline else m * layout.virtual
        found[STAGE_AXIS] = 2 * boundary * crossings * (layout.stage - 1) / layout.stage
    group = layout.data * layout.seq * layout.expert
    strategy = STRATEGY_OF_STAGE[layout.zero]
    per = analytic.state_bytes(workload.precision, workload.optimizer)
    if group > 1:
        dense = dense_params_per_device(model, layout, assumptions)
        total = analytic.zero_comm_bytes_per_step(dense, group, strategy, per.params, v, m)
        if model.expert_params and layout.data * layout.seq > 1:
            experts = model.expert_params / (layout.expert * layout.model * layout.stage)
            total += analytic.zero_comm_bytes_per_step(experts, layout.data * layout.seq, strategy, per.params, v, m)
        found[DATA_AXIS] = total
    if layout.replica > 1:
        # Each replica's gradient, reduced over its ZeRO group first (a shard of 1/group where the stage shards
        # anything), all-reduced over the replicas: 2(r − 1)/r of it.
        held = dense_params_per_device(model, layout, assumptions) + model.expert_params / (
            layout.expert * layout.model * layout.stage)
        shard = held / (group if layout.zero else 1)
        found[REPLICA_AXIS] = 2 * (layout.replica - 1) / layout.replica * shard * v
    return found


def axis_comms(model: ModelShape, layout: Layout, workload: Workload, hardware: Hardware,
               assumptions: Assumptions, attention_s: float | None = None) -> tuple[AxisComm, ...]:
    """Each axis's bytes, its level and link, its seconds and what of them is exposed (`exposed_seconds`)."""
    out = []
    for axis, sent in comm_bytes(model, layout, workload, assumptions).items():
        index, level = axis_level(layout, axis, hardware)
        # The gradient's collectives run over every device that holds the same parameters: data · seq · expert.
        size = layout.size(axis) if axis != DATA_AXIS else layout.data * layout.seq * layout.expert
        seconds = sent / level.bytes_s
        exposed = exposed_seconds(axis, seconds, assumptions.overlap, attention_s, layout.context)
        out.append(AxisComm(axis, size, NODE if index == 0 else CLUSTER, level.name, sent, seconds, exposed))
    return tuple(sorted(out, key=lambda c: PLAN_AXES.index(c.axis)))


def exposed_seconds(axis: str, seconds: float, overlap: float, attention_s: float | None,
                    context: str = "zigzag") -> float:
    """An axis's seconds left beside compute: a share `overlap` hidden; ring attention's K and V (the seq axis, with
    the compute modelled by operation) hidden wholly behind the attention they feed, the rest exposed (its overlap
    condition: a block's transfer no longer than its attention)."""
    if attention_s is not None:
        if axis == SEQ_AXIS and context == "ulysses":  # the attention waits for its heads
            return seconds
        if axis == SEQ_AXIS:
            return max(0.0, seconds - attention_s)
        if axis == MODEL_AXIS:
            return seconds
    return seconds * (1 - overlap)


# ---- compute and the step ----

def flops_per_token(model: ModelShape, seq_len: int, remat: str) -> tuple[float, float]:
    """(model, hardware) FLOPs per token of one training step: 6Ψ_active + 12 · L · q · s (PaLM, Appendix B:
    q = heads · d_head, s the sequence), and with what recomputation adds (full: one more forward, 2Ψ_active +
    4 · L · q · s; selective: the attention core's forward, 4 · L · q · s)."""
    attention = 12 * model.layers * model.q_width * seq_len
    base = 6 * model.active_params + attention
    extra = {"none": 0.0, "selective": attention / 3, "full": (6 * model.active_params + attention) / 3}[remat]
    return base, base + extra


def shaped_compute(model: ModelShape, layout: Layout, workload: Workload, hardware: Hardware,
                   assumptions: Assumptions, dropout: bool, optimizer_params: float) -> dict[str, float]:
    """Compute's seconds per step on the slowest pipeline stage's device, by kind (`compute`): its blocks' matrix
    products, attention and elementwise work for M micro-batches, what recomputation runs again, the output
    projection where that stage holds it, and the optimizer's update of the parameters it updates. The slowest
    stage: the blocks spread as evenly as they go, the head on a stage with the fewest."""
    b = micro_batch_sequences(layout, workload)
    rate = hardware.fp8_flops if workload.fp8 else hardware.peak_flops
    sequence_parallel = layout.sequence_parallel and layout.model > 1
    block = compute.block_time(model, hardware, rate, b, workload.seq_len, layout.seq, layout.model, layout.context,
                               sequence_parallel, assumptions.flash_attention, dropout)
    again = {"none": 0.0, "selective": block.attention[0], "full": block.forward()}[layout.remat]
    head = compute.head_time(model, hardware, rate, b, workload.seq_len, layout.seq, layout.model)
    most, least = -(-model.layers // layout.stage), model.layers // layout.stage
    if layout.stage == 1 or least * (block.total() + again) + head >= most * (block.total() + again):
        blocks, head_on = least, 1.0
    else:
        blocks, head_on = most, 0.0
    m = layout.microbatches * blocks
    return {"matmul": m * sum(block.matmul), "attention": m * sum(block.attention),
            "elementwise": m * sum(block.elementwise), "recompute": m * again,
            "head": layout.microbatches * head * head_on,
            "optimizer": compute.OPTIMIZER_BYTES * optimizer_params / hardware.hbm_bytes_s}


def predict(model: ModelShape, layout: Layout, workload: Workload, hardware: Hardware,
            assumptions: Assumptions = DEFAULT_ASSUMPTIONS, dropout: bool = False) -> Prediction:
    """One plan's figures per device (module docstring)."""
    params, grads, optimizer = state_memory(model, layout, workload, assumptions)
    activations, logits = activation_bytes(model, layout, workload, assumptions, dropout)
    state_copy = 0.0 if assumptions.donated_state else params + optimizer
    # A flat stage buffer: each parameter cut out of it for the stage's backward, and the flat gradient the backward
    # returns beside the stage's accumulator (`Assumptions.lab_pipeline`).
    buffers = params + grads if assumptions.lab_pipeline and layout.stage > 1 else 0.0
    memory = Memory(params, grads, optimizer, activations, logits, input_bytes(layout, workload), state_copy, buffers)
    model_per_token, hardware_per_token = flops_per_token(model, workload.seq_len, layout.remat)
    model_flops, hardware_flops = model_per_token * workload.tokens, hardware_per_token * workload.tokens
    attention_s = None
    if assumptions.achievable is None:
        per = analytic.state_bytes(workload.precision, workload.optimizer)
        updated = optimizer / per.optimizer if per.optimizer else params / per.params
        parts = shaped_compute(model, layout, workload, hardware, assumptions, dropout, updated)
        compute_s, attention_s = sum(parts.values()), parts["attention"]
    else:
        parts = {"matmul": hardware_flops / layout.devices / (hardware.peak_flops * assumptions.achievable)}
        compute_s = parts["matmul"]
    comm = axis_comms(model, layout, workload, hardware, assumptions, attention_s)
    inner = sum(c.exposed_s for c in comm if c.axis not in OUTER_AXES)
    outer = sum(c.exposed_s for c in comm if c.axis in OUTER_AXES)
    bubble = (layout.stage - 1) / (layout.virtual * layout.microbatches) if layout.stage > 1 else 0.0
    step_s = (compute_s + inner) * (1 + bubble) + outer
    peak = step_s * layout.devices * hardware.peak_flops
    return Prediction(layout, memory, comm, model_flops, hardware_flops, compute_s, bubble, inner + outer, step_s,
                      model_flops / peak, hardware_flops / peak, memory.total <= hardware.memory_bytes,
                      hardware.memory_bytes, tuple(parts.items()))
