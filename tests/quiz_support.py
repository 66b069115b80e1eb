"""What every quiz module's test checks of its questions: each has a reference answer and its texts in both
languages, and the answer the code computes is the reference (within `rel`), is marked correct, and a number three
tolerances away is not; a choice's answer is among distinct options."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from labs.texts import table as text_table
from pmap_core.practice.quiz import registry as quiz


def assert_questions_have_texts(questions: Iterable, references: dict, at_least: int) -> None:
    questions = list(questions)
    assert {q.id for q in questions} == set(references) and len(questions) >= at_least
    assert set(references) <= set(quiz.question_ids())
    table = text_table("interview")
    for question_id in references:
        for key in (f"w.question.{question_id}", f"q.{question_id}.text", f"q.{question_id}.explain"):
            assert table[key]["en"] and table[key]["zh"], key


def assert_answer_matches(question_id: str, expected: object, rel: float) -> None:
    answer, question = quiz.answer(question_id), quiz.get_question(question_id)
    if isinstance(expected, float):
        assert answer == pytest.approx(expected, rel=rel)
        assert quiz.is_correct(question_id, expected, answer)
        assert not quiz.is_correct(question_id, expected * (1 + 3 * max(question.tolerance, 0.01)) + 1, answer)
    else:
        assert answer == expected
        offered = quiz.options(question_id)
        assert answer in offered and len(set(offered)) == len(offered) >= 2
