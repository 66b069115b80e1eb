"""A server started with one device: every lab that lets the user choose D still opens, with D = 1."""

from harness.processes import run_python

LABS_WITH_D = ("basics", "collectives", "context_parallel", "demo", "device_mapping", "expert_parallel",
               "jit_composition", "migration", "pipeline", "sharded_dp", "training")


def test_every_lab_with_a_device_count_opens_on_one_device():
    done = run_python(["-m", "tests.children.labs_open", *LABS_WITH_D], devices=1, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for script in LABS_WITH_D:
        assert f"{script} ERRORS [] D [1] WARNED True" in done.stdout.splitlines(), done.stdout
