"""`python -m pmap_core sweep --meshes …` as a user runs it: one child MLflow run per data × model (or data ×
seq) shape of D under one parent, read back from a real sqlite store."""

import json

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store, run_python

TINY = ["--steps", "12", "--chunk", "6", "--global-batch", "64"]
FIGURES = ("throughput", "steady_throughput", "step_time_s", "steady_step_time_s", "comm_bytes_per_step",
           "param_bytes_per_device")


def run_cli(*args, cwd, devices=8, timeout=240):
    return run_python(["-m", "pmap_core", *args], cwd=cwd, devices=devices, timeout=timeout)


def test_every_shape_of_eight_devices_is_a_child_run_of_one_parent(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    done = run_cli("sweep", "--meshes", "all", "--devices", "8", "--json", "--tracking-uri", store, *TINY,
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    shapes = [(run["mesh_data"], run["mesh_model"]) for run in result["runs"]]
    assert shapes == [(8, 1), (4, 2), (2, 4), (1, 8)] and result["meshes"] == ["8x1", "4x2", "2x4", "1x8"]
    assert {run["impl"] for run in result["runs"]} == {"tensor"} and {run["model"] for run in result["runs"]} == {"mlp"}
    finals = [run["final_loss"] for run in result["runs"]]
    assert finals == pytest.approx([finals[0]] * 4, rel=1e-5)  # the same training on every shape
    assert result["fastest"] in result["meshes"] and "run 4/4: mesh data=1,model=8" in done.stderr

    client = MlflowClient(store)
    parent = client.get_run(result["run_id"])
    assert parent.info.status == "FINISHED" and parent.data.params["meshes"] == "8x1,4x2,2x4,1x8"
    assert parent.data.tags["sweep_over"] == "meshes"
    children = [client.get_run(run["run_id"]) for run in result["runs"]]
    for child, run in zip(children, result["runs"], strict=True):
        assert child.info.status == "FINISHED"
        assert child.data.tags["mlflow.parentRunId"] == result["run_id"]
        assert (child.data.params["mesh_data"], child.data.params["mesh_model"]) == (str(run["mesh_data"]),
                                                                                     str(run["mesh_model"]))
        for name in FIGURES:
            assert child.data.metrics[name] == pytest.approx(run[name]), name
        # what the JSON lists of the compiled step's collectives adds up to the logged bytes
        assert sum(c["bytes_per_step"] for c in run["collectives"]) == pytest.approx(run["comm_bytes_per_step"])
    # the parent draws each figure against the size of the model axis, under names no training run has
    assert not set(parent.data.metrics) & set(children[0].data.metrics)
    for name in ("steady_throughput", "comm_bytes_per_step", "param_bytes_per_device"):
        history = {m.step: m.value for m in client.get_metric_history(result["run_id"], f"by_model_axis/{name}")}
        assert history == pytest.approx({run["mesh_model"]: run[name] for run in result["runs"]}), name


def test_listed_shapes_run_alone_and_a_mixed_request_is_refused(tmp_path):
    done = run_cli("sweep", "--meshes", "4x2,2x4", "--json", "--no-tracking", *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(r["mesh_data"], r["mesh_model"], r["devices"]) for r in result["runs"]] == [(4, 2, 8), (2, 4, 8)]
    assert result["run_id"] is None
    refused = run_cli("sweep", "--meshes", "all", "--device-counts", "2,4", "--no-tracking", *TINY, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines()[-1] == ("error: --meshes trains every shape of one D with its axis's "
                                                       "program (tensor on model, context on seq); leave out "
                                                       "--device-counts")
    wrong = run_cli("sweep", "--meshes", "4x4", "--devices", "8", "--no-tracking", *TINY, cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines()[-1] == "error: the mesh data=4,model=4 uses 16 devices, not 8"


def test_the_seq_axis_sweeps_context_parallel_shapes_and_skips_what_the_scheme_refuses(tmp_path):
    """`--mesh-axis seq`: the transformer (impl context) once per data × seq shape of D; Ulysses over 2 heads
    cannot split them over 4 devices, so 1x4 is skipped. Every shape trains the same model (one device's loss),
    and each child's bytes from the compiled HLO equal its scheme's formula."""
    store = new_tracking_store(tmp_path / "mlflow.db")
    small = ["--d-model", "16", "--heads", "2", "--seq-len", "8", "--steps", "6", "--chunk", "6", "--global-batch", "8"]
    done = run_cli("sweep", "--meshes", "all", "--mesh-axis", "seq", "--context", "ulysses", "--devices", "4",
                   "--json", "--tracking-uri", store, *small, cwd=tmp_path, devices=4)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["axis"] == "seq" and result["meshes"] == ["4x1", "2x2"] and result["skipped"] == ["1x4"]
    assert [(run["impl"], run["model"], run["mesh_data"], run["mesh_seq"]) for run in result["runs"]] == [
        ("context", "transformer", 4, 1), ("context", "transformer", 2, 2)]
    finals = [run["final_loss"] for run in result["runs"]]
    assert finals == pytest.approx([finals[0]] * 2, rel=1e-5)
    assert "run 2/2: mesh data=2,seq=2" in done.stderr
    split = result["runs"][1]
    assert {c["axis"] for c in split["collectives"] if c["kind"] == "all-to-all"} == {"seq"}

    client = MlflowClient(store)
    parent = client.get_run(result["run_id"])
    assert parent.info.run_name == "sweep-meshes-seq-transformer-D4-B8"
    assert (parent.data.params["meshes"], parent.data.params["mesh_axis"]) == ("4x1,2x2", "seq")
    for run in result["runs"]:
        child = client.get_run(run["run_id"]).data
        assert child.params["context"] == "ulysses" and child.params["mesh_seq"] == str(run["mesh_seq"])
        assert child.metrics["comm_bytes_per_step"] == pytest.approx(child.metrics["formula_comm_bytes_per_step"],
                                                                     rel=0.05)
    history = {m.step: m.value for m in client.get_metric_history(result["run_id"], "by_seq_axis/comm_bytes_per_step")}
    assert history == pytest.approx({run["mesh_seq"]: run["comm_bytes_per_step"] for run in result["runs"]})

