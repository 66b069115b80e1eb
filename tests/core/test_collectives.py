"""Every collective under pmap agrees with its NumPy reference, for several device counts."""

import numpy as np
import pytest

from labs.texts import table as text_table
from pmap_core import LabInputError
from pmap_core.concepts.collectives import OPS, compiled_collective, reference, ring_pairs, run_collective

DEVICE_COUNTS = (1, 2, 4, 8)


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
@pytest.mark.parametrize("op", OPS)
def test_collective_matches_numpy(op, devices):
    size = devices if op == "psum_scatter" else 2 * devices  # untiled: the scattered dimension is D
    run = run_collective(op, devices, size=size, seed=devices + 17)
    assert run.before.shape == (devices, size)
    np.testing.assert_allclose(run.after, reference(op, run.before), rtol=1e-5, atol=1e-5)
    assert run.ok and run.max_abs_error < 1e-4


def test_references_are_what_the_textbook_says():
    """Hand-worked values on 2 devices, so that a wrong reference cannot hide a wrong collective."""
    x = np.array([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0]])
    np.testing.assert_array_equal(reference("psum", x), [[11, 22, 33, 44]] * 2)
    np.testing.assert_array_equal(reference("pmean", x), [[5.5, 11, 16.5, 22]] * 2)
    np.testing.assert_array_equal(reference("all_gather_tiled", x)[1], [1, 2, 3, 4, 10, 20, 30, 40])
    np.testing.assert_array_equal(reference("psum_scatter_tiled", x), [[11, 22], [33, 44]])
    np.testing.assert_array_equal(reference("ppermute", x), x[::-1])
    np.testing.assert_array_equal(reference("all_to_all", x), [[1, 2, 10, 20], [3, 4, 30, 40]])


def test_output_shapes_differ_between_tiled_and_stacked():
    stacked = run_collective("all_gather", 4, 3, seed=1)
    tiled = run_collective("all_gather_tiled", 4, 3, seed=1)
    assert stacked.per_device_out == (4, 3) and tiled.per_device_out == (12,)
    assert run_collective("psum_scatter", 4, 4).per_device_out == ()  # element d of the sum on device d
    assert run_collective("psum_scatter_tiled", 4, 8).per_device_out == (2,)


def test_ring_pairs_shift_by_one():
    assert ring_pairs(3) == [(0, 1), (1, 2), (2, 0)]


def test_compiled_function_is_reused():
    assert compiled_collective("psum", 4) is compiled_collective("psum", 4)


@pytest.mark.parametrize("op, devices, size, code", [
    ("psum_scatter_tiled", 4, 6, "size_not_divisible"),
    ("all_to_all", 3, 4, "size_not_divisible"),
    ("psum", 9, 4, "too_many_devices"),
    ("psum", 2, 0, "out_of_range"),
    ("psum", 2, 10_000, "out_of_range"),
    ("reduce", 2, 4, "unknown_op"),
])
def test_bad_inputs_are_refused_with_a_code(op, devices, size, code):
    with pytest.raises(LabInputError) as error:
        run_collective(op, devices, size)
    assert error.value.code == code


@pytest.mark.parametrize("devices, size", [(4, 8), (4, 2), (1, 3), (8, 16)])
def test_untiled_psum_scatter_is_not_reshaped_its_requirement_and_jax_error_are_shown(devices, size):
    """Untiled psum_scatter needs the scattered dimension equal to D; n = 2D is not quietly reshaped to (D, 2)."""
    run = run_collective("psum_scatter", devices, size)
    assert not run.ok and run.jax_error.startswith("ValueError")
    assert f"scatter dimension size {size} must match shard count {devices}" in run.jax_error
    fits = run_collective("psum_scatter", devices, devices, seed=3)
    assert fits.ok and fits.jax_error is None
    np.testing.assert_allclose(fits.after, fits.before.sum(axis=0), rtol=1e-5)


def test_global_norm_clipping_uses_a_psum_of_squares_not_pmax():
    """What the psum and pmax texts say, checked: ‖g‖ = √psum(‖g_d‖²); pmax of the norms is not the norm."""

    import jax
    import jax.numpy as jnp
    from jax import lax

    from pmap_core.runtime import DATA_AXIS

    shards = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    def norms(g):
        return jnp.sqrt(lax.psum((g * g).sum(), DATA_AXIS)), lax.pmax(jnp.sqrt((g * g).sum()), DATA_AXIS)

    norms = jax.pmap(norms, axis_name=DATA_AXIS, devices=jax.devices()[:4])(shards)
    np.testing.assert_allclose(norms[0], np.linalg.norm(shards), rtol=1e-5)
    assert np.all(norms[1] < 0.9 * np.linalg.norm(shards))
    texts = text_table("collectives")
    assert "clipping" not in texts["use.pmax"]["en"].split("Not for clipping")[0]
    assert "`psum`" in texts["use.pmax"]["en"] and "clipping" in texts["use.psum"]["en"]
    assert "multi-process" in texts["use.pmin"]["en"] and "多进程" in texts["use.pmin"]["zh"]

