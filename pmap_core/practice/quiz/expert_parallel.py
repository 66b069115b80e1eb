"""Interview questions on expert parallelism: the transformer's mixture of experts with its experts over an expert
axis (`train.experts`), tokens sent to their experts and back by all-to-alls.

Like every question of the quiz, each answer is what a program returns here: the slots per expert (`costs.analytic.
expert_capacity`), the dropped fraction counted from the dispatch of the page's model routing the seed's batch on one
device, the all-to-all's share of an all-gather's bytes and the Scaling Book's critical batch by their formulas — none
of these needs more than one device, so they hold at every device count — and one compiled step on an expert axis of
Y devices, Y the largest of 1, 2 and 4 that the devices here allow (with one device both the HLO and the formula send
nothing: they match).
"""

from __future__ import annotations

import jax

from pmap_core.concepts import experts as ce
from pmap_core.costs import analytic
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question

SLOTS = {"capacity_factor": 1.25, "seq_len": 16, "top_k": 2, "experts": 8}   # C = ⌈1.25 · 16 · 2 / 8⌉
DROPPED = {"experts": 8, "top_k": 2, "batch": 8}                          # routed on one device at c = 1
SHARE_DEVICES, SHARE_BYTES = 8, 1 << 20                                    # one array of 1 MiB over 8 devices
CRITICAL = {"experts": 64, "top_k": 8}                                     # a DeepSeek-like choice of E and k
MEASURED = {"experts": 8, "top_k": 2, "capacity_factor": 1.25, "batch": 8}  # compiled on 1, 2 or 4 devices
MATCH, FEWER, MORE = "the same", "fewer than the formula", "more than the formula"
MATCH_WITHIN = 0.01


def slots() -> float:
    """Slots per expert per sequence of 16 tokens: 8 experts, top-2, capacity factor 1.25."""
    return float(ce.capacity(**SLOTS))


def dropped_at_one() -> float:
    """The dropped fraction of the choices of 8 sequences routed by the page's model at c = 1."""
    return ce.dropped_fraction(**DROPPED, capacity_factor=1.0)


def all_to_all_share() -> float:
    """An all-to-all's bytes per device over an all-gather's, of one array over 8 devices (the formulas the compiled
    programs match)."""
    return (analytic.all_to_all_bytes(SHARE_BYTES / SHARE_DEVICES, SHARE_DEVICES)
            / ((SHARE_DEVICES - 1) / SHARE_DEVICES * SHARE_BYTES))


def critical_tokens() -> float:
    """Tokens per device for the experts of an E = 64, k = 8 mixture to be compute-bound (dense threshold 240)."""
    return ce.critical_batch(**CRITICAL)


def measured_devices(n: int) -> int:
    """The expert axis the compiled question runs on: the largest of 1, 2 and 4 that the n devices allow."""
    return max(d for d in (1, 2, 4) if d <= n)


def hlo_vs_formula() -> str:
    """The compiled step's all-to-all bytes against the formula's, on `measured_devices` devices."""
    expert = measured_devices(jax.local_device_count())
    hlo, formula = (f(**MEASURED, expert=expert) for f in (ce.step_all_to_all_bytes, ce.step_all_to_all_formula))
    if abs(hlo - formula) <= MATCH_WITHIN * max(formula, 1.0):
        return MATCH
    return FEWER if hlo < formula else MORE


QUESTIONS = (
    Question("ep_slots", NUMBER, slots),
    Question("ep_dropped", NUMBER, dropped_at_one, tolerance=0.02),
    Question("ep_share", NUMBER, all_to_all_share, tolerance=0.01),
    Question("ep_critical", NUMBER, critical_tokens, tolerance=0.01),
    Question("ep_hlo_bytes", CHOICE, hlo_vs_formula, lambda n: [FEWER, MATCH, MORE]),
)
