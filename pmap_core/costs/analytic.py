"""What data parallelism costs: gradient traffic, ring all-reduce time, compute time, memory.

Every device holds a full copy of the model and, each step, all-reduces a full
gradient. The ring all-reduce (α-β model) takes

    t_comm = 2(D−1)·α + 2(D−1)/D · S/β

for S gradient bytes, D devices, per-hop latency α and link bandwidth β. The
compute of a training step is its FLOPs over the sustained speed of a device:

    t_compute = FLOPs / (peak FLOP/s × utilisation)

with FLOPs ≈ 6 × parameters × tokens for a transformer (2 for the forward
pass, 4 for the backward pass, per parameter and token; Kaplan et al. 2020).
"""

from __future__ import annotations

import dataclasses
import math

from pmap_core.costs import ring
from pmap_core.runtime import device_ladder
from pmap_core.validation import LabInputError, check_float, check_int

MAX_MODEL_DEVICES = 65_536
STRONG, WEAK = "strong", "weak"  # same global batch / same per-device batch


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    params: float
    flops_per_sample: float  # one training step's FLOPs for one sample


@dataclasses.dataclass(frozen=True)
class Link:
    name: str
    bandwidth_gbps: float  # GB/s one way per device (β)
    latency_us: float  # α, per hop: an assumed order of magnitude, not a vendor figure


@dataclasses.dataclass(frozen=True)
class Accelerator:
    name: str
    peak_tflops: float  # dense BF16/FP16 tensor throughput
    memory_gb: float


def transformer_flops_per_sample(params: float, tokens: int) -> float:
    """≈ 6 × parameters × tokens: the FLOPs of one forward and backward pass of a sample."""
    return 6.0 * params * tokens


# Sources (shown on the applications page): ResNet-50 — He et al. 2016, 3.8e9 multiply-adds forward per
# 224×224 image (7.6e9 FLOPs; training ≈ 3 × forward), 25.6M parameters (torchvision); BERT-base — Devlin
# et al. 2019, 110M, 512 tokens; GPT-2 — Radford et al. 2019, 1.5B, 1024 tokens; Llama-2-7B — Touvron et
# al. 2023, 6.7B, 4096 tokens.
MODELS = {
    "resnet50": Model("ResNet-50", 25.6e6, 3 * 7.6e9),
    "bert_base": Model("BERT-base", 110e6, transformer_flops_per_sample(110e6, 512)),
    "gpt2_xl": Model("GPT-2 (1.5B)", 1.5e9, transformer_flops_per_sample(1.5e9, 1024)),
    "llama2_7b": Model("Llama-2-7B", 6.7e9, transformer_flops_per_sample(6.7e9, 4096)),
}

# Bandwidth one way per device: PCI-SIG PCIe 4.0 (16 GT/s × 16 lanes ≈ 32 GB/s); NVIDIA H100 datasheet
# (NVLink 900 GB/s per GPU, both directions); NVIDIA ConnectX-7 / InfiniBand NDR (400 Gb/s); IEEE 802.3 (100 Gb/s).
LINKS = {
    "pcie4_x16": Link("PCIe 4.0 x16", 32.0, 5.0),
    "nvlink4_h100": Link("NVLink 4 (H100 SXM)", 450.0, 2.0),
    "ib_ndr": Link("InfiniBand NDR 400 Gb/s", 50.0, 5.0),
    "eth_100g": Link("100 GbE", 12.5, 20.0),
}

# NVIDIA datasheets: V100 SXM2 125 TFLOP/s tensor, 32 GB; A100 SXM 312 TFLOP/s BF16 dense, 80 GB;
# H100 SXM 989 TFLOP/s BF16 dense, 80 GB.
ACCELERATORS = {
    "v100": Accelerator("NVIDIA V100 SXM2", 125.0, 32.0),
    "a100": Accelerator("NVIDIA A100 SXM", 312.0, 80.0),
    "h100": Accelerator("NVIDIA H100 SXM", 989.0, 80.0),
}


def _positive(name: str, value: float) -> float:
    value = check_float(name, value, float("-inf"), float("inf"))
    if value <= 0:
        raise LabInputError("not_positive", "{name} must be greater than zero, got {value}", name=name, value=value)
    return value


def gradient_bytes(params: float, bytes_per_value: float) -> float:
    """Bytes of one full gradient: what every device all-reduces each step."""
    return _positive("params", params) * _positive("bytes_per_value", bytes_per_value)


def ring_allreduce_seconds(size_bytes: float, devices: int, latency_s: float, bandwidth_bytes_per_s: float) -> float:
    """t = 2(D−1)·α + 2(D−1)/D · S/β; zero for one device."""
    devices = check_int("devices", devices, 1, MAX_MODEL_DEVICES)
    latency_s = check_float("latency", latency_s, 0.0, 1.0)
    bandwidth = _positive("bandwidth", bandwidth_bytes_per_s)
    return ring.seconds("psum", devices, size_bytes, latency_s, bandwidth)


def ring_bytes_sent_per_device(size_bytes: float, devices: int) -> float:
    """Each device sends 2(D−1)/D · S bytes: (D−1) chunks of S/D in reduce-scatter, again in all-gather."""
    return ring.bytes_factor("psum", devices) * size_bytes


def compute_seconds(flops: float, peak_flops: float, utilisation: float) -> float:
    utilisation = check_float("utilisation", utilisation, 0.01, 1.0)
    return _positive("flops", flops) / (_positive("peak_flops", peak_flops) * utilisation)


@dataclasses.dataclass(frozen=True)
class Memory:
    """Bytes per device when parameters, gradients and optimizer state are all replicated."""

    weights: float
    gradients: float
    optimizer: float
    master_weights: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.master_weights


OPTIMIZER_FP32_COPIES = {"sgd": 0, "momentum": 1, "adam": 2}  # Adam keeps two moments


def memory_per_device(params: float, bytes_per_value: float, optimizer: str, mixed_precision: bool) -> Memory:
    """Weights and gradients in `bytes_per_value`; optimizer state in fp32; fp32 master weights
    when training in 16-bit. Adam + mixed precision: 2 + 2 + 8 + 4 = 16 bytes per parameter."""
    if optimizer not in OPTIMIZER_FP32_COPIES:
        raise LabInputError("unknown_optimizer", "no optimizer called {name!r}", name=optimizer)
    params = _positive("params", params)
    weights = params * _positive("bytes_per_value", bytes_per_value)
    return Memory(weights, weights, params * 4 * OPTIMIZER_FP32_COPIES[optimizer],
                  params * 4 if mixed_precision else 0.0)


@dataclasses.dataclass(frozen=True)
class StepCost:
    devices: int
    compute_s: float
    comm_s: float
    exposed_comm_s: float  # the part of communication not hidden behind compute
    step_s: float
    samples_per_s: float
    efficiency: float  # throughput(D) / (D × throughput(1))


@dataclasses.dataclass(frozen=True)
class Scaling:
    gradient_bytes: float
    rows: tuple[StepCost, ...]
    comm_dominates_from: int | None  # the first D in rows whose communication exceeds its compute
    best_devices: int  # the D in rows with the highest throughput


def scaling(params: float, bytes_per_value: float, flops_per_sample: float, global_batch: int,
            peak_tflops: float, utilisation: float, bandwidth_gbps: float, latency_us: float,
            max_devices: int, mode: str = STRONG, overlap: bool = False) -> Scaling:
    """Step time of data parallelism on D = 1, 2, 4, … below max_devices, then max_devices itself.

    STRONG keeps the global batch (each device gets global_batch / D samples); WEAK keeps
    global_batch samples on every device. With overlap, communication runs during compute
    and only the part that outlasts it adds to the step.
    """
    if mode not in (STRONG, WEAK):
        raise LabInputError("unknown_mode", "no scaling mode called {name!r}", name=mode)
    max_devices = check_int("max_devices", max_devices, 1, MAX_MODEL_DEVICES)
    global_batch = check_int("global_batch", global_batch, 1, 10**9)
    size = gradient_bytes(params, bytes_per_value)
    peak = _positive("peak_tflops", peak_tflops) * 1e12
    bandwidth = _positive("bandwidth", bandwidth_gbps) * 1e9
    latency = check_float("latency_us", latency_us, 0.0, 1e6) * 1e-6
    _positive("flops_per_sample", flops_per_sample)

    rows = []
    for d in device_ladder(max_devices):
        samples_per_device = global_batch / d if mode == STRONG else global_batch
        compute = compute_seconds(flops_per_sample * samples_per_device, peak, utilisation)
        comm = ring_allreduce_seconds(size, d, latency, bandwidth)
        exposed = max(comm - compute, 0.0) if overlap else comm
        step = compute + exposed
        rows.append(StepCost(d, compute, comm, exposed, step, samples_per_device * d / step, 0.0))
    base = rows[0].samples_per_s
    rows = [dataclasses.replace(r, efficiency=r.samples_per_s / (r.devices * base)) for r in rows]
    dominated = next((r.devices for r in rows if r.comm_s > r.compute_s), None)
    best = max(rows, key=lambda r: r.samples_per_s).devices
    return Scaling(size, tuple(rows), dominated, best)


# Sharded data parallelism. Sources: ZeRO — Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward
# Training Trillion Parameter Models", §3 (model states: K = 12 bytes of Adam state per parameter in mixed
# precision, 2Ψ + 2Ψ + KΨ = 16Ψ), §5 (P_os, P_os+g, P_os+g+p divide them by D) and §7.2 (communication:
# DP's all-reduce = reduce-scatter + all-gather = 2Ψ; P_os+g+p = 3Ψ: all-gather forward, all-gather
# backward, reduce-scatter); FSDP — Zhao et al. 2023 (ZeRO-3's schedule in PyTorch); the Ultra-Scale
# Playbook (Hugging Face, 2025), "ZeRO" (the same formulas, the memory widget).
# Which of (params, grads, optimizer state) each strategy holds as a 1/D shard.
ZERO_SHARDED = {"dp": (False, False, False), "zero1": (False, False, True),
                "zero2": (False, True, True), "zero3": (True, True, True)}
OPTIMIZER_STATE_BYTES = {"sgd": 0, "adam": 8}  # fp32 state per parameter: none; Adam's two moments
GRAD_DTYPE_BYTES = {"float32": 4, "bfloat16": 2}  # what the gradient collective sends per value
MASTER_BYTES = 4  # mixed precision's fp32 master copy of the parameters, counted with the optimizer state (§3)
PRECISIONS = ("float32", "mixed")


@dataclasses.dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of each part of the model states: p (params), g (gradients), k (optimizer)."""

    params: float
    grads: float
    optimizer: float


def state_bytes(precision: str, optimizer: str) -> StateBytes:
    """float32: p = g = 4 and k = Adam's two fp32 moments (8), or 0 for SGD — 16Ψ with Adam, all of it
    replicated state. mixed (ZeRO §3): bfloat16 params and gradients (p = g = 2) and k = the fp32 master
    copy (4) + Adam's moments (8) = 12: 2Ψ + 2Ψ + 12Ψ = 16Ψ, three quarters of it optimizer state."""
    if precision == "mixed":
        return StateBytes(2.0, 2.0, MASTER_BYTES + OPTIMIZER_STATE_BYTES[optimizer])
    return StateBytes(4.0, 4.0, float(OPTIMIZER_STATE_BYTES[optimizer]))


@dataclasses.dataclass(frozen=True)
class ZeroMemory:
    """Model bytes per device of one strategy (ZeRO §5)."""

    params: float
    grads: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer


def _strategy(strategy: str) -> tuple[bool, bool, bool]:
    if strategy not in ZERO_SHARDED:
        raise LabInputError("unknown_strategy", "strategy must be one of {options}, got {value!r}",
                            options=", ".join(ZERO_SHARDED), value=strategy)
    return ZERO_SHARDED[strategy]


def zero_memory_per_device(params: float, devices: int, strategy: str, param_bytes: float = 4.0,
                           grad_bytes: float = 4.0, optimizer_bytes: float = 8.0) -> ZeroMemory:
    """Ψ·p, Ψ·g and Ψ·k bytes, each divided by D where the strategy shards it (`state_bytes` gives p, g
    and k for each precision and optimizer: 16Ψ replicated with Adam in both)."""
    params = _positive("params", params)
    devices = check_int("devices", devices, 1, MAX_MODEL_DEVICES)
    shard = [devices if sharded else 1 for sharded in _strategy(strategy)]
    return ZeroMemory(params * param_bytes / shard[0], params * grad_bytes / shard[1],
                      params * optimizer_bytes / shard[2])


def zero_comm_bytes_per_step(params: float, devices: int, strategy: str, param_bytes: float = 4.0,
                             grad_bytes: float = 4.0, accum_steps: int = 1) -> float:
    """Bytes each device sends per step on a ring (all-reduce 2(D−1)/D·S; all-gather and
    reduce-scatter (D−1)/D·S of the whole array S), with K micro-batches per step:
    dp 2Ψg (one all-reduce of the summed gradient); zero1 Ψg + Ψp (§7.2.1: reduce-scatter the gradient
    once, all-gather the updated params: 2Ψ, as DP); zero2 KΨg + Ψp (the gradient is kept as a shard,
    so each micro-batch's is reduce-scattered as it is made); zero3 K(Ψg + 2Ψp) (§7.2.2: 3Ψ per
    micro-batch, each layer gathered before its forward and again before its backward).
    g is the gradient collective's bytes per value, p the parameters'. All times (D−1)/D; zero for one device."""
    params = _positive("params", params)
    devices = check_int("devices", devices, 1, MAX_MODEL_DEVICES)
    _strategy(strategy)
    k = accum_steps
    units = {"dp": 2 * grad_bytes, "zero1": grad_bytes + param_bytes, "zero2": k * grad_bytes + param_bytes,
             "zero3": k * (grad_bytes + 2 * param_bytes)}[strategy]
    return params * units * (devices - 1) / devices


def zero_model(params: float, devices: int, strategy: str, precision: str = "float32", optimizer: str = "sgd",
               grad_dtype: str = "float32", accum_steps: int = 1) -> tuple[ZeroMemory, float]:
    """(bytes held, bytes sent per step) per device of a run's settings: `state_bytes` of its precision and
    optimizer, its gradient collective's bytes per value (bfloat16 under mixed precision)."""
    per_param = state_bytes(precision, optimizer)
    comm_bytes = 2.0 if precision == "mixed" else float(GRAD_DTYPE_BYTES[grad_dtype])
    memory = zero_memory_per_device(params, devices, strategy, per_param.params, per_param.grads,
                                    per_param.optimizer)
    return memory, zero_comm_bytes_per_step(params, devices, strategy, per_param.params, comm_bytes, accum_steps)


def largest_model_params(budget_bytes: float, devices: int, strategy: str, param_bytes: float = 4.0,
                         grad_bytes: float = 4.0, optimizer_bytes: float = 8.0) -> float:
    """The most parameters Ψ whose model states fit `budget_bytes` per device (activations excluded)."""
    per_param = zero_memory_per_device(1.0, devices, strategy, param_bytes, grad_bytes, optimizer_bytes).total
    return _positive("budget_bytes", budget_bytes) / per_param


def tensor_comm_bytes_per_step(batch: int, features: int, hidden: int, data: int, model: int,
                               value_bytes: float = 4.0) -> float:
    """Bytes each device sends per step (ring) for the MLP split Megatron's way on a data × model mesh
    (Shoeybi et al. 2019, §3; the JAX Scaling Book, "Training": one all-reduce of activations per pair
    of layers): the second layer's partial sums, B/X values, all-reduced over the Y devices of `model`,
    2(Y−1)/Y·B/X·v; then the gradient of this device's weights (F·H/Y + 2H/Y + 1 values), all-reduced
    over the X devices of `data`, 2(X−1)/X·that·v. The input is data, so the backward pass sends nothing
    over `model`; the loss's own all-reduce (one value) is left out."""
    data = check_int("data", data, 1, MAX_MODEL_DEVICES)
    model = check_int("model", model, 1, MAX_MODEL_DEVICES)
    activations = 2 * (model - 1) / model * batch / data
    local_weights = features * hidden / model + 2 * hidden / model + 1
    return (activations + 2 * (data - 1) / data * local_weights) * value_bytes


def transformer_tensor_comm_bytes_per_step(batch: int, seq_len: int, d_model: int, layers: int, split_params: int,
                                           whole_params: int, data: int, model: int,
                                           value_bytes: float = 4.0) -> float:
    """Bytes each device sends per step (ring) for the transformer split Megatron's way on a data × model mesh
    (Shoeybi et al. 2019, §3: attention by heads, the MLP by columns then rows): per block two all-reduces of
    the residual stream's B/X · seq_len · d_model values over the Y devices of `model` in the forward pass
    (after the attention, after the MLP) and two in the backward (the gradient of each half's input, Megatron's
    f operator), 4L·2(Y−1)/Y·(B/X)·S·d·v; then the gradient of this device's parameters (`split_params`/Y of the
    heads' and MLP's weights, `whole_params` whole), all-reduced over the X devices of `data`,
    2(X−1)/X·that·v. The loss's own all-reduce (one value) is left out."""
    data = check_int("data", data, 1, MAX_MODEL_DEVICES)
    model = check_int("model", model, 1, MAX_MODEL_DEVICES)
    activations = 4 * layers * 2 * (model - 1) / model * batch / data * seq_len * d_model
    return (activations + 2 * (data - 1) / data * (split_params / model + whole_params)) * value_bytes


# The JAX Scaling Book (Austin et al. 2025), "How to Parallelize a Transformer for Training", the table of
# communication per layer at the end of "Takeaways": a layer is an MLP In[B, D] · W_in[D, F] · W_out[F, D],
# X devices on the data (FSDP) axis, Y on the model axis, bfloat16 values (2 bytes), forward + backward,
# each collective approximated by its bytes without the ring's (n−1)/n. Whole-byte counts per device.
SCALING_BOOK_VALUE_BYTES = 2
SCALING_BOOK_STRATEGIES = ("dp", "fsdp", "tp", "fsdp_tp")


def scaling_book_layer_bytes(strategy: str, batch: float, d_model: float, d_ff: float, data: int = 1,
                             model: int = 1, value_bytes: float = SCALING_BOOK_VALUE_BYTES) -> float:
    """Bytes per device per layer by the Scaling Book's table (B tokens, D = d_model, F = d_ff, X data
    devices, Y model devices): DP 0 + 8DF (an all-reduce of each weight's gradient in the backward pass);
    FSDP 4DF + 8DF (gather each weight in the forward pass, gather again and reduce-scatter in the backward);
    TP 4BD + 4BD (gather In and reduce-scatter Out in the forward pass, their transposes in the backward);
    FSDP + TP (4BD/X + 4DF/Y) + (8BD/X + 8DF/Y). The book counts bfloat16 (2 bytes a
    value); `value_bytes` scales every term (4 for float32)."""
    if strategy not in SCALING_BOOK_STRATEGIES:
        raise LabInputError("unknown_strategy", "strategy must be one of {options}, got {value!r}",
                            options=", ".join(SCALING_BOOK_STRATEGIES), value=strategy)
    data = check_int("data", data, 1, MAX_MODEL_DEVICES)
    model = check_int("model", model, 1, MAX_MODEL_DEVICES)
    b, d, f = (_positive(name, value) for name, value in (("batch", batch), ("d_model", d_model), ("d_ff", d_ff)))
    units = {"dp": 8 * d * f, "fsdp": 4 * d * f + 8 * d * f, "tp": 4 * b * d + 4 * b * d,
             "fsdp_tp": (4 * b * d / data + 4 * d * f / model) + (8 * b * d / data + 8 * d * f / model)}[strategy]
    return units * _positive("value_bytes", value_bytes) / SCALING_BOOK_VALUE_BYTES


# ---- context parallelism: the transformer's positions over a `seq` axis (train.context) ----

CONTEXT_SCHEMES = ("allgather", "ring", "ulysses")


@dataclasses.dataclass(frozen=True)
class CommTerm:
    """One term of a step's communication per device: what is sent, by which collective (as compiled HLO names
    it), its ring bytes per step, and where the formula comes from."""

    name: str
    collective: str
    bytes: float
    source: str


def context_comm_terms(scheme: str, batch: int, seq_len: int, d_model: int, layers: int, params: float,
                       data: int, seq: int, value_bytes: float = 4.0) -> tuple[CommTerm, ...]:
    """Bytes each device sends per training step (ring bytes, as `train.footprint` reads them from the HLO) for
    the transformer with context parallelism over P = `seq` devices, `data` × P devices in all, `batch` sequences
    per step (B/X on each data group) and Ψ = `params` parameters replicated on every device.

    A device's block of the attention's K (or V, Q, its output) is S_blk = (B/X) · (seq_len/P) · d_model values.
    Per scheme, per layer:
      allgather: K and V all-gathered over seq in the forward pass, each device sending (P − 1)/P of the whole
        (B/X) · seq_len · d_model, 2(P − 1) · S_blk; their gradients reduce-scattered back in the backward pass (the
        transpose of an all-gather), the same bytes (MaxText's context parallelism; the Ultra-Scale Playbook,
        "Context parallelism"; Llama 3, Dubey et al. 2024, arXiv 2407.21783, §3.3.2).
      ring: the K and V blocks passed to the next device P − 1 times in the forward pass, 2(P − 1) · S_blk; the
        backward pass passes their gradients dK and dV around the ring the same P − 1 times (Liu, Zaharia and
        Abbeel 2023, arXiv 2310.01889, §3: each device sends its key-value block to the next while it computes
        with the one it holds; here autodiff's transpose of each ppermute).
      ulysses: four all-to-alls in the forward pass (Q, K and V from positions to heads, the output back; Jacobs et
        al. 2023, arXiv 2309.14509, §3.2: messages of 3Nh and Nh per layer), each device keeping 1/P of its S_blk
        and sending (P − 1)/P of it, 4(P − 1)/P · S_blk; the backward pass the same four, transposed.
    And once per step, whatever the scheme: the gradient of the Ψ replicated parameters all-reduced over the
    g = X · P devices that each computed a part of it, 2(g − 1)/g · Ψ (data parallelism's; the ring all-reduce of
    `ring_bytes_sent_per_device` twice over); and the loss's mean over them, one value."""
    if scheme not in CONTEXT_SCHEMES:
        raise LabInputError("unknown_context", "context must be one of {options}, got {value!r}",
                            options=", ".join(CONTEXT_SCHEMES), value=scheme)
    data = check_int("data", data, 1, MAX_MODEL_DEVICES)
    p = check_int("seq", seq, 1, MAX_MODEL_DEVICES)
    block = batch / data * seq_len / p * d_model * value_bytes
    g = data * p
    per_scheme = {
        "allgather": (
            ("K and V all-gathered over seq, per layer (forward)", "all-gather", 2 * (p - 1) * block,
             "MaxText context parallelism; Ultra-Scale Playbook; Llama 3 §3.3.2"),
            ("dK and dV reduce-scattered over seq, per layer (backward)", "reduce-scatter", 2 * (p - 1) * block,
             "the transpose of the forward's all-gather")),
        "ring": (
            ("K and V blocks passed on P − 1 times, per layer (forward)", "collective-permute", 2 * (p - 1) * block,
             "Liu, Zaharia and Abbeel 2023 (arXiv 2310.01889) §3"),
            ("dK and dV blocks passed on P − 1 times, per layer (backward)", "collective-permute",
             2 * (p - 1) * block, "Liu, Zaharia and Abbeel 2023; autodiff's transpose of each ppermute")),
        "ulysses": (
            ("Q, K, V to heads and the output back: 4 all-to-alls, per layer (forward)", "all-to-all",
             4 * (p - 1) / p * block, "Jacobs et al. 2023 (arXiv 2309.14509) §3.2"),
            ("the same 4 all-to-alls transposed, per layer (backward)", "all-to-all", 4 * (p - 1) / p * block,
             "the transpose of an all-to-all is an all-to-all")),
    }[scheme]
    terms = [CommTerm(name, kind, layers * value, source) for name, kind, value, source in per_scheme]
    terms += [CommTerm("the replicated parameters' gradient, all-reduced over data × seq", "all-reduce",
                       2 * (g - 1) / g * params * value_bytes, "data parallelism's ring all-reduce"),
              CommTerm("the loss's mean over data × seq", "all-reduce", 2 * (g - 1) / g * value_bytes,
                       "one value")]
    return tuple(terms)


def comm_by_collective(terms: tuple[CommTerm, ...]) -> dict[str, float]:
    """`terms`' bytes summed by collective, as `train.footprint.Comm.by_kind` reads them from compiled HLO (a
    collective with no bytes left out)."""
    found: dict[str, float] = {}
    for term in terms:
        if term.bytes:
            found[term.collective] = found.get(term.collective, 0.0) + term.bytes
    return found


# ---- expert parallelism: a mixture of experts' experts over an `expert` axis (train.experts) ----

def expert_capacity(capacity_factor: float, tokens: int, top_k: int, experts: int) -> int:
    """C = ⌈c · T · k / E⌉ slots per expert per group of T tokens (Switch, Fedus et al. 2021, §2.2, times k as GShard's
    top-2 group capacity 2N/(G·E), Lepikhin et al. 2020, §2.2; `train.transformer.Routing.capacity`), at least 1. The
    product is rounded to 9 decimals before the ceiling, so one that is whole in exact arithmetic is not rounded up by
    an error in its last bit (3.0000000000000004 → 4)."""
    return max(1, math.ceil(round(capacity_factor * tokens * top_k / experts, 9)))


def all_to_all_bytes(operand_bytes: float, devices: int) -> float:
    """Bytes one device sends in an all-to-all of `operand_bytes` over `devices`: it keeps its own 1/P of the operand
    and sends each other device its 1/P, (P − 1)/P of the operand (counted once, where it leaves; nccl-tests'
    alltoall bus factor (n − 1)/n). On a ring whose links forward, the chunks travel P/4 hops on average both ways: the
    JAX Scaling Book ("Sharded Matrices", the AllToAll) counts link time, a quarter of an all-gather of the array."""
    return (devices - 1) / devices * operand_bytes


def expert_comm_terms(batch: int, seq_len: int, d_model: int, layers: int, experts: int, top_k: int,
                      capacity_factor: float, params: float, expert_params: float, data: int, expert: int,
                      value_bytes: float = 4.0) -> tuple[CommTerm, ...]:
    """Bytes each device sends per training step (ring bytes, as `train.footprint` reads them from the HLO) for the
    transformer with a mixture of experts in every block, its E experts split over the Y = `expert` devices of the
    expert axis, the batch's `batch` sequences over data × expert (X · Y devices, B/(X·Y) sequences each), Ψ = `params`
    parameters of which `expert_params` are the experts'.

    A device routes its B/(X·Y) sequences, each a group of T = seq_len tokens, into E experts of C =
    `expert_capacity` slots: a dispatched buffer of B/(X·Y) · E · C · d_model values (k·T·d per group at c = 1: the
    k·T·h of the JAX Scaling Book's MoE layer, "All the Transformer Math", Sparsity and Mixture-of-Experts, times c).
    Per block, forward: two all-to-alls over `expert` (the buffer to the experts' devices, their outputs back: the
    Scaling Book's "two AllToAlls, one before and one after the MoE block"; GShard §3.2), each sending (Y − 1)/Y of
    it (`all_to_all_bytes`); backward: their transposes, two more all-to-alls of the same size.
    Once per step: the gradient of the parameters every device holds whole (Ψ − Ψ_e) all-reduced over the
    g = X · Y devices that each computed a part of it, 2(g − 1)/g · (Ψ − Ψ_e); the gradient of a device's Ψ_e / Y
    expert parameters all-reduced over the X devices of `data` that hold the same experts, 2(X − 1)/X · Ψ_e / Y; and
    the loss's mean over data × expert, one value."""
    data = check_int("data", data, 1, MAX_MODEL_DEVICES)
    y = check_int("expert", expert, 1, MAX_MODEL_DEVICES)
    g = data * y
    slots = experts * expert_capacity(capacity_factor, seq_len, top_k, experts)
    buffer = batch / g * slots * d_model * value_bytes
    each = all_to_all_bytes(buffer, y)
    replicated = params - expert_params
    return (
        CommTerm("tokens to their experts and the outputs back: 2 all-to-alls per block (forward)", "all-to-all",
                 layers * 2 * each, "JAX Scaling Book, Transformer Math: Sparsity and Mixture-of-Experts; GShard §3.2"),
        CommTerm("the same 2 all-to-alls transposed, per block (backward)", "all-to-all", layers * 2 * each,
                 "the transpose of an all-to-all is an all-to-all"),
        CommTerm("the replicated parameters' gradient, all-reduced over data × expert", "all-reduce",
                 2 * (g - 1) / g * replicated * value_bytes, "data parallelism's ring all-reduce"),
        CommTerm("each device's experts' gradient, all-reduced over data", "all-reduce",
                 2 * (data - 1) / data * expert_params / y * value_bytes, "data parallelism's ring all-reduce"),
        CommTerm("the loss's mean over data × expert", "all-reduce", 2 * (g - 1) / g * value_bytes, "one value"),
    )
