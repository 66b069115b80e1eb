"""The device runtime this process runs on: 8 simulated devices on the CPU, and the CPUs it may use
(the affinity capped by the cgroup quota)."""

import jax
import pytest

from pmap_core import describe_runtime, runtime


def test_default_runtime_is_eight_simulated_devices():
    info = describe_runtime()
    assert info.device_count == jax.device_count() == 8
    assert info.backend == "cpu" and info.simulated
    assert info.hardware_ceiling(8) == min(8, info.physical_cores)


@pytest.mark.parametrize(("affinity", "cpu_max", "expected"), [
    (8, None, 8), (8, "max 100000", 8), (8, "200000 100000", 2), (8, "150000 100000", 2),
    (8, "50000 100000", 1), (2, "800000 100000", 2), (4, "garbage", 4), (0, None, 1),
])
def test_usable_cpus_is_the_affinity_capped_by_the_cgroup_quota(affinity, cpu_max, expected):
    assert runtime.usable_cpus(affinity, cpu_max) == expected
