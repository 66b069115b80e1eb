"""Exported labs: each script, run by a fresh interpreter that cannot import pmap_core, prints the
numbers pmap_core computes for the same settings (training: final loss and every parameter;
collectives: every device's result; migration: the step three ways), at D = 1, 2 and 8."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess

import jax
import numpy as np
import pytest

from harness.processes import start_python
from pmap_core import export
from pmap_core.cli.commands import main
from pmap_core.concepts import collectives, migration
from pmap_core.train import config as train_config
from pmap_core.train import loop
from pmap_core.train import plan as train_plan

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
TRAINING = {  # D: a config whose steps span two compiled calls of different lengths
    1: train_config.TrainConfig(model="linear", devices=1, impl="pmap", global_batch=32, steps=40, learning_rate=0.1),
    2: train_config.TrainConfig(model="mlp", devices=2, impl="shard_map", global_batch=64, steps=40,
                                learning_rate=0.1, hidden=16, seed=3),
    8: train_config.TrainConfig(model="mlp", devices=8, impl="jit", global_batch=64, steps=30, learning_rate=0.2,
                                hidden=8, seed=1),
}
COLLECTIVES = {1: ("psum", 4), 2: ("all_to_all", 6), 8: ("all_gather", 3)}  # D: (op, size)


def _start(path) -> subprocess.Popen:
    """The script run as in a learner's shell: no path to this repository, no device setting of ours."""
    return start_python([path.name], cwd=path.parent, path=(), drop=("PMAP_LAB_DEVICES", "NPROC"))


def _output(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err[-2000:]
    return out


def _training_output(text: str) -> tuple[float, dict[str, tuple[float, np.ndarray]]]:
    """(final loss, {name: (norm, values)}) as the script printed them."""
    loss = float(re.search(r"^final loss: (\S+)$", text, re.M).group(1))
    params, name = {}, None
    for line in text[text.index("final loss:"):].splitlines()[1:]:
        header = re.match(r"^(\w+): shape \(.*\), norm (\S+)$", line)
        if header:
            name = header.group(1)
            params[name] = (float(header.group(2)), [])
        else:
            params[name][1].extend(float(v) for v in NUMBER.findall(line))
    return loss, {k: (norm, np.array(values)) for k, (norm, values) in params.items()}


def _device_results(text: str) -> np.ndarray:
    after = text[text.index("\nafter:"):].split("\n", 2)[2]
    return np.array([float(v) for v in NUMBER.findall(re.sub(r"device \d+:", "", after))])


def test_exported_scripts_print_what_the_labs_compute(tmp_path, capsys):
    # The D = 8 collectives script comes from the CLI, as a learner would get it.
    assert main(["export", "collectives", "op=all_gather", "devices=8", "size=3"]) == 0
    scripts = {("collectives", 8): capsys.readouterr().out}
    scripts |= {("training", d): export.training_script(c, chunk=25) for d, c in TRAINING.items()}
    scripts |= {("collectives", d): export.collectives_script(op, d, n) for d, (op, n) in COLLECTIVES.items() if d != 8}
    scripts[("migration", 2)] = export.migration_script(2, 3)
    for (lab, d), text in scripts.items():
        assert "pmap_core" not in text and "streamlit" not in text, (lab, d)
        (tmp_path / f"{lab}_{d}.py").write_text(text)
    processes = {key: _start(tmp_path / f"{key[0]}_{key[1]}.py") for key in scripts}  # run while we compute

    for d, config in TRAINING.items():
        result = loop.train(train_plan.validate(dataclasses.replace(config, chunk=25)), measure_scaling=False)
        loss, params = _training_output(_output(processes[("training", d)]))
        np.testing.assert_allclose(loss, result.final_loss, rtol=1e-5, err_msg=f"D={d}")
        assert set(params) == set(result.params), d
        for name, value in result.params.items():
            norm, printed = params[name]
            np.testing.assert_allclose(norm, np.linalg.norm(value), rtol=1e-5, err_msg=f"D={d} {name}")
            np.testing.assert_allclose(printed, np.ravel(value), rtol=1e-4, atol=1e-6, err_msg=f"D={d} {name}")
    for d, (op, n) in COLLECTIVES.items():
        run = collectives.run_collective(op, d, n)
        shown = _device_results(_output(processes[("collectives", d)]))
        np.testing.assert_allclose(shown, np.ravel(run.after), rtol=1e-6, err_msg=f"{op} D={d}")

    ways = migration.run_three_ways(2, 3)
    out = _output(processes[("migration", 2)])
    assert out.startswith("running on 2 simulated CPU device(s)\n"), out  # the script says which devices it runs on
    lines = [line for line in out.splitlines() if line.split(":")[0] in ("pmap", "shard_map", "jit")]
    for way, line in zip(ways.ways, lines, strict=True):
        assert line.startswith(f"{way.impl}:")
        expected = [way.loss, *np.ravel(way.params["w"]), float(way.params["b"])]
        np.testing.assert_allclose([float(v) for v in NUMBER.findall(line)], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("argv, message", [
    (["training", "lr=abc"], "lr must be a number"),
    (["training", "devices=3", "batch=256"], "does not split evenly"),  # devices=3 alone starts from 255
    (["collectives", "op=<b>x</b>"], "unknown collective"),
    (["migration", "colour=red"], "has no setting colour"),
])
def test_the_cli_refuses_bad_settings_in_one_line(capsys, argv, message):
    assert main(["export", *argv]) == 2
    out, err = capsys.readouterr()
    assert not out and message in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["training", "devices=16", "batch=64"], ["migration", "devices=16"],
                                  ["collectives", "op=psum_scatter_tiled", "devices=16", "size=32"],
                                  ["sharded_dp", "devices=16"], ["mesh_2d", "mesh=4x4"],
                                  ["training", "devices=16", "--format", "ipynb"]])
def test_a_script_simulates_its_own_devices_whatever_this_server_has(capsys, argv):
    """The script sets its own device count: this process's 8 devices are no limit on it."""
    assert jax.device_count() == 8
    assert main(["export", *argv]) == 0
    out = capsys.readouterr().out
    if "ipynb" in argv:
        out = "\n".join("".join(cell["source"]) for cell in json.loads(out)["cells"] if cell["cell_type"] == "code")
    assert "\nDEVICES = 16\n" in out


def test_a_training_script_for_more_devices_than_this_server_has_runs(tmp_path):
    script = tmp_path / "training.py"
    script.write_text(export.script_for("training", {"devices": "16", "batch": "64", "steps": "20"}))
    out = _output(_start(script))
    assert "linear on 16 cpu device(s), global batch 64" in out and re.search(r"^final loss: \S+$", out, re.M), out


@pytest.mark.parametrize("argv, message", [
    (["training", "devices=65", "batch=65"], "devices must be between 1 and 64, got 65"),
    (["collectives", "devices=65"], "devices must be between 1 and 64, got 65"),
    (["training", "devices=16", "batch=24"], "global_batch 24 does not split evenly over 16 devices"),
    (["collectives", "op=psum_scatter_tiled", "devices=16", "size=24"], "must be a multiple of 16"),
    (["training", "impl=tensor", "model=mlp"], "impl must be one of pmap, shard_map, jit, got 'tensor'"),
    (["sharded_dp", "devices=16", "accum=4", "batch=32"], "does not split into 16 devices × 4 micro-batches"),
    (["sharded_dp", "accum=0"], "accum_steps must be between 1 and 64, got 0"),
    (["sharded_dp", "strategy=zero4"], "strategy must be one of dp, zero1, zero2, zero3, got 'zero4'"),
    (["mesh_2d", "mesh=3x2", "hidden=9"], "the model axis (2 devices) must divide hidden (9)"),
    (["mesh_2d", "mesh=4x2", "devices=4"], "the mesh data=4,model=2 uses 8 devices, not 4"),
    (["mesh_2d", "mesh=8x16"], "devices must be between 1 and 64, got 128"),
    (["multiprocess", "processes=2", "per_process=3", "batch=16"], "does not split over 6 devices"),
    (["multiprocess", "processes=5"], "processes must be between 1 and 4, got 5"),
    (["multiprocess", "size=40"], "must split into whole global batches of 16"),
    (["training", "--format", "ipynb", "--lang", "fr"], "lang must be one of en, zh, got 'fr'"),
])
def test_export_refuses_what_no_script_can_run(capsys, argv, message):
    assert main(["export", *argv]) == 2
    out, err = capsys.readouterr()
    assert not out and message in err and err.count("\n") == 1, err


def test_the_multiprocess_launch_script_prints_what_the_clis_group_prints(tmp_path, capsys):
    """The script starts its own processes, which join with jax.distributed; process 0's rows, losses and
    params are those of `python -m pmap_core launch` with the same settings."""
    assert main(["export", "multiprocess", "processes=2", "per_process=2", "impl=pmap", "batch=8", "size=32",
                 "steps=6", "lr=0.2", "seed=4"]) == 0
    script = tmp_path / "multiprocess.py"
    script.write_text(capsys.readouterr().out)
    process = _start(script)
    group = start_python(["-m", "pmap_core", "launch", "--processes", "2", "--devices-per-process", "2", "train",
                          "--model", "linear", "--impl", "pmap", "--global-batch", "8", "--dataset-size", "32",
                          "--steps", "6", "--learning-rate", "0.2", "--seed", "4", "--json", "--no-tracking"])
    out = _output(process)
    printed = dict(re.findall(r"^\[process 0\] (\w+): (.*)$", out, re.M))
    reference = json.loads(_output(group))
    assert printed["num_processes"] == "2" and printed["local_devices"] == "['cpu:0', 'cpu:1']"
    assert json.loads(printed["rows"]) == reference["rows"]
    np.testing.assert_allclose(json.loads(printed["losses"]), reference["losses"], rtol=1e-5)
    final = float(re.search(r"^\[process 0\] final loss: (\S+)$", out, re.M).group(1))
    np.testing.assert_allclose(final, reference["losses"][-1], rtol=1e-5)
    params = dict(re.findall(r"'(\w+)': ([-+\d.e]+)", printed["params"]))
    np.testing.assert_allclose([float(params[k]) for k in sorted(reference["params"])],
                               [reference["params"][k] for k in sorted(reference["params"])], rtol=1e-5)
