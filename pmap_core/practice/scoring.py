"""Scoring a prediction against an answer computed here: one rule for the interview quiz and the worksheets.

A number counts when it lies within a relative tolerance of the computed answer (relative to the
answer, not to the larger of the two as `math.isclose` does; 1e-9 absolute on top, for answers of 0);
a choice counts when it is the answer; a shape counts when what the student typed, read by
`parse_shape`, is the answer as `format_shape` writes it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from pmap_core.validation import LabInputError

NUMBER, CHOICE, SHAPE = "number", "choice", "shape"
KINDS = (NUMBER, CHOICE, SHAPE)
MAX_PREDICTION_CHARS = 64
# Full-width forms (U+FF01-U+FF5E: what a Chinese input method types for "(4, 2)") as their ASCII forms.
FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


def format_shape(shape: Sequence[int]) -> str:
    return str(tuple(int(n) for n in shape))


def parse_shape(text: str) -> str:
    """A shape typed by a student — "(4, 2)", "4,2", "[8]", "4x2", "（4，2）" — written as format_shape
    writes it. Dimensions are ASCII digits only: "²" and "①" pass `str.isdigit` but are no number."""
    cleaned = str(text)[:MAX_PREDICTION_CHARS].translate(FULL_WIDTH).strip().strip("()[]").strip()
    parts = [p for p in re.split(r"[,x×\s]+", cleaned) if p]
    if not parts or not all(re.fullmatch(r"[0-9]+", p) for p in parts):
        raise LabInputError("not_a_shape", "{value!r} is not a shape; write it like (4, 2)", value=text)
    return format_shape([int(p) for p in parts])


def is_correct(kind: str, prediction: Any, answer: Any, tolerance: float = 0.0) -> bool:
    """Score `prediction` against the computed `answer`; `tolerance` is relative, for numbers only."""
    if kind == SHAPE:
        return parse_shape(prediction) == answer
    if kind == CHOICE:
        return prediction == answer
    if isinstance(prediction, bool) or not isinstance(prediction, (int, float)) or not math.isfinite(prediction):
        raise LabInputError("not_a_number", "{name} must be a finite number, got {value!r}",
                            name="prediction", value=prediction)
    return abs(float(prediction) - float(answer)) <= tolerance * abs(float(answer)) + 1e-9


def choice_order(options: Sequence[str], seed: str) -> list[str]:
    """`options` in an order of their own for each `seed` (a student's browser and the step), the same
    every time: the right choice is not always the first one shown, and a page drawn again keeps its order."""
    return sorted(options, key=lambda option: hashlib.sha256(f"{seed}\0{option}".encode()).hexdigest())
