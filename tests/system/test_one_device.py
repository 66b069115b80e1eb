"""A server started with one device: every lab that lets the user choose D still opens, with D = 1."""

from harness.processes import APPTEST_CHILD, run_python

LABS_WITH_D = ("basics", "collectives", "demo", "device_mapping", "jit_composition", "migration", "pipeline",
               "sharded_dp", "training")


def test_every_lab_with_a_device_count_opens_on_one_device():
    child = (
        APPTEST_CHILD +
        f"for script in {LABS_WITH_D!r}:\n"
        "    at = open_lab(script, devices=4)\n"  # a link made on a larger server
        "    errors = [e.value for e in at.exception] + [e.value for e in at.error]\n"
        "    shown = [n.value for n in at.number_input if n.key.endswith('.devices')]\n"
        "    print(script, 'ERRORS', errors, 'D', shown, 'WARNED', any('devices' in w.value for w in at.warning))\n"
    )
    done = run_python(child, devices=1, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for script in LABS_WITH_D:
        assert f"{script} ERRORS [] D [1] WARNED True" in done.stdout.splitlines(), done.stdout
