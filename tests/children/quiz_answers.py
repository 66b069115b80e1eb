"""The interview's questions answered on this process's device count: prints one JSON line,
{topic: {question: [answer, options]}} for each topic named.

    python -m tests.children.quiz_answers all                # every question that is not heavy
    python -m tests.children.quiz_answers mesh pipeline      # those of pmap_core.practice.quiz.mesh and .pipeline

Run by tests/system/test_quiz_devices.py, one process per count (it computes its own count's answers with
`answers` here)."""

from __future__ import annotations

import importlib
import json
import sys

import pmap_core  # noqa: F401 - fixes the device count from PMAP_LAB_DEVICES
from pmap_core.practice.quiz import registry


def answers(topic: str | None = None) -> dict[str, list]:
    """{question: [answer, options]} of the questions of `topic` (a module of pmap_core.practice.quiz), or of
    every question that is not heavy, computed here, as JSON gives them back."""
    if topic is None:
        questions = [q for q in registry.QUESTIONS if not q.heavy]
    else:
        questions = importlib.import_module(f"pmap_core.practice.quiz.{topic}").QUESTIONS
    return json.loads(json.dumps({q.id: [registry.answer(q.id), registry.options(q.id)] for q in questions}))


if __name__ == "__main__":
    print(json.dumps({topic: answers(None if topic == "all" else topic) for topic in sys.argv[1:]}))
