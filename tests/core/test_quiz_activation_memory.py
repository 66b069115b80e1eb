"""The interview questions on activation memory against references worked out apart from their programs: full
remat keeps one tensor a block (so the fewest bytes), s² growth of the score-sized residuals (4× when s doubles),
selective recomputation's fit with no s² term, full remat's extra FLOPs near the model of what it recomputes (each
block's forward but its last product, `recomputed_flops`), and Korthikanti et al.'s Table 2 by hand. Everything runs
on one device, so the references are the same at every device count."""

import pytest

from labs.texts import table as text_table
from pmap_core.concepts import activation_memory as am
from pmap_core.practice.quiz import activation_memory as quiz_am
from pmap_core.practice.quiz import registry as quiz
from pmap_core.train import transformer


def _recompute_model() -> float:
    dims = transformer.Dims(quiz_am.D_MODEL, quiz_am.HEADS, quiz_am.SEQ_LEN, 32)
    return (am.recomputed_flops(dims, quiz_am.LAYERS, quiz_am.BATCH, "full")
            / am.forward_flops(dims, quiz_am.LAYERS, quiz_am.BATCH))


def _table2() -> float:
    s, h, a, t = 2048, 12288, 96, 8
    return (34 + 5 * a * s / h) / t / (10 + 24 / t + 5 * a * s / (h * t))


REFERENCES = {
    "remat_fewest_bytes": "full",
    "remat_score_growth": 4.0,
    "remat_selective_square": quiz_am.NO_SQUARE,
    "remat_recompute_share": _recompute_model,  # within the question's tolerance of the model
    "remat_sequence_parallel": _table2(),
}


def test_every_question_has_a_reference_and_texts_in_both_languages():
    assert {q.id for q in quiz_am.QUESTIONS} == set(REFERENCES) and len(quiz_am.QUESTIONS) >= 4
    assert set(REFERENCES) <= set(quiz.question_ids())
    table = text_table("interview")
    for question_id in REFERENCES:
        for key in (f"w.question.{question_id}", f"q.{question_id}.text", f"q.{question_id}.explain"):
            assert table[key]["en"] and table[key]["zh"], key


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    answer, expected = quiz.answer(question_id), REFERENCES[question_id]
    question = quiz.get_question(question_id)
    if callable(expected):
        expected = expected()
        assert quiz.is_correct(question_id, expected, answer)  # the model is within the tolerance
        assert 0 < answer < 1  # less than a whole forward pass, as the explanation says
    elif isinstance(expected, float):
        assert answer == pytest.approx(expected, rel=1e-9)
        assert quiz.is_correct(question_id, expected, answer)
        assert not quiz.is_correct(question_id, expected * (1 + 3 * question.tolerance), answer)
    else:
        assert answer == expected
        offered = quiz.options(question_id)
        assert answer in offered and len(set(offered)) == len(offered) >= 2
