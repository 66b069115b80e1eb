"""`python -m pmap_core train|sweep` as a user runs it: a subprocess, JSON on stdout, runs in MLflow."""

import contextlib
import dataclasses
import json
import math
import shlex
import sqlite3

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import ROOT, new_tracking_store, run_python
from pmap_core.cli.commands import main, parse_args
from pmap_core.cli.training import make_tracker
from pmap_core.train.distributed import ProcessInfo

TINY = ["--steps", "20", "--chunk", "10", "--global-batch", "32"]


def run_cli(*args, cwd, devices=4, timeout=120):
    return run_python(["-m", "pmap_core", *args], cwd=cwd, devices=devices, timeout=timeout)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return new_tracking_store(tmp_path_factory.mktemp("cli") / "mlflow.db")


def test_train_prints_one_json_object_and_logs_the_run(store, tmp_path):
    done = run_cli("train", "--json", "--tracking-uri", store, *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # the whole of stdout is one JSON object
    assert result["devices"] == 4 and result["global_batch"] == 32
    for key in ("run_id", "throughput", "scaling_ratio", "efficiency", "final_loss"):
        assert result[key] is not None, key
    assert result["efficiency"] == pytest.approx(result["scaling_ratio"] / 4)
    assert "step 20/20" in done.stderr  # progress goes to stderr
    run = MlflowClient(store).get_run(result["run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.params["global_batch"] == "32" and run.data.params["steps"] == "20"
    assert run.data.metrics["final_loss"] == pytest.approx(result["final_loss"])


def test_sweep_json_lists_one_run_per_device_count(tmp_path):
    done = run_cli("sweep", "--json", "--no-tracking", "--device-counts", "2,4", *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [run["devices"] for run in result["runs"]] == [1, 2, 4]
    assert result["runs"][0]["scaling_ratio"] == 1.0
    finals = [run["final_loss"] for run in result["runs"]]
    assert finals == pytest.approx([finals[0]] * 3, rel=1e-5)  # strong scaling: the same problem on every D
    assert result["run_id"] is None and "run 3/3: D = 4" in done.stderr


def test_bad_input_is_one_line_on_stderr_and_exit_status_2(capfd):
    status = main(["train", "--no-tracking", "--global-batch", "30", "--devices", "4"])
    out, err = capfd.readouterr()
    assert status == 2 and out == ""
    assert err.strip() == "error: global_batch 30 does not split evenly over 4 devices; try 28"


def test_only_process_zero_writes_to_mlflow(tmp_path):
    """Of a group of processes, only process 0 records the run: what a follower logs reaches no store,
    and the store holds the leader's one run, read back with its params, losses and end."""
    db = tmp_path / "mlflow.db"
    store = new_tracking_store(db)
    args = parse_args(["train", "--tracking-uri", store])
    follower = ProcessInfo(process_id=1, num_processes=2, local_devices=4, global_devices=8)
    leader = dataclasses.replace(follower, process_id=0)

    def record_a_run(info):
        tracker = make_tracker(args, info)
        run_id = tracker.start_run(f"process {info.process_id}", {"process_id": info.process_id})
        tracker.log_series(run_id, "loss", [0.5, 0.25])
        tracker.end_run(run_id)
        return tracker.store_run_id(run_id)

    def runs_stored():
        with contextlib.closing(sqlite3.connect(db)) as connection:
            return connection.execute("select count(*) from runs").fetchone()[0]

    record_a_run(follower)
    assert runs_stored() == 0
    run = MlflowClient(store).get_run(record_a_run(leader))
    assert runs_stored() == 1
    assert run.info.status == "FINISHED" and run.data.params == {"process_id": "0"}
    assert [m.value for m in MlflowClient(store).get_metric_history(run.info.run_id, "loss")] == [0.5, 0.25]


def test_train_json_reports_the_bytes_of_a_sharded_strategy(tmp_path):
    done = run_cli("train", "--json", "--no-tracking", "--model", "mlp", "--strategy", "zero3", "--optimizer", "adam",
                   "--accum-steps", "2", *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["impl"], result["strategy"], result["accum_steps"]) == ("jit", "zero3", 2)
    for key in ("param_bytes_per_device", "grad_bytes_per_device", "opt_bytes_per_device", "comm_bytes_per_step"):
        assert result[key] > 0, key
    assert result["param_bytes_per_device"] < result["opt_bytes_per_device"]  # Adam: two moments per parameter


def finite_runs(out: str) -> list[float]:
    """The final losses of the runs one JSON object on stdout reports (a train's, or each of a sweep's)."""
    result = json.loads(out)
    return [run["final_loss"] for run in result.get("runs", [result])]


@pytest.mark.parametrize("model", [[], ["--model", "mlp"]], ids=["default-model", "mlp"])
def test_a_wide_model_trains_at_the_default_learning_rate(capfd, model):
    """At η = 0.1 the MLP of width 256 ended at a loss of NaN, with exit status 0."""
    status = main(["train", "--hidden", "256", "--json", "--no-tracking", *model])
    out, err = capfd.readouterr()
    assert status == 0, err
    assert all(math.isfinite(loss) for loss in finite_runs(out)) and json.loads(out)["replicas_identical"]


def test_the_readmes_sweep_example_ends_at_finite_losses(capfd):
    line = next(line for line in (ROOT / "README.md").read_text().splitlines() if "pmap_core sweep --model mlp" in line)
    args = shlex.split(line.partition("#")[0])
    status = main([*args[args.index("pmap_core") + 1:], "--json", "--no-tracking"])
    out, err = capfd.readouterr()
    assert status == 0, err
    losses = finite_runs(out)
    assert len(losses) == 4 and all(math.isfinite(loss) for loss in losses), losses


def test_a_diverging_run_exits_non_zero_with_one_line_naming_the_step(capfd, tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    status = main(["train", "--learning-rate", "10", "--tracking-uri", store])
    out, err = capfd.readouterr()
    assert status == 2 and out == ""
    named = [line for line in err.splitlines() if "diverged" in line]
    assert named == ["error: training diverged at step 16 of 300: the loss stopped being a finite number; "
                     "reduce learning_rate (10 now), e.g. to 0.1"], err
    client = MlflowClient(store)
    (run,) = client.search_runs([client.get_experiment_by_name("pmap-lab").experiment_id])
    assert run.info.status == "FAILED" and run.data.metrics["diverged_at_step"] == 16
