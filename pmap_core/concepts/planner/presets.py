"""The models, the hardware and the published runs the planner knows, each with its source.

A model is its published shape; its parameter count is derived from the shape (`ModelShape.param_counts`), so
the lab's own transformer and Llama 3 are counted by one rule. Hardware is one accelerator's peak, memory and the
bandwidth one device has to the others within its node and across nodes (one way, bytes/s). A published run is a
layout a paper trained with and the utilisation it reported, for the planner to predict beside it.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import pathlib
import tomllib
from typing import Any

from pmap_core.validation import LabInputError, check_float, check_int


def hashed_once(cls: type) -> type:
    """A frozen dataclass whose hash is computed once per instance: a search keys its caches on a model and a
    hardware ~10^6 times, and their generated hash rehashes every field each time. The hash is left out of a pickle
    (a string's hash differs from one process to the next)."""

    def __hash__(self) -> int:
        if "_hash" not in self.__dict__:
            self.__dict__["_hash"] = hash(dataclasses.astuple(self))  # frozen: written past __setattr__
        return self.__dict__["_hash"]

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name != "_hash"}

    cls.__hash__, cls.__getstate__ = __hash__, __getstate__
    return cls


@hashed_once
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

    @functools.cached_property  # a frozen shape: counted once, asked ~10^5 times by a search
    def expert_params(self) -> int:
        """Ψ_e: every routed expert's MLP in every mixture block (0 for a dense model)."""
        return self.moe_layers * self.experts * self.param_counts()["mlp"]

    @functools.cached_property  # a frozen shape: counted once, asked ~10^5 times by a search
    def dense_block_params(self) -> float:
        """A block's parameters every device of `expert` holds, on average over the blocks: attention, and a dense
        block's MLP or a mixture's router and shared experts."""
        c = self.param_counts()
        mixture = self.moe_layers * (c["router"] + self.shared_experts * c["mlp"])
        return c["attention"] + (mixture + (self.layers - self.moe_layers) * c["mlp"]) / self.layers

    @functools.cached_property  # a frozen shape: counted once, asked ~10^5 times by a search
    def params(self) -> int:
        """Ψ: every parameter."""
        c = self.param_counts()
        return round(self.layers * self.dense_block_params) + c["embed"] + c["head"] + self.expert_params

    @functools.cached_property  # a frozen shape: counted once, asked ~10^5 times by a search
    def active_params(self) -> int:
        """The parameters one token runs through: the dense ones and `top_k` experts per mixture block."""
        return self.params - self.expert_params + self.moe_layers * self.top_k * self.param_counts()["mlp"]


MEGATRON = ("Narayanan et al. 2021, \"Efficient Large-Scale Language Model Training on GPU Clusters Using "
            "Megatron-LM\", arXiv 2104.04473, Table 1")

@dataclasses.dataclass(frozen=True)
class Level:
    """One level of the interconnect: its name, how many devices a group of it holds (0: every device), and the
    bytes/s one way each device has to the others of its group."""

    name: str
    size: int
    bytes_s: float


@hashed_once
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
    context: str | None = None     # how its seq axis split attention, where it says

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
    # §3.3.2: context parallelism by all-gathering K and V, each sequence cut into 2 × CP chunks for load balance.
    PublishedRun("llama3-405b-16k-128k", "llama3-405b", "h100", 16384, 8, 16, 16, 8, 131_072, 16 * 2**20, 380,
                 0.38, LLAMA3_TABLE4, context="zigzag"),
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


# ---- the schema of a model's and a cluster's file (`files`; the presets in presets/ are such files) ----

MODEL_KEYS = {"name": str, "layers": int, "d_model": int, "d_ff": int, "heads": int, "kv_heads": int, "vocab": int,
              "d_head": int, "gated_mlp": bool, "tied": bool, "experts": int, "top_k": int, "shared_experts": int,
              "dense_layers": int, "norm_bias": bool, "biases": bool, "positions": int, "source": str}
MODEL_REQUIRED = ("name", "layers", "d_model", "d_ff", "heads", "kv_heads", "vocab")
HARDWARE_KEYS = {"name": str, "peak_flops": float, "memory_bytes": float, "hbm_bytes_s": float, "fp8_flops": float,
                 "units": int, "matmul_share": float, "attention_share": float, "source": str, "levels": list}
HARDWARE_REQUIRED = ("name", "peak_flops", "memory_bytes", "hbm_bytes_s", "levels")
LEVEL_KEYS = {"name": str, "size": int, "bytes_s": float}



def _checked(where: str, table: dict[str, Any], keys: dict[str, type], required: tuple[str, ...]) -> dict[str, Any]:
    """The table's values, each key known and of its kind (an int is a float too; a bool is not an int)."""
    for key, value in table.items():
        if key not in keys:
            raise LabInputError("plan_file_key", "{where}: unknown key {key!r} (known: {known})", where=where,
                                key=key, known=", ".join(keys))
        kind = keys[key]
        good = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            good = True
        if not good:
            raise LabInputError("plan_file_value", "{where}: {key} must be {kind}, got {value!r}", where=where,
                                key=key, kind={int: "a whole number", float: "a number", bool: "true or false",
                                               str: "text", list: "a list of [[levels]]"}[kind], value=value)
    missing = [key for key in required if key not in table]
    if missing:
        raise LabInputError("plan_file_missing", "{where}: missing {keys}", where=where, keys=", ".join(missing))
    return table


def model_from(table: dict[str, Any], where: str, key: str = "file") -> ModelShape:
    values = dict(_checked(where, table, MODEL_KEYS, MODEL_REQUIRED))
    head_dim = values.pop("d_head", 0)
    if head_dim == values["d_model"] // values["heads"] and values["d_model"] % values["heads"] == 0:
        head_dim = 0  # the default, written out
    model = ModelShape(key=key, source=values.pop("source", where), head_dim=head_dim, **values)
    return check_model(model)


def hardware_from(table: dict[str, Any], where: str, key: str = "file") -> Hardware:
    values = dict(_checked(where, table, HARDWARE_KEYS, HARDWARE_REQUIRED))
    raw = values.pop("levels")
    if not raw or not all(isinstance(level, dict) for level in raw):
        raise LabInputError("plan_file_value", "{where}: levels must be one or more [[levels]] tables, innermost "
                            "first", where=where, key="levels", kind="a list of [[levels]]", value=raw)
    levels = []
    for index, level in enumerate(raw):
        item = _checked(f"{where} [[levels]] {index + 1}", level, LEVEL_KEYS, ("name", "bytes_s"))
        levels.append(Level(item["name"], item.get("size", 0), float(item["bytes_s"])))
    for inner, outer in itertools.pairwise(levels):
        if inner.size < 1 or (outer.size and outer.size % inner.size):
            raise LabInputError("plan_level_sizes", "{where}: level {outer!r} ({outer_size} devices) must hold whole "
                                "groups of level {inner!r} ({inner_size})", where=where, outer=outer.name,
                                outer_size=outer.size or "every", inner=inner.name, inner_size=inner.size)
    first, last = levels[0], levels[-1]
    hardware = Hardware(key=key, name=values["name"], peak_flops=float(values["peak_flops"]),
                        memory_bytes=float(values["memory_bytes"]), hbm_bytes_s=float(values["hbm_bytes_s"]),
                        node=first.size or 1, intra_bytes_s=first.bytes_s, inter_bytes_s=last.bytes_s,
                        intra_name=first.name, inter_name=last.name, source=values.get("source", where),
                        units=values.get("units", 0), fp8_flops=float(values.get("fp8_flops", 0.0)),
                        levels=tuple(levels),
                        **{k: float(values[k]) for k in ("matmul_share", "attention_share") if k in values})
    for name in ("matmul_share", "attention_share"):
        share = getattr(hardware, name)
        if not 0 < share <= 1:
            raise LabInputError("out_of_range", "{name} must be between {low} and {high}, got {value}", name=name,
                                low=0, high=1, value=share)
    return check_hardware(hardware)


PRESETS = pathlib.Path(__file__).parent / "presets"


def _presets(kind: str, make: Any) -> list[Any]:
    return [make(tomllib.loads(path.read_text(encoding="utf-8")), f"presets/{kind}/{path.name}", path.stem)
            for path in sorted((PRESETS / kind).glob("*.toml"))]


# The presets, each a file of presets/: models by paper and size, hardware by name.
MODELS = {m.key: m for m in sorted(_presets("models", model_from), key=lambda m: (m.source, m.params))}
HARDWARE = {h.key: h for h in sorted(_presets("hardware", hardware_from), key=lambda h: h.name)}
