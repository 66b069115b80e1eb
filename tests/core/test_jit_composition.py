"""jit composition: same compiled program, grad + pmean = full-batch gradient, trace-time side effects."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pmap_core import LabInputError, hlo
from pmap_core.concepts import gradients
from pmap_core.concepts import jit_composition as composition


@pytest.mark.parametrize("devices", [1, 8])
def test_pmap_of_jit_compiles_to_the_same_program(devices):
    result = composition.compare_compiled(devices, rows=16)
    assert result.raw_differing_lines > 0  # names and metadata do differ before normalising
    assert result.identical, result.normalized_diff
    assert "all-reduce" in result.plain_hlo  # the pmean is in the program being compared


def test_normalising_keeps_real_differences():
    x = np.ones((2, 4), np.float32)
    compiled = {
        name: hlo.normalize_hlo(jax.pmap(fn, devices=jax.devices()[:2]).lower(x).compile().as_text())
        for name, fn in {"sin": jnp.sin, "cos": jnp.cos}.items()
    }
    assert hlo.differing_lines(compiled["sin"], compiled["cos"]) > 0


def test_all_three_forms_compute_the_same_values():
    speed = composition.compare_speed(4, rows=8, repeats=1, rounds=1)
    assert speed.max_abs_diff_jitted == 0.0
    assert speed.max_abs_diff_shard_map < 1e-5
    assert len(speed.plain.samples_s) == 1 and speed.plain.first_call_s > 0


def numpy_linear_gradient(w, b, x, y):
    residual = w * x + b - y
    return {"w": 2 * np.mean(residual * x), "b": 2 * np.mean(residual)}


@pytest.mark.parametrize("devices", [1, 2, 8])
def test_grad_in_pmap_with_pmean_equals_the_full_batch_gradient(devices):
    check = gradients.grad_in_pmap(devices, per_device_batch=4, seed=3)
    rng = np.random.default_rng(3)  # the same data grad_in_pmap draws
    x = rng.uniform(-1, 1, (devices, 4)).astype(np.float32)
    y = (3 * x + 1 + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)
    reference = numpy_linear_gradient(check.params["w"], check.params["b"], x.astype(np.float64), y)
    for name in ("w", "b"):
        np.testing.assert_allclose(check.averaged[name], [reference[name]] * devices, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.mean(check.per_device[name]), reference[name], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(check.full_batch[name], reference[name], rtol=1e-5, atol=1e-6)
    assert check.max_abs_error < 1e-5
    if devices > 1:  # shards see different data, so their own gradients differ
        assert len(set(check.per_device["w"])) > 1


def test_xla_fuses_the_gradient_all_reduces():
    counts = gradients.count_all_reduces(8, layers=3)
    assert counts.traced == counts.parameter_arrays == 6
    assert counts.compiled == 1
    assert "all-reduce" in counts.compiled_lines[0]


def test_side_effects_run_at_trace_time_only():
    demo = composition.purity_demo(4, calls=3)
    assert demo.trace_appends == 1
    assert demo.printed.count("tracing impure") == 1
    assert demo.runtime_callbacks == 3 * 4
    assert demo.impure_after_change == demo.scale_traced  # the changed outer value is not seen
    assert demo.impure_after_retrace == demo.pure_after_change == demo.scale_changed


def test_bad_sizes_are_refused():
    with pytest.raises(LabInputError) as error:
        composition.compare_compiled(2, rows=composition.MAX_ROWS + 1)
    assert error.value.code == "out_of_range"
    with pytest.raises(LabInputError):
        gradients.grad_in_pmap(jax.device_count() + 1)
