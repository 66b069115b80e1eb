"""A small decoder-only transformer (GPT-style) and its task: the third model the data-parallel programs train.

The model, in float32: token + learned position embeddings; `layers` pre-LayerNorm blocks, each
h ← h + Attn(LN(h)), h ← h + MLP(LN(h)), with causal multi-head self-attention (`heads` heads of
d_model / heads dimensions, the future masked out) and an MLP of 4·d_model hidden units with tanh-GELU;
a final LayerNorm; an *untied* output projection to the vocabulary; cross-entropy of the next token,
averaged over the batch and the positions.

Untied (GPT-2 ties the output projection to the token embedding; this one does not): every parameter
then belongs to exactly one layer — the embedding, a block, or the head — so ZeRO-3's per-layer gathers
(train.zero) gather each layer's own buffer once per use, as they do for the MLP.

The attention's projections are stored with a head axis, wq/wk/wv (d_model, heads, d_head) and
wo (heads, d_head, d_model): the parameters alone say how many heads the model has, so
`models.loss(model, params, x, y)` needs no other setting. That head axis is also what tensor parallelism
splits (train.tensor, Megatron-LM's split: each device its heads, and its columns of the MLP), with a `Split`
telling the forward pass where the residual stream and the two sums over a split axis in each block go.

The task (`train.markov`): a fixed random second-order Markov chain over `vocab` tokens, drawn from the seed,
whose best possible loss is known (`floor_loss`). The sizes (`Dims`, `Routing`) and the parameter and FLOP
counts are `train.transformer_size`'s. Both modules' names are importable from here too.

Parameters are a flat dict of host NumPy arrays drawn from the seed, the same for any device count.

Rematerialisation (`remat`, one of `REMAT_POLICIES`; concepts.activation_memory measures what each keeps):
"none" keeps for the backward pass whatever autodiff saves; "full" wraps each block in `jax.checkpoint`, so only
the block's input is kept and the block's forward runs again in the backward pass; "selective" keeps the
tensors named in `SELECTIVE_SAVED` and recomputes the attention's scores, softmax and product with V — the terms
that grow with seq_len² — as Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
Models", arXiv 2205.05198, §4.2) do.

A mixture of experts (`Dims.experts` E > 0, routed as `Routing` says: top_k k, capacity_factor c) replaces the MLP of
every block with E experts, each an MLP of the dense one's shape (Switch Transformer, Fedus et al. 2021, §2: each
expert is the FFN it replaces), and a router. Every block, not every other one as GShard (Lepikhin et al. 2020) and
Switch place them to halve their all-to-alls: the lab's transformer has 2 blocks by default, and one MoE layer per
block keeps the count of a step's all-to-alls a plain 4 per block (2 forward, 2 backward) under expert parallelism.

    router     logits a·W_r (d_model × E, no bias), softmax probabilities p; a token's k largest p choose its
               experts and weigh their outputs as they are, not renormalised over the k: y = Σ_{i ∈ top-k} p_i·E_i(a)
               (Switch §2.1, eq. 2; GShard's Algorithm 1 renormalises its two gates to sum to 1). Left as they are,
               the gates give the router a gradient from the loss at k = 1 too, where renormalised ones are all 1.
    groups     capacity is counted per group of tokens, GShard's "local group dispatching" (§2.2): here a group is
               one sequence (seq_len tokens). Every device holds whole sequences, so one device routes exactly the
               groups a run split over a data × expert mesh routes, and both drop the same tokens.
    capacity   each expert takes at most C = ⌈c · T · k / E⌉ of a group's T tokens (`Routing.capacity`): Switch's
               expert capacity, tokens / experts × capacity factor (§2.2, eq. 3), times k for k choices per token as
               GShard gives each group 2N/(G·E) of an expert for its top-2 (§2.2); rounded up, so the slots never fall
               short of c·T·k/E.
    order      first choices take slots before second choices, and within a choice the earlier position first
               (GShard's Algorithm 1: the second pass starts from the first pass's counts); without GShard's random
               dispatch of the second choice. A choice past its expert's C slots is dropped: that expert's output is
               0 for that token, which keeps its other choices, and the residual stream carries it on.
    dense      the formulation of GShard (§3.1, Algorithm 2), Switch and Mesh-TensorFlow: one-hot dispatch and
               combine tensors (group, token, expert, slot), x_e = dispatch·a of shape (groups, E, C, d_model), the
               experts on it (`Split.experts`), out = combine·y_e. Every expert computes all C slots, filled or not
               (`lax.ragged_all_to_all`, the dropless form, does not run on CPU).
    balance    Switch's auxiliary loss α·E·Σ_i f_i·P_i (§2.2, eq. 4–6): f_i the share of a group's k·T choices
               routed to expert i (before capacity; Switch's top-1 count at k = 1), P_i its mean router probability;
               per group, averaged over the groups, summed over the blocks, added to the cross-entropy with
               α = `LOAD_BALANCE_WEIGHT` (0.01, Switch's).

`Split.experts` says how the experts run on x_e: all E on this device, or under expert parallelism (train.experts)
each expert's slots sent to the device that holds it by an all-to-all, run there, and sent back. `routing_stats`
reads what a forward pass routed: each group's load per expert, the slots kept, the balance term.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.ad_checkpoint import checkpoint_name

from pmap_core.train.markov import SUCCESSORS, chain, floor_loss, make_sequences  # noqa: F401 (re-exported)
from pmap_core.train.transformer_size import (  # noqa: F401 (re-exported: the callers read them from here)
    MLP_RATIO,
    Dims,
    Routing,
    expert_param_count,
    matmul_params,
    multiply_adds_per_sample,
    param_count,
    training_flops,
)

LN_EPS = 1e-5
EMBED_STD = 0.1      # token and position embeddings: N(0, 0.1²)
OUT_STD = 0.02      # the output projection: small, so the first loss is close to ln(vocab)

REMAT_POLICIES = ("none", "selective", "full")
# What selective recomputation keeps of a block (besides its input, which `jax.checkpoint` always keeps): every
# tensor of Korthikanti et al.'s term list (§4.1) but the attention's s² ones, each marked with `checkpoint_name`.
# By name rather than by a dots policy (`dots_with_no_batch_dims_saveable` would also keep the projections and
# drop QKᵀ and the product with V, which have batch axes): a dots policy keeps only matmul outputs, so the
# LayerNorm and GELU outputs the paper stores would be recomputed, and which dots have batch axes is a fact of
# how an einsum lowers, not of the model. The names say what is kept (the JAX docs, "Gradient checkpointing
# with jax.checkpoint", custom policies by name).
SELECTIVE_SAVED = ("ln1_out", "qkv", "attn_context", "ln2_in", "ln2_out", "mlp_hidden", "mlp_gelu")
LOAD_BALANCE_WEIGHT = 0.01   # α of Switch's load-balancing loss (Fedus et al. 2021, §2.2: α = 10⁻²)
ROUTER_SCALE = 0.1           # the router's initial variance is this over fan-in (Switch §2.4's reduced scale s = 0.1)


@dataclasses.dataclass(frozen=True)
class Split:
    """How a block's products run when a program splits the model over devices (train.tensor); left empty (one
    device, or a batch split by rows only), as written, the compiler placing every result.

    stream: the residual stream's (b, t, d_model) sharding, where the sums of the block's two row-parallel products
        go (the attention's output projection sums over the heads, the MLP's second weight over its width). Whole
        over `model` (tensor parallelism), an einsum told `out_sharding=stream` all-reduces them.
    column: how a column-parallel product (einsum subscripts, a LayerNorm's output, a weight) runs; None: as
        written. Under sequence parallelism it first all-gathers every position over `model`.
    row: how a row-parallel product puts its sums on the stream; None: the einsum with `out_sharding=stream`.
        Under sequence parallelism, a reduce-scatter by positions (Korthikanti et al. 2022, §4.2.2: Megatron's g
        and ḡ).
    attend: the attention's core, (q, k, v) -> the heads' outputs, each (b, t, heads, d_head); None:
        `causal_attention` of the positions at hand. Context parallelism (train.context), where each device holds
        a block of positions, writes its own: K and V gathered, rotated around a ring or exchanged for heads.
    positions: the positions (t,) in the whole sequence of the tokens at hand; None: 0 … t − 1. Under context
        parallelism, the device's block (or its two zig-zag chunks): the embedding adds their position embeddings.
    routing: how the mixture-of-experts blocks route (`Routing`): a setting of the model rather than of a split,
        carried here because every program's call reaches the blocks through this record; None where the model is
        dense (a block with experts refuses to run without it).
    experts: how the experts run on the dispatched tokens, (params, block prefix, x_e (groups, E, C, d_model)) ->
        their outputs of the same shape; None: `expert_mlps`, every expert on this device. Expert parallelism
        (train.experts) sends each expert's slots to the device that holds it (all-to-all) and the outputs back.
    """

    stream: Any = None
    column: Callable[[str, jax.Array, jax.Array], jax.Array] | None = None
    row: Callable[[str, jax.Array, jax.Array], jax.Array] | None = None
    attend: Callable[[jax.Array, jax.Array, jax.Array], jax.Array] | None = None
    positions: jax.Array | None = None
    routing: Routing | None = None
    experts: Callable[[dict, str, jax.Array], jax.Array] | None = None

    def expanded(self, subscripts: str, a: jax.Array, w: jax.Array) -> jax.Array:
        """The column-parallel product `subscripts` of a and w."""
        return jnp.einsum(subscripts, a, w) if self.column is None else self.column(subscripts, a, w)

    def summed(self, subscripts: str, a: jax.Array, w: jax.Array) -> jax.Array:
        """The row-parallel product `subscripts` of a and w, its sums over the split axis placed on the stream."""
        if self.row is not None:
            return self.row(subscripts, a, w)
        return jnp.einsum(subscripts, a, w, out_sharding=self.stream)

    def attended(self, q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
        """The heads' outputs of q, k and v (`attend`, or `causal_attention`)."""
        return causal_attention(q, k, v) if self.attend is None else self.attend(q, k, v)

    def experts_ran(self, params: dict, prefix: str, dispatched: jax.Array) -> jax.Array:
        """The experts' outputs on the dispatched tokens (`experts`, or `expert_mlps`)."""
        return expert_mlps(params, prefix, dispatched) if self.experts is None else self.experts(
            params, prefix, dispatched)


NO_SPLIT = Split()


ATTENTION_NAMES = ("ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "bo", "ln2_g", "ln2_b")
MLP_NAMES = ("w_fc", "b_fc", "w_proj", "b_proj")
# A mixture-of-experts block's router and experts (E of each MLP weight and bias, stacked on a leading axis).
MOE_NAMES = ("router", "expert_w_fc", "expert_b_fc", "expert_w_proj", "expert_b_proj")


def block_names(layer: int, experts: int = 0) -> tuple[str, ...]:
    """The parameters of block `layer` (from 0), in the order the block uses them (`experts` > 0: its router and
    experts in place of the MLP)."""
    return tuple(f"block{layer}.{name}" for name in (*ATTENTION_NAMES, *(MOE_NAMES if experts else MLP_NAMES)))


EMBED_NAMES = ("tok_emb", "pos_emb")
HEAD_NAMES = ("ln_f_g", "ln_f_b", "w_out", "b_out")


def layer_names(layers: int, experts: int = 0) -> tuple[tuple[str, ...], ...]:
    """The embedding, the `layers` blocks and the head, each by the names of its parameters."""
    return (EMBED_NAMES, *(block_names(k, experts) for k in range(layers)), HEAD_NAMES)


def init_params(dims: Dims, layers: int, seed: int) -> dict[str, np.ndarray]:
    """Host float32 parameters from `seed`: weights N(0, 1/fan-in), the two projections back into the residual
    stream (wo, w_proj) also scaled by 1/√(2·layers) as GPT-2 does, LayerNorm gains 1, biases 0. With experts, each
    expert's weights are drawn as the MLP's, and the router's with variance `ROUTER_SCALE`/d_model."""
    rng = np.random.default_rng(seed + 11)
    d, h, k, v, f = dims.d_model, dims.heads, dims.d_head, dims.vocab, MLP_RATIO * dims.d_model
    residual = 1.0 / math.sqrt(2 * layers)

    def normal(shape: tuple[int, ...], std: float) -> np.ndarray:
        return (rng.standard_normal(shape) * std).astype(np.float32)

    params = {"tok_emb": normal((v, d), EMBED_STD), "pos_emb": normal((dims.seq_len, d), EMBED_STD)}
    for layer in range(layers):
        p = f"block{layer}."
        params.update({
            p + "ln1_g": np.ones(d, np.float32), p + "ln1_b": np.zeros(d, np.float32),
            p + "wq": normal((d, h, k), d ** -0.5), p + "wk": normal((d, h, k), d ** -0.5),
            p + "wv": normal((d, h, k), d ** -0.5), p + "wo": normal((h, k, d), d ** -0.5 * residual),
            p + "bo": np.zeros(d, np.float32),
            p + "ln2_g": np.ones(d, np.float32), p + "ln2_b": np.zeros(d, np.float32),
        })
        if dims.experts:
            e = dims.experts
            params.update({
                p + "router": normal((d, e), math.sqrt(ROUTER_SCALE / d)),
                p + "expert_w_fc": normal((e, d, f), d ** -0.5), p + "expert_b_fc": np.zeros((e, f), np.float32),
                p + "expert_w_proj": normal((e, f, d), f ** -0.5 * residual),
                p + "expert_b_proj": np.zeros((e, d), np.float32),
            })
            continue
        params.update({
            p + "w_fc": normal((d, f), d ** -0.5), p + "b_fc": np.zeros(f, np.float32),
            p + "w_proj": normal((f, d), f ** -0.5 * residual), p + "b_proj": np.zeros(d, np.float32),
        })
    params.update({"ln_f_g": np.ones(d, np.float32), "ln_f_b": np.zeros(d, np.float32),
                   "w_out": normal((d, v), OUT_STD), "b_out": np.zeros(v, np.float32)})
    return params


def depth(params: dict) -> int:
    """The number of blocks of the model whose parameters are `params`."""
    return sum(1 for name in params if name.endswith(".wq"))


def layer_norm(h: jax.Array, gain: jax.Array, bias: jax.Array) -> jax.Array:
    mean = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(h - mean), axis=-1, keepdims=True)
    return (h - mean) * jax.lax.rsqrt(var + LN_EPS) * gain + bias


def embed(params: dict, tokens: jax.Array, positions: jax.Array | None = None) -> jax.Array:
    """(b, t) tokens -> (b, t, d_model): the token's embedding plus its position's (`positions`: where the t tokens
    sit in the whole sequence, a device's block under context parallelism; None: 0 … t − 1).

    The lookup is a product with the tokens' one-hot rows, not a gather (MaxText offers the same): under impl jit
    the batch is sharded over an explicit mesh, where a gather by sharded indices has no unambiguous output
    sharding and JAX asks for one, while a matmul's follows from its operands; its gradient is a matmul too,
    not a scatter-add. It costs vocab · d_model multiply-adds per token."""
    table = params["tok_emb"]
    one_hot = jax.nn.one_hot(tokens, table.shape[0], dtype=table.dtype)
    where = params["pos_emb"][:tokens.shape[-1]] if positions is None else params["pos_emb"][positions]
    return one_hot @ table + where


def attention(params: dict, prefix: str, h: jax.Array, split: Split = NO_SPLIT) -> jax.Array:
    """Causal multi-head self-attention of h (b, t, d): position i attends to positions ≤ i only.

    Q, K and V come from one product with the three projections stacked, (3, d, heads, d_head): the same
    sums as three products, but under tensor parallelism (train.tensor: the heads split over `model`) the
    backward pass then sums the three paths' gradients of h before it all-reduces them, once per block as
    Megatron-LM's fused QKV projection does, not once per projection. `split.stream`: where the output
    projection's result, a sum over the heads, goes (see `Split`)."""
    w = jnp.stack([params[prefix + "wq"], params[prefix + "wk"], params[prefix + "wv"]])
    q, k, v = checkpoint_name(split.expanded("btd,cdhk->cbthk", h, w), "qkv")
    out = checkpoint_name(split.attended(q, k, v), "attn_context")
    return split.summed("bqhk,hkd->bqd", out, params[prefix + "wo"]) + params[prefix + "bo"]


def causal_attention(q: jax.Array, k: jax.Array, v: jax.Array, q_positions: jax.Array | None = None,
                     k_positions: jax.Array | None = None) -> jax.Array:
    """softmax(Q·Kᵀ / √d_head, the future masked out) · V for each head: q (b, tq, heads, d_head), k and v
    (b, tk, heads, d_head) -> (b, tq, heads, d_head). The mask keeps key j for query i where j's position ≤ i's:
    `q_positions` (tq,) and `k_positions` (tk,) in the whole sequence (context parallelism's blocks, in any order),
    or, None, 0 … t − 1 both."""
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    if q_positions is None:
        t = q.shape[1]
        causal = jnp.tril(jnp.ones((t, t), bool))
    else:
        causal = q_positions[:, None] >= k_positions[None, :]
    scores = jnp.where(causal, scores, jnp.finfo(scores.dtype).min)
    weights = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhqs,bshk->bqhk", weights, v)


def block(params: dict, layer: int, h: jax.Array, split: Split = NO_SPLIT) -> jax.Array:
    """Pre-LayerNorm block `layer`: h + Attn(LN(h)), then + MLP(LN(·)) with tanh-GELU (or its experts', `moe`,
    whose routing figures this form drops: `routed_block` keeps them).

    `split`: how its column- and row-parallel products run and where their sums go (`Split`). JAX's explicit mode
    asks where a product that sums over a split axis puts its result; on one device or split by rows only, nothing
    needs saying."""
    return routed_block(params, layer, h, split)[0]


def routed_block(params: dict, layer: int, h: jax.Array, split: Split = NO_SPLIT) -> tuple[jax.Array, Routed | None]:
    """`block`, and what its mixture of experts routed (None for the dense MLP)."""
    p = f"block{layer}."
    a = checkpoint_name(layer_norm(h, params[p + "ln1_g"], params[p + "ln1_b"]), "ln1_out")
    h = checkpoint_name(h + attention(params, p, a, split), "ln2_in")
    a = checkpoint_name(layer_norm(h, params[p + "ln2_g"], params[p + "ln2_b"]), "ln2_out")
    if p + "router" in params:
        out, routed = moe(params, p, a, split)
        return h + out, routed
    a = checkpoint_name(split.expanded("btd,df->btf", a, params[p + "w_fc"]) + params[p + "b_fc"], "mlp_hidden")
    a = checkpoint_name(jax.nn.gelu(a, approximate=True), "mlp_gelu")
    return h + split.summed("btf,fd->btd", a, params[p + "w_proj"]) + params[p + "b_proj"], None


# ---- the mixture of experts ----

class Routed(NamedTuple):
    """What one MoE layer routed, per group (a sequence) g and expert e: `load` (g, E) the choices routed to each
    expert before capacity, `kept` (g, E) those given a slot; `balance` the layer's load-balancing term E·Σ f·P
    (averaged over the groups, before α); `capacity` C, its slots per expert per group."""

    load: jax.Array
    kept: jax.Array
    balance: jax.Array
    capacity: int


def experts_of(params: dict) -> int:
    """E of a model whose parameters are `params` (0: dense)."""
    return next((int(np.shape(value)[-1]) for name, value in params.items() if name.endswith(".router")), 0)


def route(a: jax.Array, router: jax.Array, routing: Routing) -> tuple[jax.Array, jax.Array, Routed]:
    """The router on a (groups, T, d_model): (dispatch, combine, what it routed). dispatch (groups, T, E, C) is 1 where
    token t takes slot c of expert e; combine is the same, times the gate p_e of that token."""
    groups, tokens, _ = a.shape
    experts, k = router.shape[-1], routing.top_k
    capacity = routing.capacity(tokens, experts)
    probs = jax.nn.softmax(jnp.einsum("btd,de->bte", a, router), axis=-1)
    gates, chosen = lax.top_k(probs, k)                                  # (groups, T, k)
    choice = jax.nn.one_hot(chosen, experts, dtype=jnp.int32)            # (groups, T, k, E)
    # Slots in GShard's order: every token's first choice, then every second choice, each pass by position.
    by_rank = jnp.swapaxes(choice, 1, 2).reshape(groups, k * tokens, experts)
    before = jnp.swapaxes((jnp.cumsum(by_rank, axis=1) - by_rank).reshape(groups, k, tokens, experts), 1, 2)
    slot = jnp.sum(before * choice, axis=-1)                             # (groups, T, k): its place in its expert
    place = jax.nn.one_hot(slot, capacity, dtype=a.dtype)                # all zeros past the capacity: dropped
    dispatch = jnp.einsum("btke,btkc->btec", choice.astype(a.dtype), place)
    combine = jnp.einsum("btke,btkc,btk->btec", choice.astype(a.dtype), place, gates)
    load = jnp.sum(choice, axis=(1, 2))                                  # (groups, E)
    kept = jnp.round(jnp.sum(dispatch, axis=(1, 3))).astype(jnp.int32)  # counted from the dispatch tensor itself
    share = load.astype(a.dtype) / (k * tokens)                          # f_i: not differentiable, as in Switch
    balance = jnp.mean(experts * jnp.sum(share * jnp.mean(probs, axis=1), axis=-1))
    return dispatch, combine, Routed(load, kept, balance, capacity)


def expert_mlps(params: dict, prefix: str, x: jax.Array) -> jax.Array:
    """Each expert's MLP on its slots: x (groups, E', C, d_model) with the experts' weights (E', …) at hand (all E,
    or a device's E/P under expert parallelism) -> (groups, E', C, d_model)."""
    h = jnp.einsum("gecd,edf->gecf", x, params[prefix + "expert_w_fc"]) + params[prefix + "expert_b_fc"][:, None]
    h = jax.nn.gelu(h, approximate=True)
    return jnp.einsum("gecf,efd->gecd", h, params[prefix + "expert_w_proj"]) + params[prefix + "expert_b_proj"][:, None]


def moe(params: dict, prefix: str, a: jax.Array, split: Split = NO_SPLIT) -> tuple[jax.Array, Routed]:
    """The mixture of experts in place of the MLP, on a (groups, T, d_model), each sequence a group: route, dispatch
    (groups, E, C, d_model), the experts (`split.experts_ran`), combine; and what it routed."""
    if split.routing is None:
        raise ValueError("a block with experts needs its routing (Split.routing: top_k and capacity_factor)")
    dispatch, combine, routed = route(a, params[prefix + "router"], split.routing)
    dispatched = jnp.einsum("btec,btd->becd", dispatch, a)
    return jnp.einsum("btec,becd->btd", combine, split.experts_ran(params, prefix, dispatched)), routed


def head(params: dict, h: jax.Array) -> jax.Array:
    """The final LayerNorm and the (untied) output projection: (b, t, vocab) logits."""
    return layer_norm(h, params["ln_f_g"], params["ln_f_b"]) @ params["w_out"] + params["b_out"]


def remat_policy(remat: str) -> Any:
    """The `jax.checkpoint` policy of a block under `remat` ("full": None, JAX's default, which saves nothing
    but the inputs)."""
    if remat not in REMAT_POLICIES[1:]:
        raise ValueError(f"remat must be one of {REMAT_POLICIES}, got {remat!r}")
    return jax.checkpoint_policies.save_only_these_names(*SELECTIVE_SAVED) if remat == "selective" else None


def apply_layer(layer: int, params: dict, h: jax.Array, layers: int, split: Split = NO_SPLIT,
                remat: str = "none") -> jax.Array:
    """Layer `layer` of `layer_names(layers)`: 0 the embedding (tokens in), 1..layers the blocks, then the head
    (`split`: `block`'s; `remat`: one of `REMAT_POLICIES`, for the blocks)."""
    if layer == 0:
        return embed(params, h, split.positions)
    if layer <= layers:
        if remat == "none":
            return block(params, layer - 1, h, split)
        run = jax.checkpoint(lambda params_, h_: block(params_, layer - 1, h_, split), policy=remat_policy(remat))
        return run(params, h)
    return head(params, h)


def logits(params: dict, tokens: jax.Array, split: Split = NO_SPLIT, remat: str = "none") -> jax.Array:
    """(b, t) int tokens -> (b, t, vocab) logits of each next token (`split`: `block`'s; `remat`:
    `apply_layer`'s)."""
    return routed_logits(params, tokens, split, remat)[0]


def routed_logits(params: dict, tokens: jax.Array, split: Split = NO_SPLIT,
                  remat: str = "none") -> tuple[jax.Array, tuple[Routed, ...]]:
    """`logits`, and what each mixture-of-experts block routed, in order (none for a dense model). The experts'
    blocks run as they are (`remat` none: the programs that recompute blocks train the dense model only)."""
    h, layers = tokens, depth(params)
    routed: list[Routed] = []
    for layer in range(layers + 2):
        if 0 < layer <= layers and f"block{layer - 1}.router" in params:
            h, found = routed_block(params, layer - 1, h, split)
            routed.append(found)
            continue
        h = apply_layer(layer, params, h, layers, split, remat)
    return h, tuple(routed)


def cross_entropy(logits_: jax.Array, targets: jax.Array) -> jax.Array:
    """Mean over the batch and the positions of −log softmax(logits)[target]."""
    logits_ = logits_.astype(jnp.float32)
    picked = jnp.sum(logits_ * jax.nn.one_hot(targets, logits_.shape[-1], dtype=logits_.dtype), axis=-1)  # no gather
    return jnp.mean(jax.nn.logsumexp(logits_, axis=-1) - picked)


def loss(params: dict, x: jax.Array, y: jax.Array, split: Split = NO_SPLIT, remat: str = "none") -> jax.Array:
    """The next-token cross-entropy of tokens x against y (`split`: `block`'s; `remat`: `apply_layer`'s), plus, with
    experts, α times each block's load-balancing term."""
    out, routed = routed_logits(params, x, split, remat)
    value = cross_entropy(out, y)
    for layer in routed:
        value = value + LOAD_BALANCE_WEIGHT * layer.balance
    return value


@dataclasses.dataclass(frozen=True)
class RoutingStats:
    """What a forward pass of a mixture-of-experts model routed, per MoE block: `load` and `kept` [block][group,
    expert] (`Routed`), `balance` [block] (E·Σ f·P, before α), `capacity` C, `top_k` k, `tokens` T per group."""

    load: np.ndarray
    kept: np.ndarray
    balance: np.ndarray
    capacity: int
    top_k: int
    tokens: int

    @property
    def choices(self) -> int:
        """k·T·groups·blocks: every choice routed."""
        return int(self.load.sum())

    @property
    def dropped_fraction(self) -> float:
        """Measured: the share of all choices that found no slot, over every group and block."""
        return float((self.load - self.kept).sum() / self.load.sum())

    @property
    def predicted_dropped_fraction(self) -> float:
        """Predicted from the router's load and C: Σ_g Σ_e max(0, load_ge − C) / (k·T·groups), each group's load of
        each expert beyond its C slots, averaged over the blocks. The dispatch keeps the first C choices of an
        expert and drops the rest, so the measured fraction must equal this; a dispatch that dropped otherwise
        (a slot counted twice, a choice given a slot past C) would show as a difference."""
        over = np.maximum(0, self.load - self.capacity).sum(axis=(1, 2))  # [block]
        return float(np.mean(over / self.load.sum(axis=(1, 2))))

    @property
    def mean_load_dropped_fraction(self) -> float:
        """Predicted from each expert's load over the whole batch only (what a histogram of the router's choices
        shows): Σ_e max(0, mean_g load_ge − C) / (k·T), averaged over the blocks, as if every group loaded the
        experts as the batch does. A group that loads an expert below C frees slots no other group can use, so
        the measured fraction is never below this; the gap is how unevenly the groups load the experts."""
        mean_load = self.load.mean(axis=1)                                # [block, expert]
        over = np.maximum(0.0, mean_load - self.capacity).sum(axis=-1)   # [block]
        return float(np.mean(over / (self.top_k * self.tokens)))

    @property
    def load_balance_loss(self) -> float:
        """α·Σ_blocks E·Σ f·P: the term the loss adds."""
        return float(LOAD_BALANCE_WEIGHT * self.balance.sum())


@functools.lru_cache(maxsize=16)
def _routing_pass(routing: Routing) -> Callable[[dict, jax.Array], tuple[Routed, ...]]:
    return jax.jit(lambda params, x: routed_logits(params, x, Split(routing=routing))[1])


def routing_stats(params: dict, x: np.ndarray, routing: Routing) -> RoutingStats:
    """What the model routes on tokens x (rows, T), each row a group, on one device (compiled once per routing and
    shapes)."""
    if not experts_of(params):
        raise ValueError("the model has no experts")
    routed = _routing_pass(routing)(params, jnp.asarray(x))
    return RoutingStats(np.stack([np.asarray(r.load) for r in routed]), np.stack([np.asarray(r.kept) for r in routed]),
                        np.array([float(r.balance) for r in routed]), int(routed[0].capacity), routing.top_k,
                        int(np.shape(x)[1]))
