"""The sharded data parallel lab and the ZeRO interview questions on servers of 1, 3 and 16 devices, each
in a child process of its own (the device count is fixed per process): the page trains and measures at
the server's every device, every ZeRO question is answered and explained, and nothing shows an error."""

import pytest

from harness.processes import start_python

DEVICE_COUNTS = (1, 3, 16)


@pytest.fixture(scope="module")
def outputs():
    page = ["-m", "tests.children.sharded_dp_page"]
    children = {devices: start_python(page, devices=devices) for devices in DEVICE_COUNTS}
    done = {}
    for devices, child in children.items():
        out, err = child.communicate(timeout=900)
        assert child.returncode == 0, (devices, err[-3000:])
        done[devices] = out.splitlines()
    return done


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_the_page_and_the_zero_questions_open_clean(outputs, devices):
    from pmap_core.practice.quiz import zero

    lines = outputs[devices]
    assert f"PAGE {devices} {sorted({1, devices})}" in lines, lines
    answers = {line.split(" ", 2)[1]: line.split(" ", 2)[2] for line in lines if line.startswith("QUESTION ")}
    assert set(answers) == {q.id for q in zero.QUESTIONS}
    # A collective over one device is still an instruction; what it sends is 0 bytes.
    assert answers["fsdp_vs_dp_bytes"] == (zero.MORE if devices > 1 else zero.NOTHING)
    assert answers["accumulation_collectives"] == (zero.ONCE_PER_STEP if devices > 1 else zero.NEVER)
    assert answers["zero3_layer_gathers"] == (zero.TWICE if devices > 1 else zero.NOT_GATHERED)
    assert float(answers["mixed_zero1_memory_gb"]) == pytest.approx(2 + 2 + 12 / devices)  # ZeRO §3's 2 + 2 + 12
