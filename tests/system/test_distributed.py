"""Two processes joined by jax.distributed train as one: the result equals one process with 8 devices."""

import json
import subprocess

import numpy as np

from harness.processes import free_port, start_python
from pmap_core.train import distributed
from pmap_core.train.loop import TrainConfig, train

SETTINGS = dict(model="linear", devices=8, global_batch=64, steps=30, chunk=10, learning_rate=0.2, seed=11)


def test_two_processes_of_four_devices_equal_one_process_of_eight(tmp_path):
    address = f"127.0.0.1:{free_port()}"
    args = [f"--{name.replace('_', '-')}={value}" for name, value in SETTINGS.items()]
    processes = [
        start_python(["-m", "pmap_core", "train", "--json", "--no-tracking", *args,
                      "--coordinator-address", address, "--num-processes", "2", "--process-id", str(rank)],
                     cwd=tmp_path, devices=4)
        for rank in (0, 1)
    ]
    outputs = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=180)
            assert process.returncode == 0, err[-2000:]
            outputs.append(json.loads(out))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()

    single = train(TrainConfig(**SETTINGS))
    for rank, result in enumerate(outputs):
        assert (result["process_id"], result["num_processes"], result["devices"]) == (rank, 2, 8)
        assert result["replicas_identical"]
        np.testing.assert_allclose([result["params"]["w"], result["params"]["b"]],
                                   [single.params["w"], single.params["b"]], atol=1e-5, rtol=0)
        np.testing.assert_allclose(result["final_loss"], single.final_loss, rtol=1e-5)
    assert outputs[0]["run_id"] is None  # --no-tracking; with tracking only process 0 would log


def group_of_two(tmp_path, heartbeat_s: int, scene: str) -> list[subprocess.Popen]:
    address = f"127.0.0.1:{free_port()}"
    group = [start_python(["-m", "harness.group_member", address, str(rank), str(heartbeat_s), scene],
                          cwd=tmp_path, devices=1, stdin=subprocess.PIPE) for rank in (0, 1)]
    for process in group:
        assert process.stdout.readline().strip() == "joined", process.stderr.read()[-2000:]
    return group


def test_the_lab_counts_a_silent_process_gone_before_jax_would_abort_the_others(tmp_path):
    """Once JAX's coordinator counts a process as gone it aborts every other one (SIGABRT, no MLflow run ended),
    racing the lab's own watch; JAX's timeout lies well past the lab's (`jax_heartbeat_s`), so the watch says so
    first and the process stays alive to end its runs and leave (here it only notes the reason, still alive long
    after JAX's abort would have come at the lab's timeout)."""
    heartbeat_s = 3
    survivor, killed = group_of_two(tmp_path, heartbeat_s, "killed")
    try:
        killed.kill()
        killed.wait()
        out, err = survivor.communicate("\n", timeout=120)
    finally:
        for process in (survivor, killed):
            if process.poll() is None:
                process.kill()
    assert survivor.returncode == 0, (survivor.returncode, err[-2000:])
    assert out.strip() == f"['process 1 {distributed.SILENT} {heartbeat_s} s']", out


def test_a_process_that_finished_first_is_not_counted_silent(tmp_path):
    """Process 1 exits normally at once and waits in JAX's shutdown barrier, no longer beating; its last beat says
    so, and process 0, still busy for twice the heartbeat timeout, carries on and exits normally too."""
    group = group_of_two(tmp_path, 2, "finished")
    try:
        outputs = [process.communicate(timeout=120) for process in group]
    finally:
        for process in group:
            if process.poll() is None:
                process.kill()
    assert [process.returncode for process in group] == [0, 0], [err[-2000:] for _, err in outputs]
    assert outputs[0][0].strip() == "[]", outputs[0]
