"""`python -m pmap_core bench collectives`: a bad sweep is refused, and the JSON of a real run (a child
process) is what MLflow holds."""

import json

import pytest

from harness.processes import new_tracking_store, run_python
from pmap_core.cli.commands import main as cli_main
from tests.core.test_commbench import BUSBW


def test_cli_rejects_a_bad_sweep(capsys):
    assert cli_main(["bench", "collectives", "--devices", "1", "--no-tracking"]) == 2
    assert "at least 2 devices" in capsys.readouterr().err


def test_cli_json_is_logged_to_mlflow(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = new_tracking_store(tmp_path / "bench.db")
    done = run_python(
        ["-m", "pmap_core", "bench", "collectives", "--ops", "psum,all_gather",
         "--sizes", "1K,1M", "--devices", "2", "--repeats", "2", "--tracking-uri", uri, "--json"],
        timeout=180, check=True)
    out = json.loads(done.stdout)
    results = out["results"]
    assert [(r["op"], r["devices"], r["bytes"]) for r in results] == [
        ("psum", 2, 1024), ("psum", 2, 2**20), ("all_gather", 2, 1024), ("all_gather", 2, 2**20)]
    for r in results:
        assert r["busbw"] == pytest.approx(r["algbw"] * BUSBW[r["op"]](2))
        assert r["alpha"] >= 0 and r["beta"] > 0
    fits = {(f["op"], f["scope"]): f for f in out["fits"]}
    assert fits[("psum", "per D")]["alpha"] == results[0]["alpha"]

    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(out["tracking"]["run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.tags["kind"] == "bench" and run.data.tags["lab"] == "comm_benchmark"
    assert run.data.params["devices"] == "2" and run.data.params["sizes"] == "1024,1048576"
    history = client.get_metric_history(run.info.run_id, "psum.D2.seconds")
    history = sorted((h.step, h.value) for h in history)
    assert [step for step, _ in history] == [1024, 2**20]
    assert [value for _, value in history] == pytest.approx([results[0]["seconds"], results[1]["seconds"]])
    assert run.data.metrics["psum.D2.alpha_s"] == pytest.approx(results[0]["alpha"])
    assert run.data.metrics["all_gather.D2.beta_Bps"] == pytest.approx(results[2]["beta"])


def test_two_levels_are_fitted_in_a_group_of_processes(tmp_path, capsys):
    """`bench two-level` in 2 processes × 2 devices: psum within process 0 and across the processes, each fitted;
    one process alone is refused."""
    from pmap_core.train import launch

    command = ["bench", "two-level", "--json", "--sizes", "4K,64K,1M", "--repeats", "2"]
    with launch.ProcessGroup(command, 2, 2, timeout_s=240, cwd=str(tmp_path)) as group:
        lines = [line.text for line in group.lines() if line is not None]
        outcome = group.outcome()
    assert outcome.ok, lines[-20:]
    result = json.loads(outcome.stdout[0].strip().splitlines()[-1])
    assert [(level["level"], level["devices"], level["sizes"]) for level in result["levels"]] == [
        ("process", 2, [4096, 65536, 2**20]), ("network", 2, [4096, 65536, 2**20])]
    assert all(level["alpha_s"] >= 0 and level["beta_bytes_per_s"] != 0 for level in result["levels"])
    assert "alpha_network_over_process" in result and "beta_process_over_network" in result
    assert cli_main(["bench", "two-level"]) == 2
    assert "two levels need at least 2 processes of at least 2 devices each" in capsys.readouterr().err


def test_cli_benchmarks_the_all_to_all_with_its_own_fit(capsys):
    assert cli_main(["bench", "collectives", "--ops", "all_to_all", "--sizes", "1K,64K", "--devices", "2,4",
                     "--repeats", "2", "--no-tracking", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {(r["op"], r["devices"]) for r in out["results"]} == {("all_to_all", 2), ("all_to_all", 4)}
    for r in out["results"]:
        assert r["busbw"] == pytest.approx(r["algbw"] * (r["devices"] - 1) / r["devices"])
    assert {(f["op"], f["scope"]) for f in out["fits"]} == {("all_to_all", "per D"), ("all_to_all", "all D")}
