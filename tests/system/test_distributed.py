"""Two processes joined by jax.distributed train as one: the result equals one process with 8 devices."""

import json

import numpy as np

from harness.processes import free_port, start_python
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
