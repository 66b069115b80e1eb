"""`python -m pmap_core train --profile` as a user runs it: the trace beside the run's usual fields, in MLflow, and
the run's result the same with or without it."""

import gzip
import json
import os

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store, run_python
from pmap_core.cli.commands import main

TINY = ["--steps", "20", "--chunk", "10", "--global-batch", "32", "--devices", "4"]


def run_cli(*args, cwd):
    return run_python(["-m", "pmap_core", *args], cwd=cwd, devices=4, timeout=180)


def test_profile_adds_the_trace_and_changes_no_result(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    profiled = run_cli("train", "--json", "--tracking-uri", store, "--profile", "--profile-steps", "2", *TINY,
                       cwd=tmp_path)
    assert profiled.returncode == 0, profiled.stderr
    result = json.loads(profiled.stdout)
    profile = result["profile"]
    assert "error" not in profile, profile
    assert [row["device"] for row in profile["per_device"]] == [0, 1, 2, 3]
    for row in profile["per_device"]:
        assert set(row) == {"device", "compute_s", "collective_s", "waiting_s", "idle_s"}
        assert row["compute_s"] > 0 and row["collective_s"] > 0 and min(row.values()) >= 0
    (all_reduce,) = [c for c in profile["collectives"] if c["kind"] == "all-reduce"]
    assert all_reduce["per_step"] == [[all_reduce["hlo_instructions"]] * 4] * 2
    assert os.path.isfile(profile["trace"]) and profile["trace"].startswith(str(tmp_path / "profiles"))
    with gzip.open(profile["trace"], "rt") as file:
        assert json.load(file)["traceEvents"]
    client = MlflowClient(store)
    (folder,) = client.list_artifacts(result["run_id"], "profile/plugins/profile")
    names = {item.path.rsplit("/", 1)[-1] for item in client.list_artifacts(result["run_id"], folder.path)}
    assert "perfetto_trace.json.gz" in names and any(name.endswith(".xplane.pb") for name in names)

    plain = run_cli("train", "--json", "--no-tracking", *TINY, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    unprofiled = json.loads(plain.stdout)
    assert "profile" not in unprofiled
    assert unprofiled["final_loss"] == result["final_loss"]  # to the last bit: JSON keeps a float's every digit


def test_profile_steps_out_of_range_is_one_line(capsys):
    with pytest.raises(SystemExit) as refused:
        main(["train", "--no-tracking", "--profile", "--profile-steps", "11"])
    out, err = capsys.readouterr()
    assert refused.value.code == 2 and out == ""
    assert err.strip().splitlines()[-1].endswith("--profile-steps: expected a whole number from 1 to 10, got '11'")
