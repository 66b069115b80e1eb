"""The interview questions on 2-D meshes against independent references: the shape rules, the bytes of the
split arrays counted by hand, the ring formula of `costs.analytic` for the bytes a step sends, and the axis
and count of the gradient's all-reduce by the rules of data parallelism. `references(n)` gives
them for any device count; tests/system/test_quiz_devices.py checks them at other counts."""

import math

import jax
import pytest

from pmap_core.costs import analytic
from pmap_core.practice.quiz import mesh as quiz_mesh
from pmap_core.practice.quiz import registry as quiz

N = jax.local_device_count()


def squarest(n: int) -> tuple[int, int]:
    """(data, model) with data ≤ model, as close to square as n allows."""
    data = max(a for a in range(1, math.isqrt(n) + 1) if n % a == 0)
    return data, n // data


def references(n: int) -> dict[str, object]:
    data, model = squarest(n)
    features, hidden = 16, 32 * n  # the tensor-parallel MLP of mesh_tp_param_fraction
    whole = features * hidden + hidden + hidden + 1
    held = features * hidden // model + hidden // model + hidden // model + 1
    # mesh_dp_or_tp_bytes: batch 64n, 32 inputs, hidden 8n, on n × 1 and on 1 × n.
    dp = analytic.tensor_comm_bytes_per_step(64 * n, 32, 8 * n, n, 1)
    tp = analytic.tensor_comm_bytes_per_step(64 * n, 32, 8 * n, 1, n)
    return {
        "mesh_typeof_product": f"float32[{8 * n}@data,{4 * n}@model]",
        "mesh_ambiguous_dot": quiz_mesh.RAISES,
        "mesh_silent_gather": quiz_mesh.ALL_GATHER if model > 1 else quiz_mesh.NONE,
        "mesh_sharding_in_jit": quiz_mesh.TYPEOF_ONLY,
        "mesh_tp_param_fraction": held / whole,
        "mesh_dp_or_tp_bytes": quiz_mesh.SAME if n == 1 else quiz_mesh.TP_FEWER if tp < dp else quiz_mesh.DP_FEWER,
        # The gradient is a sum over the batch's rows, split over data only.
        "mesh_gradient_axis": quiz_mesh.ON_DATA if data > 1 else quiz_mesh.NOT_SENT,
        # One all-reduce after the scan with reduced weights (JAX docs, "Autodiff and sharding"); none alone.
        "mesh_reduced_all_reduces": 1.0 if n > 1 else 0.0,
    }


REFERENCES = references(N)


def test_every_mesh_question_has_a_reference():
    assert {q.id for q in quiz_mesh.QUESTIONS} == set(REFERENCES)
    assert len(quiz_mesh.QUESTIONS) >= 6


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    answer = quiz.answer(question_id)
    expected = REFERENCES[question_id]
    if isinstance(expected, float):
        assert answer == pytest.approx(expected, rel=1e-9)
    else:
        assert answer == expected
    if quiz.get_question(question_id).kind == quiz.CHOICE:
        offered = quiz.options(question_id)
        assert answer in offered and len(set(offered)) == len(offered) >= 2


def test_the_reference_fraction_is_about_one_over_the_model_axis():
    for n in (1, 2, 3, 5, 8, 16):
        _, model = squarest(n)
        assert references(n)["mesh_tp_param_fraction"] == pytest.approx(1 / model, rel=0.01)
