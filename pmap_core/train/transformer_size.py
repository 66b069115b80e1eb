"""The transformer's sizes and what is counted from them alone, with no array: `Dims` (its widths, heads,
sequence length, vocabulary and experts), the mixture of experts' `Routing` (top-k and the capacity factor), the
parameter counts (`param_count`, `expert_param_count`, `matmul_params`) and the FLOPs of a step
(`training_flops`, `multiply_adds_per_sample`). The model itself is `train.transformer`, which re-exports these
names.
"""

from __future__ import annotations

import dataclasses
import math

from pmap_core.costs.analytic import expert_capacity

MLP_RATIO = 4        # the MLP's hidden width over d_model


@dataclasses.dataclass(frozen=True)
class Routing:
    """How a mixture-of-experts layer routes: each token to its `top_k` most probable experts, each expert taking at
    most `capacity(T, E)` tokens of a group of T."""

    top_k: int = 2
    capacity_factor: float = 1.25

    def capacity(self, tokens: int, experts: int) -> int:
        """C = ⌈c · tokens · k / E⌉ slots per expert per group (`costs.analytic.expert_capacity`: rounded to 1e-9
        first, so that a product that is whole in exact arithmetic is not rounded up by float error)."""
        return expert_capacity(self.capacity_factor, tokens, self.top_k, experts)


@dataclasses.dataclass(frozen=True)
class Dims:
    """The transformer's sizes besides its depth (`layers`, which the MLP's setting gives); `experts` > 0 replaces
    every block's MLP by that many experts, routed by `top_k` and `capacity_factor` (`routing`)."""

    d_model: int = 32
    heads: int = 4
    seq_len: int = 32
    vocab: int = 32
    experts: int = 0
    top_k: int = 2
    capacity_factor: float = 1.25

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def routing(self) -> Routing | None:
        """The MoE layers' routing, or None for the dense MLP."""
        return Routing(self.top_k, self.capacity_factor) if self.experts else None


def param_count(dims: Dims, layers: int) -> int:
    d, v = dims.d_model, dims.vocab
    per_block = 4 * d + 4 * d * d + d + _mlp_params(dims)   # 2 LayerNorms, q k v o, bo, the MLP (or the experts)
    return (v + dims.seq_len) * d + layers * per_block + 2 * d + d * v + v


def _mlp_params(dims: Dims) -> int:
    """A block's MLP: 2·d·f + f + d; with experts, the router's d·E and E such MLPs."""
    d, f = dims.d_model, MLP_RATIO * dims.d_model
    mlp = 2 * d * f + f + d
    return d * dims.experts + dims.experts * mlp if dims.experts else mlp


def expert_param_count(dims: Dims, layers: int) -> int:
    """The parameters of every block's experts (what expert parallelism splits over its `expert` axis)."""
    d, f = dims.d_model, MLP_RATIO * dims.d_model
    return layers * dims.experts * (2 * d * f + f + d)


def matmul_params(dims: Dims, layers: int) -> int:
    """N of the 6·N rule: every parameter but the two embedding tables (a lookup multiplies nothing) —
    Kaplan et al.'s non-embedding count, plus the untied output projection, which is a matmul. With experts, a
    block's work per token stands in for its experts' parameters: the router (d·E), and, for the E·C slots of a
    group of T tokens that the dense formulation computes whatever the routing, per token (E·C/T) of an expert's
    MLP and 2·E·C·d of the one-hot dispatch and combine products."""
    count = param_count(dims, layers) - (dims.vocab + dims.seq_len) * dims.d_model
    if not dims.experts:
        return count
    d, f, e, t = dims.d_model, MLP_RATIO * dims.d_model, dims.experts, dims.seq_len
    slots = e * dims.routing.capacity(t, e)
    work = d * e + math.ceil(slots * (2 * d * f + f + d + 2 * d) / t)
    return count + layers * (work - _mlp_params(dims))


def training_flops(dims: Dims, layers: int, tokens: int) -> int:
    """FLOPs of one training step (forward and backward) over `tokens` tokens: 6·N·tokens plus the attention
    term 12·layers·seq_len·d_model per token.

    6·N: each parameter of a matmul costs 2 FLOPs per token forward (a multiply and an add) and 4 backward
    (the gradients of its input and of itself) — Kaplan et al. 2020, "Scaling Laws for Neural Language
    Models", §2.1 and Table 1 (C ≈ 6N per token). The attention term: the scores Q·Kᵀ and their product with
    V are 2·seq_len·d_model multiply-adds per token and layer, 4·seq_len·d_model FLOPs forward, three times
    that with the backward: 12·layers·seq_len·d_model (the JAX Scaling Book, "All the Transformer Math You
    Need to Know", which counts the full T × T products as this program computes them; Kaplan's Table 1
    writes 2·n_layer·n_ctx·d_attn forward, the causal half of the context).

    Not counted: LayerNorm, softmax, GELU, the residual adds, the embedding lookup (a one-hot product here,
    4·vocab·d_model FLOPs per token with its weight gradient), the cross-entropy and the optimizer's update: a
    few FLOPs per activation or parameter each. XLA:CPU's `cost_analysis()['flops']` of one compiled SGD step
    on one device counts 1.15× this at the defaults (B = 64), 1.08× at d_model 64, 1.04× at d_model 128 and
    seq_len 64: the uncounted work grows with the activations, the counted with d_model times them
    (tests/core/test_transformer.py)."""
    return 6 * matmul_params(dims, layers) * tokens + 12 * layers * dims.seq_len * dims.d_model * tokens


def multiply_adds_per_sample(dims: Dims, layers: int) -> int:
    """Forward multiply-adds of one sequence (the work limit's unit): half the forward FLOPs of its
    seq_len tokens, (2N + 4·layers·seq_len·d_model) / 2 each."""
    per_token = matmul_params(dims, layers) + 2 * layers * dims.seq_len * dims.d_model
    return dims.seq_len * per_token
