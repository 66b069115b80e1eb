"""One scoring rule for the interview quiz and the worksheets (`pmap_core.practice.scoring`)."""

import pytest

from pmap_core.practice import scoring, worksheets
from pmap_core.practice.quiz import registry as quiz
from pmap_core.validation import LabInputError


def test_a_number_counts_within_the_relative_tolerance_of_the_answer():
    assert scoring.is_correct(scoring.NUMBER, 1.09, 1.0, tolerance=0.1)
    assert not scoring.is_correct(scoring.NUMBER, 1.11, 1.0, tolerance=0.1)
    # Relative to the answer, not to the larger of the two: 0.9 is within 10 % of 1.0, 1.0 is not of 0.9.
    assert scoring.is_correct(scoring.NUMBER, 0.9, 1.0, tolerance=0.1)
    assert not scoring.is_correct(scoring.NUMBER, 1.0, 0.9, tolerance=0.1)
    assert scoring.is_correct(scoring.NUMBER, 1e-10, 0.0)  # an answer of 0 has a little absolute slack
    assert not scoring.is_correct(scoring.NUMBER, 1e-8, 0.0)


@pytest.mark.parametrize("prediction", [float("inf"), float("nan"), True, "3", None])
def test_a_prediction_that_is_not_a_finite_number_is_an_input_error(prediction):
    with pytest.raises(LabInputError):
        scoring.is_correct(scoring.NUMBER, prediction, 3.0)


def test_choices_by_equality_and_shapes_as_typed():
    assert scoring.is_correct(scoring.CHOICE, "equal", "equal")
    assert not scoring.is_correct(scoring.CHOICE, "different", "equal")
    assert scoring.is_correct(scoring.SHAPE, "4x2", "(4, 2)")
    assert not scoring.is_correct(scoring.SHAPE, "(2, 4)", "(4, 2)")


def test_the_quiz_and_the_worksheets_score_with_the_same_rule():
    question = quiz.get_question("ring_bytes")  # a number question with a 1 % tolerance
    step = worksheets.Step("s", "basics", {}, {}, {}, (), worksheets.NUMBER, "f", {}, (),
                           tolerance=question.tolerance)
    for prediction in (150.0, 151.4, 151.6, 148.6, 148.4):
        expected = scoring.is_correct(scoring.NUMBER, prediction, 150.0, question.tolerance)
        assert quiz.is_correct(question.id, prediction, 150.0) == expected
        assert worksheets.is_correct(step, prediction, 150.0) == expected


@pytest.mark.parametrize("typed", ["²", "①", "4x²", "(4, ①)", "٣", "4\u00b2", "(4, 2)\u2082"])
def test_characters_python_calls_digits_but_int_refuses_are_not_a_shape(typed):
    # str.isdigit() is true for "²" and "①", int() refuses them: they must be "not a shape", not a crash.
    with pytest.raises(LabInputError) as refused:
        scoring.parse_shape(typed)
    assert refused.value.code == "not_a_shape"
    with pytest.raises(LabInputError):
        scoring.is_correct(scoring.SHAPE, typed, "(4,)")


@pytest.mark.parametrize("typed,shape", [("（4，2）", "(4, 2)"), ("４，２", "(4, 2)"), ("［8］", "(8,)")])
def test_a_shape_typed_in_full_width_forms_reads_as_its_ascii_form(typed, shape):
    assert scoring.parse_shape(typed) == shape


def test_choices_are_shown_in_an_order_of_each_browsers_own_the_same_every_time():
    options = ["a", "b", "c", "d"]
    orders = {tuple(scoring.choice_order(options, f"browser-{n}/sheet/step")) for n in range(40)}
    for order in orders:
        assert sorted(order) == options
    assert len(orders) > 10 and {order[0] for order in orders} == set(options)  # the right one is not always first
    assert scoring.choice_order(options, "browser-1/sheet/step") == scoring.choice_order(options[::-1],
                                                                                         "browser-1/sheet/step")
