"""The 2-D mesh lab on a runtime of one device and of three, each in a child process of its own
(PMAP_LAB_DEVICES): it opens in English and 中文 with no exception and no error box, says what it needs at
D = 1, trains the one shape there is, and at D = 3 measures both shapes after a prediction."""

import pytest

_CHILD = """
import json
from conftest import SESSION_TRACKING_URI
from mlflow.tracking import MlflowClient
import jax

found = {"devices": jax.device_count(), "problems": [], "said": {}}
def check(at, where):
    found["problems"] += [f"{where}: {e.value}" for e in [*at.exception, *at.error]]

for lang in ("en", "zh"):
    at = open_lab("mesh_2d", lang=lang, steps=10)
    check(at, lang)
    found["said"][lang] = " ".join(i.value for i in at.info)
at = open_lab("mesh_2d", steps=10)
at.button(key="mesh_2d.train").click().run()
check(at, "train")
tracked = at.session_state["mesh_2d.last_run"]
params = MlflowClient(SESSION_TRACKING_URI).get_run(tracked.run_id).data.params
found["trained"] = [params["mesh_data"], params["mesh_model"]]
found["sweep_disabled"] = at.button(key="mesh_2d.sweep").disabled
if jax.device_count() > 1:
    at.radio(key="mesh_2d.guess").set_value("3x1").run()
    at.button(key="mesh_2d.sweep").click().run()
    check(at, "sweep")
    shown = at.session_state["mesh_2d.last_sweep"]
    found["swept"] = [f"{r.data}x{r.model}" for r in shown.sweep.runs]
    found["verdict"] = [m.value for m in at.markdown if "On this machine" in m.value]
    dp = next(p for p in shown.prediction.shapes if p.model == 1)
    found["regime"] = [m.value for m in at.markdown if "by bandwidth alone" in m.value]
    found["dp"] = [dp.compute_s * 1e6, dp.comm_s * 1e6]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def runs():
    from harness.processes import APPTEST_CHILD, json_at_device_counts

    return json_at_device_counts(APPTEST_CHILD + _CHILD, (1, 3), timeout=600)


def test_one_device_renders_says_what_it_needs_and_trains(runs):
    one = runs[1]
    assert one["devices"] == 1 and not one["problems"], one["problems"]
    assert "the only mesh is 1 × 1" in one["said"]["en"] and "唯一的网格是 1 × 1" in one["said"]["zh"]
    assert one["trained"] == ["1", "1"] and one["sweep_disabled"]


def test_three_devices_train_and_measure_both_shapes(runs):
    three = runs[3]
    assert three["devices"] == 3 and not three["problems"], three["problems"]
    assert "only the shapes 3x1, 1x3" in three["said"]["en"]
    assert three["trained"] == ["1", "3"]
    assert three["swept"] == ["3x1", "1x3"] and len(three["verdict"]) == 1
    # The regime is read from the compute and communication the prediction table shows on the same screen.
    (regime,), (compute_us, comm_us) = three["regime"], three["dp"]
    expected = "compute-bound" if compute_us > comm_us else "communication-bound"
    assert f"its communication takes {comm_us:.3g} µs — {expected}." in regime
