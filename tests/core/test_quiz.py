"""Every interview answer comes from running its code, and agrees with an independent reference."""


import jax
import numpy as np
import pytest

from labs.texts import table as text_table
from pmap_core import LabInputError
from pmap_core.practice.quiz import registry as quiz

N = jax.local_device_count()

# Independent references: NumPy or the shape rules, one per question (the speedup is measured, so only its sign).
REFERENCES = {
    "output_shape": str((N, 4)),
    "per_device_shape": str((4, 3)),
    "pmean_value": float(np.mean(np.arange(N))),
    "psum_of_one": float(N),
    "ppermute_value": 10.0 * (N - 1),
    "all_gather_shape": str((N, N, 2)),
    "all_gather_tiled_shape": str((N, 2 * N)),
    "psum_scatter_value": float(N),
    "uneven_batch": "IndivisibleError",
    "mean_of_means": "equal",
    "out_axes_none_value": 10.0,
    "distinct_random": 1.0,
    "fused_all_reduces": 1.0,
    "ring_bytes": 150.0,
}


def test_at_least_twelve_questions_with_texts_in_both_languages():
    assert len(quiz.QUESTIONS) >= 12
    table = text_table("interview")
    for question_id in quiz.question_ids():
        for key in (f"w.question.{question_id}", f"q.{question_id}.text", f"q.{question_id}.explain"):
            assert table[key]["en"] and table[key]["zh"], key


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    answer = quiz.answer(question_id)
    assert answer == pytest.approx(REFERENCES[question_id]) if isinstance(answer, float) \
        else answer == REFERENCES[question_id]
    if quiz.get_question(question_id).kind == quiz.CHOICE:
        assert answer in quiz.options(question_id)
        assert len(set(quiz.options(question_id))) == len(quiz.options(question_id))


def test_measured_speedup_is_a_positive_ratio():
    speedup = quiz.answer("measured_speedup")
    assert 0 < speedup < 4 * N


def test_scoring_uses_the_tolerance():
    assert quiz.is_correct("pmean_value", 3.5, 3.5)
    assert not quiz.is_correct("pmean_value", 3.6, 3.5)
    assert quiz.is_correct("measured_speedup", 1.3, 1.0)
    assert not quiz.is_correct("measured_speedup", 1.4, 1.0)
    assert quiz.is_correct("output_shape", "(8, 4)", "(8, 4)")
    assert not quiz.is_correct("output_shape", "(8,)", "(8, 4)")


def test_bad_predictions_and_questions_are_input_errors():
    with pytest.raises(LabInputError) as error:
        quiz.is_correct("pmean_value", float("inf"), 3.5)
    assert error.value.code == "not_a_number"
    with pytest.raises(LabInputError) as error:
        quiz.answer("no_such_question")
    assert error.value.code == "unknown_question"


def test_question_texts_ask_about_a_device_that_exists_for_every_device_count():
    import re

    table = text_table("interview")
    for devices in range(1, 65):
        for lang in ("en", "zh"):
            for question_id in quiz.question_ids():
                for part in ("text", "explain"):
                    text = table[f"q.{question_id}.{part}"][lang].format(n=devices, answer="A",
                                                                         tolerance="35%")
                    named = re.findall(r"device (\d+)\b", text) if lang == "en" \
                        else re.findall(r"(?<![\w+−-])(\d+) ?号", text)
                    assert all(int(d) < devices for d in named), (devices, lang, question_id, text)
