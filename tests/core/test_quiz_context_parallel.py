"""The interview questions on context parallelism against references worked out apart from their programs: the
ring's block by (i − k) mod P, the causal pairs by the sum 1 + 2 + …, ring attention sending what all-gather sends
(4(P − 1) blocks a layer each), Ulysses's P/2, the largest divisor of the heads, w·F/(2β) from the vendors' figures
that the question states. The compiled question's answer is "the same" at every device count (one device: both send
nothing); tests/system/test_quiz_devices.py checks it at other counts."""

import pytest

from labs.texts import table as text_table
from pmap_core.concepts import context as cp
from pmap_core.costs import analytic
from pmap_core.practice.quiz import context_parallel as quiz_cp
from tests.quiz_support import assert_answer_matches, assert_questions_have_texts

REFERENCES = {
    "cp_ring_block": float((1 - 3) % 8),
    "cp_causal_ratio": sum(range(57, 65)) / sum(range(1, 9)),
    "cp_ring_bytes": cp.SAME,
    "cp_ulysses_fewer": 8 / 2,
    "cp_ulysses_most": float(max(d for d in range(1, 25) if 32 % d == 0)),
    "cp_ring_overlap": 2 * 989e12 / (2 * 450e9),
}


def test_every_question_has_a_reference_and_texts_in_both_languages():
    assert_questions_have_texts(quiz_cp.QUESTIONS, REFERENCES, 5)


def test_the_figures_a_question_states_are_the_cited_ones():
    text = text_table("interview")["q.cp_ring_overlap.text"]["en"]
    chip, link = analytic.ACCELERATORS["h100"], analytic.LINKS["nvlink4_h100"]
    assert f"{chip.peak_tflops:g} TFLOP/s" in text and f"{link.bandwidth_gbps:g} GB/s" in text
    assert analytic.LINKS["nvlink4_h100"].bandwidth_gbps / analytic.LINKS["ib_ndr"].bandwidth_gbps == 9  # "nine times"


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    assert_answer_matches(question_id, REFERENCES[question_id], rel=1e-09)


@pytest.mark.parametrize(("n", "p"), [(1, 1), (2, 2), (3, 3), (5, 4), (8, 4), (16, 4)])
def test_the_compiled_question_runs_on_a_seq_axis_the_devices_allow(n, p):
    assert quiz_cp.measured_devices(n) == p
