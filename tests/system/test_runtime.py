"""The device runtime: 8 simulated devices, and no collective deadlock."""

import os
import subprocess
import sys

import jax

from pmap_core import describe_runtime

REPO = os.path.join(os.path.dirname(__file__), "..", "..")

# Back-to-back small collectives, none blocked until the end: each call waits
# on the previous one's result, the pattern that aborts XLA's CPU runtime
# ("only 7 of them arrived on time") without the worker-pool fix in
# pmap_core.runtime.
STRESS = """
import pmap_core, jax, jax.numpy as jnp
from jax import lax
halve_mean = jax.pmap(lambda x: lax.pmean(x, "d") * 0.5, axis_name="d")
total = jax.pmap(lambda x: lax.psum(x, "d"), axis_name="d")
x = jnp.ones((8,))
for _ in range(2000):
    x = halve_mean(x)
sums = [total(jnp.ones((8, 4))) for _ in range(300)]
jax.block_until_ready((x, sums))
print("ok", float(sums[-1][0, 0]), jax.device_count())
"""


def test_default_runtime_is_eight_simulated_devices():
    info = describe_runtime()
    assert info.device_count == jax.device_count() == 8
    assert info.backend == "cpu" and info.simulated
    assert info.hardware_ceiling(8) == min(8, info.physical_cores)


def test_unblocked_collectives_do_not_deadlock():
    env = {k: v for k, v in os.environ.items() if k not in ("NPROC", "PMAP_LAB_DEVICES")}
    result = subprocess.run([sys.executable, "-c", STRESS], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["ok", "8.0", "8"]


def test_device_count_is_chosen_by_environment():
    env = dict(os.environ, PMAP_LAB_DEVICES="4")
    code = "import pmap_core, jax; print(jax.device_count())"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "4", result.stderr[-2000:]


def test_bad_device_count_in_environment_is_a_clear_error():
    env = dict(os.environ, PMAP_LAB_DEVICES="lots")
    result = subprocess.run([sys.executable, "-c", "import pmap_core"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "PMAP_LAB_DEVICES must be a whole number" in result.stderr
