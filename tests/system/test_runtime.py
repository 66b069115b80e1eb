"""The device runtime in fresh processes: no collective deadlock, the device count chosen by the
environment, and a bad count refused clearly."""

from harness.processes import run_python

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


def test_unblocked_collectives_do_not_deadlock():
    result = run_python(STRESS, drop=("NPROC", "PMAP_LAB_DEVICES"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["ok", "8.0", "8"]


def test_device_count_is_chosen_by_environment():
    result = run_python("import pmap_core, jax; print(jax.device_count())", devices=4)
    assert result.stdout.strip() == "4", result.stderr[-2000:]


def test_bad_device_count_in_environment_is_a_clear_error():
    result = run_python("import pmap_core", devices="lots")
    assert result.returncode != 0
    assert "PMAP_LAB_DEVICES must be a whole number" in result.stderr
