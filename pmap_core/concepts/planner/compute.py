"""The compute of one training step on one device, operation by operation: the time each part of a block takes at
the rate its shape allows, instead of one share of peak for everything.

- Matrix products (`gemm_seconds`): the roofline of a product of (m × k) by (k × n) in 16-bit values, its FLOPs at
  the hardware's `matmul_share` of its peak or its bytes at the memory bandwidth, whichever is slower; the peak
  lowered by tile and wave quantisation (NVIDIA, "Matrix Multiplication Background User's Guide": a product is
  computed in tiles of `TILE` outputs, one per streaming multiprocessor at a time, so a size that leaves a tile or a
  wave partly empty pays for the whole of it). Each of a block's four products (QKV, the attention's output, the
  MLP's first and second) runs three times a step: forward (n × k by k × n_out), the input's gradient and the
  weight's gradient.
- Attention: with a fused kernel (FlashAttention; Dao 2023, arXiv 2307.08691), the causal (query, key) pairs of the
  busiest device, 4 · d_head FLOPs a pair forward and 2.5 times that backward (the backward's five products to the
  forward's two, §3.2), at the share of peak such a kernel sustains (`Hardware.attention_share`), lowered by wave
  quantisation over its blocks of 128 queries (short blocks under context parallelism fill fewer multiprocessors).
  Without one (Megatron-LM 2021, the lab): QKᵀ and the product with V as batched products, and the softmax (and
  dropout) reading and writing every score (`SCORE_BYTES`).
- Context parallelism: the busiest device's causal pairs (`busiest_pairs`): the contiguous layout's last device
  attends to every earlier position, (2P − 1)/P times the mean; the zig-zag layout gives each device the same work;
  Ulysses (Jacobs et al. 2023, arXiv 2309.14509) gives each device the whole sequence for heads / (t · P) heads, so P
  must divide the heads a device holds (its head limit), and its all-to-alls are not hidden.
- Elementwise work (norms, the MLP's activation, residual adds, rotary embeddings, dropout): bytes read and written
  at the memory bandwidth (`elementwise_bytes`), the backward twice the forward's.
- The optimizer's update: `OPTIMIZER_BYTES` per parameter a device holds, at the memory bandwidth.

The two constants fitted to published runs are the A100's and the H100's `matmul_share` (benchmarks/plan_published.py
prints the fit); every other figure is a datasheet's, a cited measurement's or a count. Communication: the model
axis's collectives sit between the products that need them (Megatron-LM's tensor parallelism), none hidden; ring
attention's K and V hidden behind the attention they feed (`predict.exposed_seconds`); the rest as `overlap` says.
"""

from __future__ import annotations

import dataclasses
import functools
import math

from pmap_core.concepts.planner.presets import Hardware, ModelShape

TILE = (128, 256)   # outputs per tile: cuBLAS's largest tensor-core tile (NVIDIA's GEMM guide, "Tile quantization")
QUERY_BLOCK = 128   # queries per FlashAttention thread block (Dao 2023, §3.3: blocks of 128)
FLASH_BACKWARD = 2.5  # the backward's FLOPs over the forward's in a fused attention kernel (five products to two)
# Bytes read and written per score without a fused kernel: the fused scale-mask-softmax reads and writes each 16-bit
# score forward (4), its backward reads the gradient and the probabilities and writes one (6); dropout on the
# probabilities besides: forward read, write and a 1-byte mask (5), backward read, mask, write (5).
SCORE_BYTES = {"forward": 4, "backward": 6, "dropout_forward": 5, "dropout_backward": 5}
VALUE_BYTES = 2     # bfloat16 activations and weights in the products
# Adam's update reads and writes the float32 master weight and two moments and reads the gradient, and writes the
# 16-bit weight: 2 · 12 + 4 + 2 bytes a parameter.
OPTIMIZER_BYTES = 30


def quantisation(m: float, n: float, units: int) -> float:
    """The share of the tiles' work that is useful: m · n outputs in whole tiles of `TILE`, and the tiles in whole
    waves of `units` (streaming multiprocessors; 0: not counted)."""
    tm, tn = TILE
    rows, cols = math.ceil(m / tm), math.ceil(n / tn)
    useful = m * n / (rows * tm * cols * tn)
    if units:
        tiles = rows * cols
        useful *= tiles / (math.ceil(tiles / units) * units)
    return useful


def gemm_seconds(m: float, n: float, k: float, hardware: Hardware, rate: float, batch: float = 1) -> float:
    """`batch` products of (m × k) by (k × n): their FLOPs at the hardware's `matmul_share` of `rate` lowered by
    quantisation (the batch's tiles in one launch), or their 16-bit bytes at the memory bandwidth, whichever is
    slower."""
    flops = 2 * m * n * k * batch
    compute = flops / (rate * hardware.matmul_share * quantisation(m * batch, n, hardware.units))
    memory = VALUE_BYTES * batch * (m * k + k * n + m * n) / hardware.hbm_bytes_s
    return max(compute, memory)


def trained_product(m: float, k: float, n: float, hardware: Hardware, rate: float) -> tuple[float, float]:
    """(forward, backward) seconds of a weight's product with m tokens: y = x·W (m × k by k × n); backward, the
    input's gradient (m × n by n × k) and the weight's (k × m by m × n)."""
    forward = gemm_seconds(m, n, k, hardware, rate)
    return forward, gemm_seconds(m, k, n, hardware, rate) + gemm_seconds(k, n, m, hardware, rate)


def busiest_pairs(seq_len: int, devices: int, layout: str) -> float:
    """The causal (query, key) pairs the busiest device of P computes, its queries `seq_len / P` positions of one
    sequence: contiguous, the last block, c · (P − 1) · c + c(c + 1)/2 for blocks of c; zig-zag (chunks i and
    2P − 1 − i of 2P), every device the mean, s(s + 1)/(2P). The same count as `concepts.context.work_per_device`."""
    if devices == 1:
        return seq_len * (seq_len + 1) / 2
    if layout == "zigzag":
        return seq_len * (seq_len + 1) / (2 * devices)
    c = seq_len / devices
    return c * (devices - 1) * c + c * (c + 1) / 2


def imbalance(seq_len: int, devices: int, layout: str) -> float:
    """The busiest device's causal pairs over the mean: (2P − 1)/P for the contiguous layout (for s ≫ P), 1 zig-zag."""
    return busiest_pairs(seq_len, devices, layout) / (seq_len * (seq_len + 1) / (2 * devices))


def elementwise_bytes(model: ModelShape, tokens: float, t: int, sequence_parallel: bool, dropout: bool) -> float:
    """A block's forward elementwise bytes on one device (16-bit values read and written): two norms (read and write
    the residual stream, 4h bytes each), two residual adds with their biases (read two, write one: 6h each; a 1-byte
    dropout mask each besides), the MLP's activation (GELU: read and write f; SwiGLU: read 2f, write f), rotary
    embeddings on Q and K (read and write). The stream's parts are split by t under sequence parallelism, the MLP's
    and the heads' always."""
    d = model.d_model
    stream = (8 + 12 + (2 if dropout else 0)) * d / (t if sequence_parallel else 1)
    activation = (6 if model.gated_mlp else 4) * model.d_ff * model.mlp_passes / t
    rotary = 0 if model.positions else 4 * (model.q_width + model.kv_width) / t
    return tokens * (stream + activation + rotary)


@dataclasses.dataclass(frozen=True)
class BlockTime:
    """One block's seconds for one micro-batch on one device, forward and backward, by kind."""

    matmul: tuple[float, float]
    attention: tuple[float, float]
    elementwise: tuple[float, float]

    def forward(self) -> float:
        return self.matmul[0] + self.attention[0] + self.elementwise[0]

    def total(self) -> float:
        return sum(self.matmul) + sum(self.attention) + sum(self.elementwise)


@functools.lru_cache(maxsize=16384)
def block_time(model: ModelShape, hardware: Hardware, rate: float, sequences: float, seq_len: int, seq: int, t: int,
               context_layout: str, sequence_parallel: bool, flash_attention: bool, dropout: bool) -> BlockTime:
    """One block for `sequences` sequences of a micro-batch, positions split over `seq` devices, heads over t."""
    tokens = sequences * seq_len / seq
    d, f = model.d_model, model.d_ff
    # The attention's two products, then the MLP's two, once for each MLP a token runs through (`mlp_passes`: a
    # mixture's top_k experts and shared ones, each the device's tokens as expert parallelism brings them back).
    products = [(d, (model.q_width + 2 * model.kv_width) / t, 1.0), (model.q_width / t, d, 1.0),
                (d, (2 if model.gated_mlp else 1) * f / t, model.mlp_passes), (f / t, d, model.mlp_passes)]
    forward = backward = 0.0
    for k, n, times in products:
        fwd, bwd = trained_product(tokens, k, n, hardware, rate)
        forward, backward = forward + times * fwd, backward + times * bwd
    heads = model.heads / t
    if context_layout == "ulysses":  # all-to-alls give each device the whole sequence for heads / (t · P) heads
        heads, seq = heads / seq, 1
    if flash_attention:
        pairs = sequences * heads * busiest_pairs(seq_len, seq, context_layout)
        blocks = sequences * heads * math.ceil(seq_len / seq / QUERY_BLOCK)
        units = hardware.units
        waves = blocks / (math.ceil(blocks / units) * units) if units else 1.0
        attention_fwd = 4 * model.d_head * pairs / (hardware.peak_flops * hardware.attention_share * waves)
        attention = (attention_fwd, FLASH_BACKWARD * attention_fwd)
    else:  # the whole score matrix, masked after: QKᵀ and its product with V, batched over sequences and heads
        queries, keys, batch = seq_len / seq, seq_len, sequences * heads
        scores = gemm_seconds(queries, keys, model.d_head, hardware, rate, batch=batch)
        values = gemm_seconds(queries, model.d_head, keys, hardware, rate, batch=batch)
        per_score = batch * queries * keys / hardware.hbm_bytes_s
        fwd_bytes = SCORE_BYTES["forward"] + (SCORE_BYTES["dropout_forward"] if dropout else 0)
        bwd_bytes = SCORE_BYTES["backward"] + (SCORE_BYTES["dropout_backward"] if dropout else 0)
        attention = (scores + values + fwd_bytes * per_score, 2 * (scores + values) + bwd_bytes * per_score)
    moved = elementwise_bytes(model, tokens, t, sequence_parallel, dropout) / hardware.hbm_bytes_s
    return BlockTime((forward, backward), attention, (moved, 2 * moved))


@functools.lru_cache(maxsize=4096)
def head_time(model: ModelShape, hardware: Hardware, rate: float, sequences: float, seq_len: int, seq: int,
              t: int) -> float:
    """The output projection for one micro-batch, forward and backward (split by the vocabulary over t)."""
    fwd, bwd = trained_product(sequences * seq_len / seq, model.d_model, model.vocab / t, hardware, rate)
    return fwd + bwd
