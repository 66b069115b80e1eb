"""Sheet 11 (activation memory) against references worked out apart from the functions it names: the paper's
sbh(34 + 5as/h) (Korthikanti et al. 2022, §4.1), the lab's coefficients the question states (summed from the term
table), the named tensors selective recomputation keeps (64sbh a block), s² growth of the score-sized residuals, the
fitted c2 against 13·a·b × layers, and full remat's extra FLOPs as a share of the forward pass. Every step runs on
one device, so binding the sheet to D = 1 or 3 changes nothing."""

import pytest

from pmap_core.concepts import activation_memory as am
from pmap_core.practice import worksheets
from pmap_core.train import transformer

SHEET = next(sheet for sheet in worksheets.load_sheets().sheets if sheet.id == "11_activation_memory")
S, B, H, A, LAYERS = 32, 8, 32, 4, 2


@pytest.fixture(scope="module")
def answers():
    return {step.id: worksheets.compute_answer(step, None) for step in SHEET.at(1).steps}


def test_the_sheet_has_at_least_five_steps_on_the_lab_and_binds_alike_at_every_d():
    assert len(SHEET.steps) >= 5 and {step.lab for step in SHEET.steps} == {"activation_memory"}
    assert SHEET.at(1) == SHEET.at(3) == SHEET  # no step runs on more than one device


def test_the_formula_steps_are_the_papers_and_the_labs_counts(answers):
    sbh = S * B * H
    assert answers["paper_layer"] == sbh * (34 + 5 * A * S / H)
    linear = sum(t.lab for t in am.TERMS if t.unit == "sbh")
    quadratic = sum(t.lab for t in am.TERMS if t.unit == "as²b")
    question = SHEET.step("lab_layer").question["en"]
    assert f"sbh·{linear:g} + as²b·{quadratic:g}" in question  # what the question states is the term table's sum
    assert answers["lab_layer"] == sbh * linear + A * S * S * B * quadratic
    assert answers["paper_layer"] / answers["lab_layer"] == pytest.approx(0.3)  # as the explanation says


def test_the_residual_steps_follow_what_jax_saves(answers):
    dims = transformer.Dims(H, A, S, 32)
    saved = {remat: am.activation_bytes(am.saved_residuals(dims, LAYERS, B, remat)) for remat in am.POLICIES}
    assert answers["fewest_policy"] == min(saved, key=saved.get) == "full"
    rows = am.saved_residuals(dims, LAYERS, B, "selective")
    named = sum(r.bytes for r in rows if not r.argument and "named '" in r.source)
    # The residual stream's sums: each block's input (the embedding's for the first, the block before's output
    # for the next) and the last block's output, the final LayerNorm's input, which the head keeps.
    sums = sum(r.bytes for r in rows if not r.argument and r.source.startswith("output of add from"))
    # The explanation's 64sbh a block: its input, which jax.checkpoint keeps, and the named tensors.
    assert (sums, named) == (4 * S * B * H * (LAYERS + 1), 60 * S * B * H * LAYERS)
    assert answers["selective_bytes"] == saved["selective"] > named + sums
    assert answers["score_growth"] == 4.0
    assert answers["none_quadratic"] == pytest.approx(13 * A * B * LAYERS, rel=1e-6)


def test_full_remat_recomputes_part_of_a_forward_pass(answers):
    dims = transformer.Dims(H, A, S, 32)
    full, none = (am.compiled_step(dims, LAYERS, B, remat).flops for remat in ("full", "none"))
    share = (full - none) / am.forward_flops(dims, LAYERS, B)
    assert answers["recompute_share"] == pytest.approx(share)
    assert 0 < share < 1  # "less than the whole forward pass"
