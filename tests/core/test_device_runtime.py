"""The device runtime this process runs on: 8 simulated devices on the CPU."""

import jax

from pmap_core import describe_runtime


def test_default_runtime_is_eight_simulated_devices():
    info = describe_runtime()
    assert info.device_count == jax.device_count() == 8
    assert info.backend == "cpu" and info.simulated
    assert info.hardware_ceiling(8) == min(8, info.physical_cores)
