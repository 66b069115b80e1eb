"""Interview questions on activation memory and rematerialisation: what a transformer layer keeps for its backward
pass (Korthikanti et al. 2022, arXiv 2205.05198) and what recomputing it costs.

Like every question of the quiz, each answer is what a program returns here: JAX's saved residuals of the lab's
transformer (traced), the compiled step's FLOPs (compiler-reported), or the paper's Table 2 as
`concepts.activation_memory.predict` counts it. All of it runs on one device, so the answers hold at every
device count.
"""

from __future__ import annotations

from pmap_core.concepts import activation_memory as am
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question

# The lab's transformer at its default sizes, 2 blocks, 8 sequences.
BATCH, SEQ_LEN, D_MODEL, HEADS, LAYERS = 8, 32, 32, 4, 2
# GPT-3 175B's layer (Korthikanti et al. 2022, Table 3) on 8-way tensor parallelism.
GPT3 = {"s": 2048, "b": 1, "h": 12288, "a": 96, "t": 8}
NO_SQUARE, SQUARE = "no s² term", "an s² term"


def fewest_bytes() -> str:
    """The remat policy whose saved residuals take the fewest bytes."""
    return am.fewest_saved(BATCH, SEQ_LEN, D_MODEL, HEADS, LAYERS)


def score_growth() -> float:
    """How many times the score-shaped residuals grow (no remat) when s doubles from 16 to 32."""
    return am.score_growth(BATCH, SEQ_LEN // 2, D_MODEL, HEADS, LAYERS)


def selective_square_term() -> str:
    """Whether selective recomputation's saved bytes still grow with s²: its fitted c2 against no remat's."""
    selective, none = (am.fitted(BATCH, D_MODEL, HEADS, LAYERS, remat).residual_fit[2]
                       for remat in ("selective", "none"))
    return NO_SQUARE if abs(selective) < 0.01 * abs(none) else SQUARE


def recompute_share() -> float:
    """Full remat's extra FLOPs over no remat's, as a share of one forward pass (compiler-reported)."""
    return am.recompute_share(BATCH, SEQ_LEN, D_MODEL, HEADS, LAYERS)


def sequence_parallel_share() -> float:
    """Tensor + sequence parallelism's bytes per layer over tensor parallelism's alone (the paper's setting)."""
    variants = am.predict("paper", **GPT3).variants
    return variants["tensor + sequence parallel"] / variants["tensor parallel"]


QUESTIONS = (
    Question("remat_fewest_bytes", CHOICE, fewest_bytes, lambda n: list(am.POLICIES)),
    Question("remat_score_growth", NUMBER, score_growth, tolerance=0.01),
    Question("remat_selective_square", CHOICE, selective_square_term, lambda n: [NO_SQUARE, SQUARE]),
    Question("remat_recompute_share", NUMBER, recompute_share, tolerance=0.1),
    Question("remat_sequence_parallel", NUMBER, sequence_parallel_share, tolerance=0.02),
)
