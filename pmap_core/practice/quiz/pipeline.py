"""Interview questions on pipeline parallelism: GPipe and 1F1B, the bubble, the activations each keeps.

Like every question of the quiz, each answer is what a program returns here. Most ask about a schedule of
fixed size (P = 4 stages, M = 8 micro-batches) and are computed from its table (`train.pipeline.
schedule_table`), which needs no device: they hold at every device count, one included. The last one
compiles both schedules on min(n, 4) stages, one per device, and reads their peak bytes
(`compiled.memory_analysis()`); with one device there is one stage, nothing to pipeline.
"""

from __future__ import annotations

import jax

from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.train import pipeline
from pmap_core.train.config import TrainConfig
from pmap_core.train.plan import validate

STAGES, MICRO = 4, 8  # the schedule the table questions ask about


def _schedule(name: str, micro: int = MICRO) -> pipeline.Schedule:
    return pipeline.schedule_of(STAGES, micro, name)


def bubble() -> float:
    return _schedule("gpipe").bubble_fraction


def slots_per_step() -> float:
    return float(len(_schedule("1f1b").table))


SMALLER, SAME, LARGER = "1F1B's is smaller", "the same", "1F1B's is larger"


def _compare(one_f_one_b: float, gpipe: float) -> str:
    return SAME if one_f_one_b == gpipe else SMALLER if one_f_one_b < gpipe else LARGER


def bubble_1f1b_vs_gpipe() -> str:
    return _compare(_schedule("1f1b").bubble_fraction, _schedule("gpipe").bubble_fraction)


def kept_activations() -> float:
    """The most micro-batches' inputs stage 1 keeps at once under 1F1B."""
    return float(_schedule("1f1b").held[1])


def micro_for_bubble_under_a_tenth() -> float:
    """The fewest micro-batches that bring the bubble of 4 stages under 10%, counted from the tables."""
    micro = 1
    while _schedule("gpipe", micro).bubble_fraction >= 0.1:
        micro += 1
    return float(micro)


def peak_1f1b_vs_gpipe() -> str:
    """Both schedules compiled on P = min(n, 4) stages with M = 2P micro-batches: whose peak is lower."""
    stages = min(jax.local_device_count(), STAGES)
    config = validate(TrainConfig(model="mlp", impl="pipeline", devices=stages, pipeline_stages=stages,
                                  layers=2 * stages, hidden=32, microbatches=2 * stages, global_batch=32 * stages,
                                  steps=1, chunk=1))
    peaks = pipeline.peak_bytes_by_schedule(config.program_spec(1))
    if None in peaks.values():
        raise RuntimeError("this backend gives no memory figures")
    return _compare(peaks["1f1b"], peaks["gpipe"])


def _choices(n: int) -> list[str]:
    return [SMALLER, SAME, LARGER]


QUESTIONS = (
    Question("pipeline_bubble", NUMBER, bubble, tolerance=0.01),
    Question("pipeline_slots", NUMBER, slots_per_step),
    Question("pipeline_bubble_1f1b", CHOICE, bubble_1f1b_vs_gpipe, _choices),
    Question("pipeline_kept_activations", NUMBER, kept_activations),
    Question("pipeline_micro_for_small_bubble", NUMBER, micro_for_bubble_under_a_tenth),
    Question("pipeline_peak_1f1b", CHOICE, peak_1f1b_vs_gpipe, _choices),
)
