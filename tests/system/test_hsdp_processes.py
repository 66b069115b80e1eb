"""Hybrid sharded data parallelism across processes: `launch --processes 2 --devices-per-process 4 train --mesh
replica=2,data=4 --strategy zero3` puts the replica axis over the two processes (each holds one data group, the
state sharded over its four devices) and trains as one device does."""

from __future__ import annotations

import json

import pytest

from pmap_core.train import launch
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate

SETTINGS = ["--model", "mlp", "--hidden", "64", "--features", "4", "--global-batch", "64", "--steps", "10",
            "--chunk", "10", "--optimizer", "adam", "--strategy", "zero3"]


def test_two_processes_of_four_devices_train_hsdp_as_one_device(tmp_path):
    command = ["train", "--json", "--no-tracking", "--heartbeat-timeout", "20", *SETTINGS, "--mesh", "replica=2,data=4"]
    with launch.ProcessGroup(command, 2, 4, timeout_s=240, cwd=str(tmp_path)) as group:
        lines = [line for line in group.lines() if line is not None]
        outcome = group.outcome()
    assert outcome.ok, "\n".join(line.text for line in lines)[-3000:]
    results = [json.loads(out) for out in outcome.stdout]
    one = train(validate(TrainConfig(model="mlp", devices=1, global_batch=64, hidden=64, features=4, steps=10,
                                     chunk=10, impl="jit", optimizer="adam", strategy="zero3")),
                measure_scaling=False)
    for result in results:
        assert (result["devices"], result["mesh"], result["num_processes"]) == (8, "replica=2,data=4", 2)
        assert result["final_loss"] == pytest.approx(one.final_loss, rel=1e-5)
        assert result["replicas_identical"]
        # Each device holds a quarter of the parameters: 1/|data|, not 1/D.
        whole = one.footprint.param_bytes_per_device
        assert result["param_bytes_per_device"] / whole == pytest.approx(1 / 4, rel=0.03)
