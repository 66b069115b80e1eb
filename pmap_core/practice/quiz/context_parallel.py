"""Interview questions on context parallelism: the transformer's positions split over a seq axis (`train.context`),
by all-gathered K/V, ring attention or DeepSpeed-Ulysses.

Like every question of the quiz, each answer is what a program returns here: the ring's schedule
(`concepts.context.ring_schedule`, the table the ring program permutes by), the causal work counted from the mask,
Ulysses's cap asked of the program's own check, the formula the compiled HLO matches, the overlap condition on the
vendors' figures in `costs.analytic` — none of these needs a device, so they hold at every device count — and one
compiled step per scheme on a seq axis of P devices, P the largest of 1, 2, 3 and 4 that the devices here allow (with
one device nothing is sent, and both schemes send the same nothing).
"""

from __future__ import annotations

import jax

from pmap_core.concepts import context as cp
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.train import transformer

RING_DEVICES, STEP, DEVICE = 8, 3, 1                    # which block device 1 holds at step 3 of a ring of 8
CAUSAL_LEN, CAUSAL_DEVICES = 64, 8                      # 64 positions over 8 devices in contiguous blocks
MEASURED = {"batch": 12, "seq_len": 24, "d_model": 16, "heads": 4, "layers": 2}  # compiled on min(n, 4) devices
ULYSSES_HEADS, ULYSSES_MOST = 32, 24                    # a model of 32 heads, at most 24 devices on the seq axis
WIDE, WIDE_LAYERS, WIDE_BATCH, WIDE_SEQ = transformer.Dims(64, 8, 64, 32), 2, 8, 8  # Ulysses against all-gather


def ring_block() -> float:
    """The K/V block device 1 holds at step 3 of a ring of 8 devices (the block's starting device)."""
    return float(cp.ring_schedule(RING_DEVICES).blocks[STEP][DEVICE])


def causal_ratio() -> float:
    """The last device's unmasked (query, key) pairs over the first's, contiguous blocks."""
    return cp.work_ratio(CAUSAL_LEN, CAUSAL_DEVICES, "contiguous")


def measured_devices(n: int) -> int:
    """The seq axis the compiled question runs on: the largest of 1 … min(n, 4) that divides the 12 sequences."""
    return max(d for d in range(1, min(n, 4) + 1) if MEASURED["batch"] % d == 0)


def ring_bytes_vs_allgather() -> str:
    """The ring's attention bytes against all-gather's, both read from a compiled step's HLO."""
    devices = measured_devices(jax.local_device_count())
    ring, gathered = (cp.sent_bytes(**MEASURED, devices=devices, scheme=s) for s in ("ring", "allgather"))
    return cp.compare(ring, gathered)


def ulysses_fewer() -> float:
    """How many times fewer bytes Ulysses's all-to-alls send than all-gather's collectives, at P = 8 (the formula
    the compiled HLO matches)."""
    gathered, ulysses = (cp.formula_attention_bytes(s, WIDE, WIDE_LAYERS, WIDE_BATCH, WIDE_SEQ)
                         for s in ("allgather", "ulysses"))
    return gathered / ulysses


def ulysses_most() -> float:
    """The most devices, of at most 24, on which the program runs Ulysses with 32 heads."""
    return float(cp.ulysses_devices(ULYSSES_HEADS, ULYSSES_MOST)[-1])


def ring_overlap() -> float:
    """The fewest tokens a ring block needs for its transfer to hide: an H100 over NVLink 4, bfloat16."""
    return cp.overlap_block("h100", "nvlink4_h100")


QUESTIONS = (
    Question("cp_ring_block", NUMBER, ring_block),
    Question("cp_causal_ratio", NUMBER, causal_ratio, tolerance=0.01),
    Question("cp_ring_bytes", CHOICE, ring_bytes_vs_allgather, lambda n: [cp.FEWER, cp.SAME, cp.MORE]),
    Question("cp_ulysses_fewer", NUMBER, ulysses_fewer, tolerance=0.01),
    Question("cp_ulysses_most", NUMBER, ulysses_most),
    Question("cp_ring_overlap", NUMBER, ring_overlap, tolerance=0.01),
)
