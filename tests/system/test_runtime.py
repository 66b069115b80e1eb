"""The device runtime in fresh processes: no collective deadlock, the device count chosen by the
environment, and a bad count refused clearly."""

from harness.processes import run_python


def test_unblocked_collectives_do_not_deadlock():
    """Back-to-back small collectives, none blocked until the end (tests/children/collective_stress.py)."""
    result = run_python(["-m", "tests.children.collective_stress"], drop=("NPROC", "PMAP_LAB_DEVICES"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["ok", "8.0", "8"]


def test_device_count_is_chosen_by_environment():
    result = run_python("import pmap_core, jax; print(jax.device_count())", devices=4)
    assert result.stdout.strip() == "4", result.stderr[-2000:]


def test_bad_device_count_in_environment_is_a_clear_error():
    result = run_python("import pmap_core", devices="lots")
    assert result.returncode != 0
    assert "PMAP_LAB_DEVICES must be a whole number" in result.stderr
