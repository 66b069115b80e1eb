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
    head_dim: int = 0        # d_head, where heads · d_head is not d_model (0: d_model / heads)
    shared_experts: int = 0  # MLPs every token of a mixture's block runs through besides its top_k experts
    dense_layers: int = 0    # the first blocks of a mixture, with one dense MLP of d_ff instead of experts

    @property
    def d_head(self) -> int:
        return self.head_dim or self.d_model // self.heads

    @property
    def moe_layers(self) -> int:
        """The blocks whose MLP is a mixture of experts."""
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def mlp_passes(self) -> float:
        """The MLPs of d_ff one token runs through in a block, on average over the blocks: 1 in a dense block,
        top_k + shared_experts in a mixture's."""
        return (self.moe_layers * (self.top_k + self.shared_experts) + self.layers - self.moe_layers) / self.layers

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
        """Ψ_e: every routed expert's MLP in every mixture block (0 for a dense model)."""
        return self.moe_layers * self.experts * self.param_counts()["mlp"]

    @property
    def dense_block_params(self) -> float:
        """A block's parameters every device of `expert` holds, on average over the blocks: attention, and a dense
        block's MLP or a mixture's router and shared experts."""
        c = self.param_counts()
        mixture = self.moe_layers * (c["router"] + self.shared_experts * c["mlp"])
        return c["attention"] + (mixture + (self.layers - self.moe_layers) * c["mlp"]) / self.layers

    @property
    def params(self) -> int:
        """Ψ: every parameter."""
        c = self.param_counts()
        return round(self.layers * self.dense_block_params) + c["embed"] + c["head"] + self.expert_params

    @property
    def active_params(self) -> int:
        """The parameters one token runs through: the dense ones and `top_k` experts per mixture block."""
        return self.params - self.expert_params + self.moe_layers * self.top_k * self.param_counts()["mlp"]


LLAMA3 = "Llama 3: Dubey et al. 2024, \"The Llama 3 Herd of Models\", arXiv 2407.21783, Table 3"
MIXTRAL = "Mixtral: Jiang et al. 2024, \"Mixtral of Experts\", arXiv 2401.04088, Table 1"
MEGATRON = ("Narayanan et al. 2021, \"Efficient Large-Scale Language Model Training on GPU Clusters Using "
            "Megatron-LM\", arXiv 2104.04473, Table 1")

# Narayanan et al. 2021, Table 1: (key, parameters as the table gives them, layers, hidden size, attention heads).
MEGATRON_SHAPES = (
    ("gpt-1.7b", "1.7B", 24, 2304, 24), ("gpt-3.6b", "3.6B", 30, 3072, 32), ("gpt-7.5b", "7.5B", 36, 4096, 32),
    ("gpt-18b", "18.4B", 40, 6144, 48), ("gpt-39b", "39.1B", 48, 8192, 64), ("gpt-76b", "76.1B", 60, 10240, 80),
    ("gpt-146b", "145.6B", 80, 12288, 96), ("gpt-310b", "310.1B", 96, 16384, 128),
    ("gpt-530b", "529.6B", 105, 20480, 128), ("gpt-1t", "1T", 128, 25600, 160),
)
MODELS = {m.key: m for m in (
    # The paper's vocabulary, 128,000 (the released checkpoints' configuration files say 128,256).
    ModelShape("llama3-8b", "Llama 3 8B", 32, 4096, 14336, 32, 8, 128_000, LLAMA3),
    ModelShape("llama3-70b", "Llama 3 70B", 80, 8192, 28672, 64, 8, 128_000, LLAMA3),
    ModelShape("llama3-405b", "Llama 3 405B", 126, 16384, 53248, 128, 8, 128_000, LLAMA3),
    ModelShape("mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 14336, 32, 8, 32_000, MIXTRAL, experts=8, top_k=2),
    # Megatron-LM's GPT models (Table 1 gives layers, width and heads; §5.1: sequence 2048, vocabulary 51,200): a
    # GPT MLP of 4h, LayerNorm and biases, a learned position table.
    *(ModelShape(key, f"GPT {size} (Megatron-LM)", layers, d, 4 * d, heads, heads, 51_200, MEGATRON, gated_mlp=False,
                 norm_bias=True, biases=True, positions=2048, tied=True)
      for key, size, layers, d, heads in MEGATRON_SHAPES),
)}


@dataclasses.dataclass(frozen=True)
class Level:
    """One level of the interconnect: its name, how many devices a group of it holds (0: every device), and the
    bytes/s one way each device has to the others of its group."""

    name: str
    size: int
    bytes_s: float


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
    # The compute model's figures (`compute`): streaming multiprocessors a product's tiles fill in waves (0: not
    # counted; the datasheets: A100 108, H100 SXM 132); the share of peak a large matrix product sustains
    # (`matmul_share`: fitted, the A100's to Megatron-LM's 10 rows, the H100's to Llama 3's 3, by
    # benchmarks/plan_published.py; the H200 takes the H100's, other hardware 0.6, unfitted); the share of peak a fused
    # attention kernel sustains (FlashAttention-2: 50–73% of an A100's peak, Dao 2023, arXiv 2307.08691, abstract, 0.6
    # taken; 35% of an H100's, Shah et al. 2024, arXiv 2407.08608, abstract); the dense FP8 peak (0: none).
    units: int = 0
    matmul_share: float = 0.6
    attention_share: float = 0.35
    fp8_flops: float = 0.0
    levels: tuple[Level, ...] = ()

    @functools.cached_property  # a search asks for it ~10^5 times
    def link_levels(self) -> tuple[Level, ...]:
        """The levels of the interconnect, innermost first: the given ones, or the node and the cluster."""
        return self.levels or (Level(self.intra_name, self.node, self.intra_bytes_s),
                               Level(self.inter_name, 0, self.inter_bytes_s))


GB = 1e9
NVIDIA_H100 = ("NVIDIA H100 Tensor Core GPU datasheet (SXM5: 989 TFLOP/s dense BF16, 1,979 dense FP8, 80 GB, "
               "3.35 TB/s, NVLink 900 GB/s; 132 SMs)")
NVIDIA_H200 = ("NVIDIA H200 Tensor Core GPU datasheet (SXM: 989 TFLOP/s dense BF16, 1,979 dense FP8, 141 GB, "
               "4.8 TB/s, NVLink 900 GB/s; 132 SMs)")
NVIDIA_A100 = ("NVIDIA A100 Tensor Core GPU datasheet (SXM 80 GB: 312 TFLOP/s BF16, 2,039 GB/s, NVLink 600 GB/s; 108 "
               "SMs)")
SCALING_BOOK = ("JAX Scaling Book (Austin et al. 2025), \"How to Think About TPUs\", TPU Specs: bf16 FLOP/s, HBM, ICI "
                "per link, DCN per chip")
# One 400 Gb/s InfiniBand NDR link per H100 (DGX H100: 8 ConnectX-7 per 8 GPUs) = 50 GB/s one way; one 200 Gb/s
# HDR link per A100 (DGX A100) = 25 GB/s. NVLink's 900 / 600 GB/s are both directions: half one way.
HARDWARE = {h.key: h for h in (
    Hardware("h100", "NVIDIA H100 SXM", 989e12, 80 * GB, 3.35e12, 8, 450 * GB, 50 * GB, "NVLink 4",
             "InfiniBand NDR 400 Gb/s", NVIDIA_H100, units=132, matmul_share=0.56, attention_share=0.35,
             fp8_flops=1979e12),
    Hardware("h200", "NVIDIA H200 SXM", 989e12, 141 * GB, 4.8e12, 8, 450 * GB, 50 * GB, "NVLink 4",
             "InfiniBand NDR 400 Gb/s", NVIDIA_H200, units=132, matmul_share=0.56, attention_share=0.35,
             fp8_flops=1979e12),
    Hardware("a100", "NVIDIA A100 SXM 80 GB", 312e12, 80 * GB, 2.039e12, 8, 300 * GB, 25 * GB, "NVLink 3",
             "InfiniBand HDR 200 Gb/s", NVIDIA_A100, units=108, matmul_share=0.65, attention_share=0.6),
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
    flash_attention: bool = True   # a fused attention kernel (Megatron-LM 2021 predates FlashAttention)
    dropout: bool = False          # dropout on the attention's probabilities and the residual stream (GPT's 0.1)
    sequence_parallel: bool = True  # Megatron-LM's sequence parallelism (2022: none in the 2021 runs)
    zero: int | None = None        # the ZeRO stage the paper ran, where it says (Megatron-LM 2021: none, 0)

    @property
    def sequences(self) -> int:
        return self.global_batch_tokens // self.seq_len


LLAMA3_TABLE4 = "Dubey et al. 2024, arXiv 2407.21783, Table 4"
# Narayanan et al. 2021, Table 1, every row (each states its tensor- and pipeline-parallel sizes; data parallel is
# the GPUs over their product): (model, GPUs, TP, PP, batch size in 2,048-token sequences, achieved TFLOP/s per GPU,
# its percentage of the A100's 312 TFLOP/s, as the table rounds it).
MEGATRON_RUNS = (
    ("gpt-1.7b", 32, 1, 1, 512, 137, 44), ("gpt-3.6b", 64, 2, 1, 512, 138, 44),
    ("gpt-7.5b", 128, 4, 1, 512, 142, 46), ("gpt-18b", 256, 8, 1, 1024, 135, 43),
    ("gpt-39b", 512, 8, 2, 1536, 138, 44), ("gpt-76b", 1024, 8, 4, 1792, 140, 45),
    ("gpt-146b", 1536, 8, 8, 2304, 148, 47), ("gpt-310b", 1920, 8, 16, 2160, 155, 50),
    ("gpt-530b", 2520, 8, 35, 2520, 163, 52), ("gpt-1t", 3072, 8, 64, 3072, 163, 52),
)
PUBLISHED = {r.key: r for r in (
    PublishedRun("llama3-405b-8k", "llama3-405b", "h100", 8192, 8, 1, 16, 64, 8192, 16 * 2**20, 430, 0.43,
                 LLAMA3_TABLE4, remat="none"),
    PublishedRun("llama3-405b-16k", "llama3-405b", "h100", 16384, 8, 1, 16, 128, 8192, 16 * 2**20, 400, 0.41,
                 LLAMA3_TABLE4, remat="none"),
    PublishedRun("llama3-405b-16k-128k", "llama3-405b", "h100", 16384, 8, 16, 16, 8, 131_072, 16 * 2**20, 380,
                 0.38, LLAMA3_TABLE4),
    *(PublishedRun(f"megatron-{model.removeprefix('gpt-')}", model, "a100", gpus, tp, 1, pp, gpus // (tp * pp), 2048,
                   batch * 2048, tflops, percent / 100, MEGATRON, counts_recompute=True, remat="full",
                   flash_attention=False, dropout=True, sequence_parallel=False, zero=0)
      for model, gpus, tp, pp, batch, tflops, percent in MEGATRON_RUNS),
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
    for name in ("positions", "experts", "top_k", "head_dim", "shared_experts", "dense_layers"):
        check_int(name, getattr(model, name), 0, MAX_SIZE)
    if model.dense_layers > model.layers:
        raise LabInputError("out_of_range", "{name} must be between {low} and {high}, got {value}",
                            name="dense_layers", low=0, high=model.layers, value=model.dense_layers)
    if (not model.head_dim and model.d_model % model.heads) or model.heads % model.kv_heads:
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
