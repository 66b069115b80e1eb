"""Activation memory under each remat policy (pmap_core.concepts.activation_memory): the paper's formula, what
JAX saves, what the compiler allocates and counts, at the transformer's default sizes on one device."""

import numpy as np
import pytest

from pmap_core.concepts import activation_memory as am
from pmap_core.train import transformer

DIMS = transformer.Dims()   # d_model 32, heads 4, seq_len 32, vocab 32
LAYERS, BATCH = 2, 8


@pytest.fixture(scope="module")
def residuals():
    return {remat: am.activation_bytes(am.saved_residuals(DIMS, LAYERS, BATCH, remat)) for remat in am.POLICIES}


@pytest.fixture(scope="module")
def steps():
    return {remat: am.compiled_step(DIMS, LAYERS, BATCH, remat) for remat in am.POLICIES}


def test_the_paper_setting_gives_its_own_formula():
    # GPT-3 175B's layer (Korthikanti et al. 2022, Table 3): s 2048, h 12288, a 96; b 1, t 8.
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    paper = am.predict("paper", s, b, h, a, t)
    assert paper.total == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    assert paper.variants["tensor parallel"] == pytest.approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
    assert paper.variants["tensor + sequence parallel"] == pytest.approx(paper.total / t)
    assert paper.variants["tensor parallel + selective recompute"] == pytest.approx(s * b * h * (10 + 24 / t))
    assert paper.variants["tensor + sequence parallel + selective recompute"] == pytest.approx(s * b * h * 34 / t)
    assert paper.variants["full recompute"] == 2 * s * b * h


@pytest.mark.parametrize("setting", ["paper", "lab"])
def test_the_terms_sum_to_the_total_and_the_coefficients(setting):
    s, b, h, a = 48, 8, 32, 4
    p = am.predict(setting, s, b, h, a)
    assert sum(bytes_ for _, bytes_ in p.terms) == p.total == pytest.approx(p.linear * s + p.quadratic * s * s)
    assert p.variants["full recompute"] == (2 if setting == "paper" else 4) * s * b * h


def test_residual_bytes_fall_from_none_to_selective_to_full(residuals):
    assert residuals["full"] < residuals["selective"] < residuals["none"]


def test_the_parameters_are_listed_but_not_counted():
    rows = am.saved_residuals(DIMS, LAYERS, BATCH, "full")
    arguments = [r for r in rows if r.argument]
    assert arguments and all(r.source.startswith("from the argument") for r in arguments)
    assert am.activation_bytes(rows) == sum(r.bytes for r in rows) - sum(r.bytes for r in arguments)


def test_selective_keeps_the_named_tensors_and_no_score():
    rows = [r for r in am.saved_residuals(DIMS, LAYERS, BATCH, "selective") if not r.argument]
    named = {name for name in transformer.SELECTIVE_SAVED for r in rows if f"named '{name}'" in r.source}
    assert named == set(transformer.SELECTIVE_SAVED)
    scores = (BATCH, DIMS.heads, DIMS.seq_len, DIMS.seq_len)
    assert not [r for r in rows if r.shape == scores]
    assert [r for r in am.saved_residuals(DIMS, LAYERS, BATCH, "none") if r.shape == scores]


@pytest.mark.parametrize(("batch", "seq_len", "d_model", "heads", "layers"), [
    (8, 32, 32, 4, 2),   # the page's defaults
    (3, 5, 6, 3, 3),
    (2, 8, 2, 2, 2),
])
def test_nones_bytes_beyond_the_formula_are_outside_the_blocks_and_inside_them(batch, seq_len, d_model, heads,
                                                                                 layers):
    """Under none JAX saves more than the formula counts for the blocks: the embedding's and the head's residuals,
    which selective and full keep as well beyond their own formulas, and inside the blocks what the term list leaves
    out: two float32 values a row for each of a block's two LayerNorms and for its softmax, then Q, K and V's weights
    stacked (3h² a block) and a few values of h or fewer."""
    measured = am.measure(am.check_settings(batch, seq_len, d_model, heads, layers))
    beyond = measured.beyond_formula
    none, selective = measured.of("none"), measured.of("selective")
    assert beyond.total == none.residual_bytes - none.formula_bytes
    assert beyond.outside == selective.residual_bytes - selective.formula_bytes > 0
    assert beyond.inside > 0
    b, s, h, a = batch, seq_len, d_model, heads
    assert beyond.per_row == layers * am.LAB_BYTES * (2 * 2 * b * s + 2 * b * a * s)
    stacked = layers * am.LAB_BYTES * 3 * h * h
    assert stacked <= beyond.other <= stacked + layers * am.LAB_BYTES * (2 * h + 4)


def test_compiler_reported_peak_is_lower_under_full_remat(steps):
    assert steps["full"].peak < steps["none"].peak


def test_full_remat_adds_each_blocks_forward_but_its_last_product(steps):
    extra = steps["full"].flops - steps["none"].flops
    assert extra == pytest.approx(am.recomputed_flops(DIMS, LAYERS, BATCH, "full"), rel=0.10)
    # Less than the Scaling Book's whole forward pass (6ND → 8ND): XLA drops what the backward never reads.
    assert extra < 0.8 * am.forward_flops(DIMS, LAYERS, BATCH)


def test_the_policies_agree_on_losses_and_gradients():
    runs = {remat: am.sgd_losses(DIMS, LAYERS, BATCH, remat, steps=3) for remat in am.POLICIES}
    losses, grads = runs["none"]
    for remat in ("selective", "full"):
        other_losses, other_grads = runs[remat]
        np.testing.assert_allclose(other_losses, losses, rtol=1e-6)
        for name, g in grads.items():
            scale = float(np.max(np.abs(g))) or 1.0
            np.testing.assert_allclose(other_grads[name], g, rtol=1e-6, atol=1e-6 * scale, err_msg=name)


def test_the_fitted_quadratic_coefficient_follows_the_formula():
    none = am.sweep(DIMS, LAYERS, BATCH, "none", compile_steps=False)
    selective = am.sweep(DIMS, LAYERS, BATCH, "selective", compile_steps=False)
    assert none.residual_fit[2] == pytest.approx(none.formula_quadratic, rel=0.25)
    assert abs(selective.residual_fit[2]) < 0.10 * none.formula_quadratic


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="remat must be one of"):
        transformer.remat_policy("some")
