"""The interview quiz: every question, by topic (`pmap`, `modern`, `zero`, `mesh`, `pipeline`,
`activation_memory`, `context_parallel`,
`expert_parallel`, `planner`), found by id, answered here.

`answer` runs a question's program on the installed JAX; `is_correct` scores a prediction against
it with the rule the worksheets use too (`pmap_core.practice.scoring`).
"""

from __future__ import annotations

from typing import Any

import jax

from pmap_core.practice import scoring
from pmap_core.practice.quiz import (
    activation_memory,
    context_parallel,
    expert_parallel,
    mesh,
    modern,
    pipeline,
    planner,
    pmap,
    zero,
)
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question
from pmap_core.validation import LabInputError

__all__ = ["CHOICE", "NUMBER", "QUESTIONS", "Question", "answer", "get_question", "is_correct", "options",
           "question_ids"]

QUESTIONS: tuple[Question, ...] = (
    *pmap.QUESTIONS,
    *modern.QUESTIONS,  # the modern ways: jit with shardings, shard_map
    *zero.QUESTIONS,  # ZeRO / FSDP, accumulation, padded shards
    *mesh.QUESTIONS,  # 2-D meshes: explicit sharding, tensor parallelism
    *pipeline.QUESTIONS,  # pipeline parallelism: GPipe and 1F1B, the bubble, the activations kept
    *activation_memory.QUESTIONS,  # activation memory: what remat keeps, what recomputing costs
    *context_parallel.QUESTIONS,  # context parallelism: the ring, the causal work, Ulysses's cap, the overlap
    *expert_parallel.QUESTIONS,  # expert parallelism: the capacity, the drops, the all-to-all, the critical batch
    *planner.QUESTIONS,  # planning a run: the state per device, the bubble, the links, a published run, the bound
)


def question_ids() -> list[str]:
    return [q.id for q in QUESTIONS]


def get_question(question_id: str) -> Question:
    for question in QUESTIONS:
        if question.id == question_id:
            return question
    raise LabInputError("unknown_question", "no question called {name!r}", name=question_id)


def options(question_id: str) -> list[str]:
    question = get_question(question_id)
    return question.options(jax.local_device_count()) if question.options else []


def answer(question_id: str) -> Any:
    """The correct answer: the result of running the question's program here."""
    return get_question(question_id).program()


def is_correct(question_id: str, prediction: Any, correct: Any) -> bool:
    """Score a prediction against the computed answer (numbers: the question's relative tolerance)."""
    question = get_question(question_id)
    return scoring.is_correct(question.kind, prediction, correct, question.tolerance)
