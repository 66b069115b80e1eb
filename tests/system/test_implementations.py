"""The three implementations of one training step — pmap, shard_map, jit with shardings — against
one device, against each other, and in the compiled programs' communication."""

import dataclasses
import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from test_cli_training import TINY, run_cli

from harness.processes import new_tracking_store
from pmap_core import hlo
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import sweep, train
from pmap_core.train.plan import validate
from pmap_core.train.program import ProgramSpec
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError

TINY_MLP = TrainConfig(model="mlp", global_batch=32, hidden=8, features=4, steps=12, chunk=5,
                       learning_rate=0.1, seed=2)


def relative_error(a: dict, b: dict) -> float:
    return max(float(np.max(np.abs(a[k] - b[k]) / np.maximum(np.abs(b[k]), 1e-3))) for k in b)


@pytest.fixture(scope="module")
def one_device():
    return train(dataclasses.replace(TINY_MLP, devices=1), measure_scaling=False)


# 1 and the default 8 (the batch of 32 has no odd divisor): the transformer's programs at an odd D are
# tests/core/test_transformer.py's.
@pytest.mark.parametrize("devices", [1, 8])
@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_every_implementation_matches_one_device(impl, devices, one_device):
    result = train(validate(dataclasses.replace(TINY_MLP, devices=devices, impl=impl)), measure_scaling=False)
    assert relative_error(result.params, one_device.params) < 1e-5
    np.testing.assert_allclose(result.losses, one_device.losses, rtol=1e-5)
    assert result.replicas_identical  # every device ends with the same parameters, bit for bit


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_each_data_parallel_program_all_reduces_and_never_gathers(impl):
    program = programs.build(ProgramSpec(impl, "mlp", 4, 8, 4, 8, 5))
    found = hlo.collectives(program.compiled.as_text())
    kinds = [c.kind for c in found]
    assert "all-reduce" in kinds and "all-gather" not in kinds, kinds
    # One all-reduce per step, of the gradient of every parameter (4 arrays); the loss stays on its device.
    params = 4 * 8 + 8 + 8 + 1
    assert [(c.kind, c.operand_bytes) for c in found] == [("all-reduce", 4 * params)]
    assert all(c.group_size == 4 for c in found)


def test_hlo_collectives_reads_every_kind_with_its_bytes():
    text = "\n".join([
        "  %ag = f32[64,4]{1,0} all-gather(%p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}",
        "  %rs = bf16[4,4]{1,0} reduce-scatter(%p), replica_groups=[2,4]<=[8], dimensions={0}",
        "  %cp = f32[16]{0} collective-permute(%p), source_target_pairs={{0,1},{1,0}}",
        "  %ar-start = (f32[8]{0}, f32[8]{0}) all-reduce-start(%p), replica_groups=mesh['a'=2,'b'=4] {'b'}",
        "  %ar-done = f32[8]{0} all-reduce-done(%ar-start)",
        "  %add = f32[8]{0} add(%x, %y)",
        "  ROOT %a2a = (f32[2,4]{1,0}, f32[2,4]{1,0}) all-to-all(%s0, %s1), replica_groups={{0,1}}",
    ])
    found = hlo.collectives(text)
    assert [(c.kind, c.result_bytes, c.group_size, c.operand_bytes) for c in found] == [
        ("all-gather", 1024, 4, 256), ("reduce-scatter", 32, 4, 128), ("collective-permute", 64, None, 64),
        ("all-reduce", 32, 4, 32), ("all-to-all", 64, 2, 64)]
    assert sorted({c.kind for c in found}) == sorted(hlo.COLLECTIVE_KINDS)


def test_an_unknown_implementation_is_refused():
    with pytest.raises(LabInputError) as refused:
        validate(TrainConfig(impl="pjit"))
    assert refused.value.code == "unknown_impl" and "pmap, shard_map, jit" in str(refused.value)


def test_a_sweep_of_every_implementation_compares_each_with_its_own_one_device_run(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    tracking = TrackingCallback(Tracker(uri))
    config = TrainConfig(devices=2, global_batch=16, steps=10, chunk=5)
    result = sweep(config, [1, 2], [tracking], impls=IMPLEMENTATIONS)
    assert [(p.result.config.impl, p.devices) for p in result.points] == [
        (impl, d) for impl in IMPLEMENTATIONS for d in (1, 2)]
    for point in result.points:
        base = next(p for p in result.points if p.result.config.impl == point.result.config.impl)
        assert point.baseline_throughput == base.result.steady_throughput
        assert point.scaling_ratio == pytest.approx(point.result.steady_throughput / base.result.steady_throughput)
    tracked = tracking.tracked_sweep(result)
    client = MlflowClient(uri)
    parent = client.get_run(tracked.run_id)
    assert parent.data.params["impl"] == "pmap,shard_map,jit" and parent.data.params["device_counts"] == "1,2"
    children = [client.get_run(run_id) for run_id in tracked.child_run_ids]
    assert [c.data.params["impl"] for c in children] == [p.result.config.impl for p in result.points]
    for impl in IMPLEMENTATIONS:  # one curve against D per implementation on the parent
        history = client.get_metric_history(tracked.run_id, f"by_D/{impl}/steady_throughput")
        assert sorted(m.step for m in history) == [1, 2]


def test_cli_trains_with_each_implementation_to_the_same_loss(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    done = run_cli("train", "--impl", "shard_map", "--json", "--tracking-uri", store, *TINY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    trained = json.loads(done.stdout)
    assert trained["impl"] == "shard_map" and "with shard_map on 4 devices" in done.stderr
    assert MlflowClient(store).get_run(trained["run_id"]).data.params["impl"] == "shard_map"
    # One process, every implementation at D = 4 (and the D = 1 runs each compares with).
    done = run_cli("sweep", "--impl", "all", "--device-counts", "4", "--json", "--tracking-uri", store, *TINY,
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    runs = {(run["impl"], run["devices"]): run for run in json.loads(done.stdout)["runs"]}
    assert sorted(runs) == sorted((impl, d) for impl in IMPLEMENTATIONS for d in (1, 4))
    for impl in IMPLEMENTATIONS:
        assert runs[impl, 4]["final_loss"] == pytest.approx(trained["final_loss"], rel=1e-5)
        assert MlflowClient(store).get_run(runs[impl, 4]["run_id"]).data.params["impl"] == impl
