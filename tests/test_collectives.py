"""Every collective under pmap agrees with its NumPy reference, for several device counts."""

import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.collectives import OPS, compiled_collective, reference, ring_pairs, run_collective

DEVICE_COUNTS = (1, 2, 4, 8)


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
@pytest.mark.parametrize("op", OPS)
def test_collective_matches_numpy(op, devices):
    run = run_collective(op, devices, size=2 * devices, seed=devices + 17)
    assert run.before.shape == (devices, 2 * devices)
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
    assert run_collective("psum_scatter", 4, 8).per_device_out == (2,)


def test_ring_pairs_shift_by_one():
    assert ring_pairs(3) == [(0, 1), (1, 2), (2, 0)]


def test_compiled_function_is_reused():
    assert compiled_collective("psum", 4) is compiled_collective("psum", 4)


@pytest.mark.parametrize("op, devices, size, code", [
    ("psum_scatter", 4, 6, "size_not_divisible"),
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
