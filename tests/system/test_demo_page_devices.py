"""The demo page in a process of 16 devices: the tutorial's batch runs on 8 of them, and the page says so."""


def test_demo_page_on_sixteen_devices_says_the_tutorial_batch_ran_on_8_of_16():
    """A process has one device count: the page at D = 16 runs in a child process with 16 devices."""
    from harness.processes import run_python

    done = run_python(["-m", "tests.children.demo_page_info"], devices=16, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "It ran on 8 of the 16 devices chosen" in done.stdout
    assert "exactly" not in done.stdout
