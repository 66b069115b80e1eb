"""The question types of the interview quiz: what every topic module and the registry share.

A question is a small program. Its correct answer is whatever the program returns on the installed
JAX — never typed in — and a prediction is scored against it (`pmap_core.practice.scoring`):
numbers within the question's relative tolerance, choices by equality.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pmap_core.practice.scoring import CHOICE, NUMBER

__all__ = ["CHOICE", "NUMBER", "Question"]


@dataclasses.dataclass(frozen=True)
class Question:
    id: str
    kind: str  # NUMBER or CHOICE
    program: Callable[[], Any]
    options: Callable[[int], list[str]] | None = None  # choices, given the device count
    tolerance: float = 1e-6  # relative, for numbers
    heavy: bool = False  # times real work
