"""The interview questions on pipeline parallelism against independent references: the bubble and the length
of a step by the formulas of GPipe (Huang et al. 2019) and the Ultra-Scale Playbook, the activations 1F1B keeps
by PipeDream-Flush's rule (P − s + 1 on stage s, at most M), and the measured peak by which schedule keeps
fewer micro-batches. `references(n)` gives them for any device count; tests/system/test_quiz_devices.py
checks them at other counts."""


import jax
import pytest

from labs.texts import table as text_table
from pmap_core.practice.quiz import pipeline as quiz_pipeline
from pmap_core.practice.quiz import registry as quiz

N = jax.local_device_count()


def references(n: int) -> dict[str, object]:
    p, m = 4, 8
    stages = min(n, 4)  # the measured question's pipeline: one stage a device, 2P micro-batches
    return {
        "pipeline_bubble": (p - 1) / (m + p - 1),
        "pipeline_slots": 2.0 * (m + p - 1),
        "pipeline_bubble_1f1b": quiz_pipeline.SAME,
        "pipeline_kept_activations": float(min(m, p - 1 + 1)),
        "pipeline_micro_for_small_bubble": float(next(k for k in range(1, 1000) if (p - 1) / (k + p - 1) < 0.1)),
        "pipeline_peak_1f1b": quiz_pipeline.SMALLER if 2 * stages > stages > 1 else quiz_pipeline.SAME,
    }


REFERENCES = references(N)


def test_every_pipeline_question_has_a_reference_and_texts_in_both_languages():
    assert {q.id for q in quiz_pipeline.QUESTIONS} == set(REFERENCES)
    assert len(quiz_pipeline.QUESTIONS) >= 4
    assert set(REFERENCES) <= set(quiz.question_ids())
    table = text_table("interview")
    for question_id in REFERENCES:
        for key in (f"w.question.{question_id}", f"q.{question_id}.text", f"q.{question_id}.explain"):
            assert table[key]["en"] and table[key]["zh"], key


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    answer = quiz.answer(question_id)
    expected = REFERENCES[question_id]
    if isinstance(expected, float):
        assert answer == pytest.approx(expected, rel=1e-12)
        assert quiz.is_correct(question_id, expected, answer)
    else:
        assert answer == expected
        offered = quiz.options(question_id)
        assert answer in offered and len(set(offered)) == len(offered) >= 2


def test_the_peak_question_is_the_same_at_one_device_and_smaller_from_two():
    assert references(1)["pipeline_peak_1f1b"] == quiz_pipeline.SAME
    assert {references(n)["pipeline_peak_1f1b"] for n in (2, 3, 5, 8, 64)} == {quiz_pipeline.SMALLER}
