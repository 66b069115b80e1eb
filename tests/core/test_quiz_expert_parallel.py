"""The interview questions on expert parallelism against references worked out apart from their programs: the slots
⌈c·T·k/E⌉ by hand, the dropped fraction counted again from each sequence's load of each expert and C, the all-to-all's
1/D of an all-gather, 240 · E/k, and the compiled step's all-to-alls matching the formula ("the same" at every device
count: with one device both send nothing); tests/system/test_quiz_devices.py checks it at other counts."""

import math

import numpy as np
import pytest

from pmap_core.concepts import experts as ce
from pmap_core.practice.quiz import expert_parallel as quiz_ep
from pmap_core.train import transformer
from tests.quiz_support import assert_answer_matches, assert_questions_have_texts


def dropped_by_load(experts: int, top_k: int, batch: int) -> float:
    """The choices past C of each sequence's load of each expert, over all choices, at c = 1, in every block."""
    dims = transformer.Dims(ce.PAGE_D_MODEL, ce.PAGE_HEADS, ce.PAGE_SEQ_LEN, ce.VOCAB, experts, top_k, 1.0)
    params = transformer.init_params(dims, ce.PAGE_LAYERS, 0)
    x, _ = transformer.make_sequences(dims, batch, 0)
    load = np.asarray(transformer.routing_stats(params, x, dims.routing).load)  # [block, sequence, expert]
    c = math.ceil(ce.PAGE_SEQ_LEN * top_k / experts)
    return float(np.maximum(load - c, 0).sum() / load.sum())


REFERENCES = {
    "ep_slots": float(math.ceil(1.25 * 16 * 2 / 8)),
    "ep_dropped": dropped_by_load(8, 2, 8),
    "ep_share": 1 / 8,
    "ep_critical": 240.0 * 64 / 8,
    "ep_hlo_bytes": quiz_ep.MATCH,
}


def test_every_question_has_a_reference_and_texts_in_both_languages():
    assert_questions_have_texts(quiz_ep.QUESTIONS, REFERENCES, 5)


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    assert_answer_matches(question_id, REFERENCES[question_id], rel=1e-06)


def test_the_dropped_fraction_is_not_a_round_number():
    assert 0.05 < REFERENCES["ep_dropped"] < 0.95  # a router is never balanced within a sequence


@pytest.mark.parametrize(("n", "y"), [(1, 1), (2, 2), (3, 2), (5, 4), (8, 4), (16, 4)])
def test_the_compiled_question_runs_on_an_expert_axis_the_devices_allow(n, y):
    assert quiz_ep.measured_devices(n) == y
    assert 8 % y == 0  # 8 experts and 8 sequences split over it
