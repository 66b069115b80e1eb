"""`python -m pmap_core` as a script and a person meet it: `--help` and `--version` answer without importing JAX,
MLflow or Streamlit; with `--json`, every command that fails prints one JSON object with its `error` on stdout and
exits non-zero; every command's help lists its settings and `--json`. Each failure as a real CLI subprocess.
(benchmarks/bench_cli_start.py prints how long `--help` and `--version` take.)"""

import json
import re

import pytest

from harness.processes import run_python
from pmap_core import export
from pmap_core.cli.commands import main

HEAVY = {"jax", "jaxlib", "mlflow", "streamlit", "numpy", "pandas"}

# One failing command line per command that takes --json: a setting out of its range, a usage error, a run that
# fails as it trains (a learning rate that diverges), a store that is not named.
FAILING = {
    "train-diverges": ["train", "--json", "--learning-rate", "10", "--no-tracking"],
    "train-usage": ["train", "--json", "--model", "nope"],
    "sweep": ["sweep", "--json", "--steps", "0", "--no-tracking"],
    "bench-collectives": ["bench", "collectives", "--json", "--ops", "nope", "--no-tracking"],
    "bench-two-level": ["bench", "two-level", "--json"],
    "launch": ["launch", "--json", "--processes", "9", "train"],
    "launch-command": ["launch", "--processes", "2", "train", "--json", "--model", "nope"],
    "export": ["export", "collectives", "op=nope", "--json"],
    "store": ["store", "move-fallback", "--json"],
    "store-check": ["store", "check", "--json", "--store", "http://127.0.0.1:9/"],
    "plan": ["plan", "--json", "--model", "lab", "--devices", "0"],
}
HELPS = [["train"], ["sweep"], ["bench", "collectives"], ["bench", "two-level"], ["launch"], ["export"],
         ["store", "move-fallback"], ["store", "check"], ["plan"]]


def imported(stderr: str) -> set[str]:
    """The top-level packages `python -X importtime` says it imported."""
    return {line.split("|")[-1].strip().split(".")[0] for line in stderr.splitlines()
            if line.startswith("import time:")}


@pytest.mark.parametrize("option, said", [("--help", "usage: python -m pmap_core"), ("--version", "verified on JAX")])
def test_help_and_version_import_no_heavy_library(option, said):
    done = run_python(["-X", "importtime", "-m", "pmap_core", option], devices=3)
    assert done.returncode == 0 and said in done.stdout, done.stderr[-2000:]
    assert imported(done.stderr) & HEAVY == set()
    assert "pmap_core" in imported(done.stderr)  # importtime's lines were read


def test_a_failure_with_json_is_one_json_object_with_its_error_and_the_exit_status(tmp_path):
    errors = {}
    for name, argv in FAILING.items():
        done = run_python(["-m", "pmap_core", *argv], cwd=tmp_path, devices=2, drop=("MLFLOW_TRACKING_URI",))
        assert done.returncode != 0, (name, done.stdout)
        assert len(done.stdout.strip().splitlines()) == 1, (name, done.stdout, done.stderr[-2000:])
        said = json.loads(done.stdout)
        assert said["error"] and said["status"] == done.returncode and "Traceback" not in done.stderr, (name, said)
        assert f"error: {said['error']}" in done.stderr  # the same line a person reads without --json
        errors[name] = said["error"]
    assert errors["train-diverges"].startswith("training diverged at step ")
    assert "invalid choice: 'nope'" in errors["train-usage"] and "invalid choice: 'nope'" in errors["launch-command"]


def test_without_json_a_usage_error_is_still_argparse_s(capsys):
    with pytest.raises(SystemExit) as refused:
        main(["train", "--model", "nope"])
    out, err = capsys.readouterr()
    assert refused.value.code == 2 and out == ""
    assert err.startswith("usage: python -m pmap_core train") and "error: argument --model: invalid choice" in err


@pytest.mark.parametrize("command", HELPS, ids=["-".join(c) for c in HELPS])
def test_every_command_s_help_lists_its_settings_and_json(command, capsys):
    with pytest.raises(SystemExit) as shown:
        main([*command, "--help"])
    said = capsys.readouterr().out
    assert shown.value.code == 0 and "--json" in said
    if command == ["launch"]:  # the command it runs: train's settings, less those launch sets itself
        listed = said.split("the command: train")[1]
        assert {"--model", "--steps", "--devices", "--dataset-size", "--json"} <= set(listed.split())
        assert "--process-id" not in listed and "--coordinator-address" not in listed
    if command == ["export"]:  # each lab's settings by their link names, with their values when left out
        for lab in export.LABS:
            line = re.search(rf"^  {lab}: (.*(?:\n    .*)*)", said, re.M).group(1)
            assert set(re.findall(r"(\w+)=", line)) == set(export.setting_defaults(lab)), lab


def test_every_setting_export_help_lists_is_one_the_lab_takes():
    for lab in export.LABS:
        for name, value in export.setting_defaults(lab).items():
            if value is not None:
                export.export_for(lab, {name: str(value)})  # taken, not "has no setting"
