"""The models, the hardware and the published runs the planner knows, each with its source.

A model is its published shape; its parameter count is derived from the shape (`ModelShape.param_counts`), so
the lab's own transformer and Llama 3 are counted by one rule. Hardware is one accelerator's peak, memory and the
bandwidth one device has to the others within its node and across nodes (one way, bytes/s). A published run is a
layout a paper trained with and the utilisation it reported, for the planner to predict beside it.
"""

from __future__ import annotations

import dataclasses
import functools
import math

from pmap_core.validation import LabInputError, check_float, check_int


@dataclasses.dataclass(frozen=True)
class ModelShape:
    """A decoder-only transformer's shape. `gated_mlp`: SwiGLU's three d × f matrices (Llama) instead of two
    (GPT, the lab); `norm_bias`: LayerNorm's gain and bias (the lab) instead of RMSNorm's gain; `biases`: the
    attention output and the MLP carry biases (the lab); `positions`: rows of a learned position table (the lab;
    0: rotary, no parameters); `tied`: the output projection is the token embedding's transpose (GPT, Megatron-LM).
    With `experts` > 0 every block's MLP is that many experts, a token routed to
    `top_k` of them."""

    key: str
    name: str
    layers: int
    d_model: int
    d_ff: int
    heads: int
    kv_heads: int
    vocab: int
    source: str
    gated_mlp: bool = True
    norm_bias: bool = False
    biases: bool = False
    positions: int = 0
    tied: bool = False
    experts: int = 0
    top_k: int = 0

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def q_width(self) -> int:
        return self.heads * self.d_head

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.d_head

    def param_counts(self) -> dict[str, int]:
        """Parameters by part: `attention` and `mlp` per block (the MLP's of one expert for a mixture, `router`
        beside it), `embed` (tokens and positions) and `head` (the final norm and the output projection)."""
        return dict(self._param_counts)

    @functools.cached_property
    def _param_counts(self) -> dict[str, int]:  # a search asks for it ~10^6 times (a frozen shape: counted once)
        d, f = self.d_model, self.d_ff
        norm = 2 * d if self.norm_bias else d
        attention = d * self.q_width + 2 * d * self.kv_width + self.q_width * d + (d if self.biases else 0) + 2 * norm
        mlp = (3 if self.gated_mlp else 2) * d * f + ((f + d) if self.biases else 0)
        return {"attention": attention, "mlp": mlp, "router": d * self.experts if self.experts else 0,
                "embed": self.vocab * d + self.positions * d,
                "head": norm + (0 if self.tied else d * self.vocab) + (self.vocab if self.biases else 0)}

    @property
    def expert_params(self) -> int:
        """Ψ_e: every expert's MLP in every block (0 for a dense model)."""
        return self.layers * self.experts * self.param_counts()["mlp"] if self.experts else 0

    @property
    def params(self) -> int:
        """Ψ: every parameter."""
        c = self.param_counts()
        blocks = c["attention"] + c["router"] + (0 if self.experts else c["mlp"])
        return self.layers * blocks + c["embed"] + c["head"] + self.expert_params

    @property
    def active_params(self) -> int:
        """The parameters one token runs through: the dense ones and `top_k` experts per block."""
        if not self.experts:
            return self.params
        return self.params - self.expert_params + self.layers * self.top_k * self.param_counts()["mlp"]


LLAMA3 = "Llama 3: Dubey et al. 2024, \"The Llama 3 Herd of Models\", arXiv 2407.21783, Table 3"
MIXTRAL = "Mixtral: Jiang et al. 2024, \"Mixtral of Experts\", arXiv 2401.04088, Table 1"
MEGATRON = ("Narayanan et al. 2021, \"Efficient Large-Scale Language Model Training on GPU Clusters Using "
            "Megatron-LM\", arXiv 2104.04473, Table 1")

MODELS = {m.key: m for m in (
    # The paper's vocabulary, 128,000 (the released checkpoints' configuration files say 128,256).
    ModelShape("llama3-8b", "Llama 3 8B", 32, 4096, 14336, 32, 8, 128_000, LLAMA3),
    ModelShape("llama3-70b", "Llama 3 70B", 80, 8192, 28672, 64, 8, 128_000, LLAMA3),
    ModelShape("llama3-405b", "Llama 3 405B", 126, 16384, 53248, 128, 8, 128_000, LLAMA3),
    ModelShape("mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 14336, 32, 8, 32_000, MIXTRAL, experts=8, top_k=2),
    # Megatron-LM's GPT models (Table 1 gives layers, width and heads; §5.1: sequence 2048, vocabulary 51,200): a
    # GPT MLP of 4h, LayerNorm and biases, a learned position table.
    ModelShape("gpt-146b", "GPT 145.6B (Megatron-LM)", 80, 12288, 4 * 12288, 96, 96, 51_200, MEGATRON,
               gated_mlp=False, norm_bias=True, biases=True, positions=2048, tied=True),
    ModelShape("gpt-1t", "GPT 1T (Megatron-LM)", 128, 25600, 4 * 25600, 160, 160, 51_200, MEGATRON,
               gated_mlp=False, norm_bias=True, biases=True, positions=2048, tied=True),
)}


@dataclasses.dataclass(frozen=True)
class Hardware:
    """One accelerator: dense 16-bit peak FLOP/s, memory, memory bandwidth; `node` devices share the fast link
    (`intra_bytes_s`, one way per device), the rest are reached over `inter_bytes_s` (one way per device)."""

    key: str
    name: str
    peak_flops: float
    memory_bytes: float
    hbm_bytes_s: float
    node: int
    intra_bytes_s: float
    inter_bytes_s: float
    intra_name: str
    inter_name: str
    source: str


GB = 1e9
NVIDIA_H100 = "NVIDIA H100 Tensor Core GPU datasheet (SXM5: 989 TFLOP/s dense BF16, 80 GB, 3.35 TB/s, NVLink 900 GB/s)"
NVIDIA_H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM: 989 TFLOP/s dense BF16, 141 GB, 4.8 TB/s, NVLink 900 GB/s)"
NVIDIA_A100 = "NVIDIA A100 Tensor Core GPU datasheet (SXM 80 GB: 312 TFLOP/s BF16, 2,039 GB/s, NVLink 600 GB/s)"
SCALING_BOOK = ("JAX Scaling Book (Austin et al. 2025), \"How to Think About TPUs\", TPU Specs: bf16 FLOP/s, HBM, ICI "
                "per link, DCN per chip")
# One 400 Gb/s InfiniBand NDR link per H100 (DGX H100: 8 ConnectX-7 per 8 GPUs) = 50 GB/s one way; one 200 Gb/s
# HDR link per A100 (DGX A100) = 25 GB/s. NVLink's 900 / 600 GB/s are both directions: half one way.
HARDWARE = {h.key: h for h in (
    Hardware("h100", "NVIDIA H100 SXM", 989e12, 80 * GB, 3.35e12, 8, 450 * GB, 50 * GB, "NVLink 4",
             "InfiniBand NDR 400 Gb/s", NVIDIA_H100),
    Hardware("h200", "NVIDIA H200 SXM", 989e12, 141 * GB, 4.8e12, 8, 450 * GB, 50 * GB, "NVLink 4",
             "InfiniBand NDR 400 Gb/s", NVIDIA_H200),
    Hardware("a100", "NVIDIA A100 SXM 80 GB", 312e12, 80 * GB, 2.039e12, 8, 300 * GB, 25 * GB, "NVLink 3",
             "InfiniBand HDR 200 Gb/s", NVIDIA_A100),
    # A TPU's "node" is its pod: a ring along one torus axis with wraparound uses each link both ways (the book's
    # bidirectional figure); across pods, DCN.
    Hardware("tpu-v5p", "TPU v5p", 4.59e14, 96 * GB, 2.8e12, 8960, 1.8e11, 6.25e9, "ICI (3D torus)", "DCN",
             SCALING_BOOK),
    Hardware("tpu-v5e", "TPU v5e", 1.97e14, 16 * GB, 8.1e11, 256, 9e10, 3.125e9, "ICI (2D torus)", "DCN",
             SCALING_BOOK),
    Hardware("tpu-v6e", "TPU v6e", 9.2e14, 32 * GB, 1.6e12, 256, 1.8e11, 1.25e10, "ICI (2D torus)", "DCN",
             SCALING_BOOK),
)}


@dataclasses.dataclass(frozen=True)
class PublishedRun:
    """A layout a paper trained with and what it reported: `tflops_per_device` and its share of the peak, `utilisation`.
    Llama 3 reports MFU (model FLOPs only); Megatron-LM counts the FLOPs its activation recomputation adds (§5.1),
    a hardware FLOPs utilisation (`counts_recompute`). `remat`: the policy the paper says it ran (Llama 3, §3.3.2:
    8K sequences "without activation checkpointing"; Megatron-LM, §5.1: its FLOP count "assumes activation
    recomputation"), or None where it does not say."""

    key: str
    model: str
    hardware: str
    devices: int
    model_axis: int      # TP
    seq_axis: int        # CP
    stage_axis: int      # PP
    data_axis: int       # DP
    seq_len: int
    global_batch_tokens: int
    tflops_per_device: float
    utilisation: float
    source: str
    counts_recompute: bool = False
    remat: str | None = None

    @property
    def sequences(self) -> int:
        return self.global_batch_tokens // self.seq_len


LLAMA3_TABLE4 = "Dubey et al. 2024, arXiv 2407.21783, Table 4"
PUBLISHED = {r.key: r for r in (
    PublishedRun("llama3-405b-8k", "llama3-405b", "h100", 8192, 8, 1, 16, 64, 8192, 16 * 2**20, 430, 0.43,
                 LLAMA3_TABLE4, remat="none"),
    PublishedRun("llama3-405b-16k", "llama3-405b", "h100", 16384, 8, 1, 16, 128, 8192, 16 * 2**20, 400, 0.41,
                 LLAMA3_TABLE4, remat="none"),
    PublishedRun("llama3-405b-16k-128k", "llama3-405b", "h100", 16384, 8, 16, 16, 8, 131_072, 16 * 2**20, 380,
                 0.38, LLAMA3_TABLE4),
    PublishedRun("megatron-146b", "gpt-146b", "a100", 1536, 8, 1, 8, 24, 2048, 2304 * 2048, 148, 0.47, MEGATRON,
                 counts_recompute=True, remat="full"),
    PublishedRun("megatron-1t", "gpt-1t", "a100", 3072, 8, 1, 64, 6, 2048, 3072 * 2048, 163, 0.52, MEGATRON,
                 counts_recompute=True, remat="full"),
)}


def divisors(n: int) -> list[int]:
    """Every divisor of n, ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


# ---- a model or hardware typed in (the page's and the CLI's own sizes) ----

MAX_SIZE = 2**40


def check_model(model: ModelShape) -> ModelShape:
    """Every size of a model whole and positive (experts and positions may be 0), heads dividing the width, at most
    `top_k` experts chosen of `experts`; a LabInputError that names the first size that is not."""
    for name in ("layers", "d_model", "d_ff", "heads", "kv_heads", "vocab"):
        check_int(name, getattr(model, name), 1, MAX_SIZE)
    for name in ("positions", "experts", "top_k"):
        check_int(name, getattr(model, name), 0, MAX_SIZE)
    if model.d_model % model.heads or model.heads % model.kv_heads:
        raise LabInputError("heads_split", "heads ({heads}) must divide d_model ({d_model}), and key/value heads "
                            "({kv_heads}) the heads", heads=model.heads, d_model=model.d_model,
                            kv_heads=model.kv_heads)
    if model.experts and not 1 <= model.top_k <= model.experts:
        raise LabInputError("out_of_range", "{name} must be between {low} and {high}, got {value}", name="top_k",
                            low=1, high=model.experts, value=model.top_k)
    return model


def check_hardware(hardware: Hardware) -> Hardware:
    """Peak, memory and bandwidths finite and positive, a node of at least one device."""
    for name in ("peak_flops", "memory_bytes", "hbm_bytes_s", "intra_bytes_s", "inter_bytes_s"):
        if check_float(name, getattr(hardware, name), 0.0, 1e30) <= 0:
            raise LabInputError("not_positive", "{name} must be greater than zero, got {value}", name=name,
                                value=getattr(hardware, name))
    check_int("node", hardware.node, 1, MAX_SIZE)
    return hardware
