"""The sharded data parallel lab and the ZeRO interview questions on servers of 1, 3 and 16 devices, each
in a child process of its own (the device count is fixed per process): the page trains and measures at
the server's every device, every ZeRO question is answered and explained, and nothing shows an error."""

import pytest

from harness.processes import APPTEST_CHILD, start_python

_CHILD = APPTEST_CHILD + """
import jax
from pmap_core.practice.quiz import zero
devices = jax.device_count()
at = open_lab("sharded_dp", devices=devices, batch=48, steps=2, hidden=8, features=4, measure_max=1)
assert_clean(at)
for button in ("sharded_dp.train", "sharded_dp.measure"):
    at.button(key=button).click().run()
    assert_clean(at)
run = at.session_state["sharded_dp.last_run"][0].result
measured = sorted({f.devices for f in at.session_state["sharded_dp.footprints"]})
print("PAGE", run.config.devices, measured, flush=True)
from tests.apptest_support import give_prediction
for question in zero.QUESTIONS:
    at = give_prediction(open_lab("interview", question=question.id), f"interview.{question.id}.guess")
    at.button(key="interview.check").click().run()
    assert_clean(at)
    print("QUESTION", question.id, at.session_state["interview.results"][question.id]["answer"], flush=True)
"""
DEVICE_COUNTS = (1, 3, 16)


@pytest.fixture(scope="module")
def outputs():
    children = {devices: start_python(_CHILD, devices=devices) for devices in DEVICE_COUNTS}
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
