"""Hybrid sharded data parallelism (HSDP, `--mesh replica=R,data=X` with a ZeRO strategy; `train.zero`): the
state sharded over each data group and replicated over the R groups trains as one device does; each device holds
1/X of the state; the compiled step reduce-scatters over data and all-reduces over replica, the bytes the formula
gives. Two processes of four devices, the replica axis across them: tests/system/test_hsdp_processes.py."""

from __future__ import annotations

import dataclasses
import functools
import json

import numpy as np
import pytest

from pmap_core import hlo
from pmap_core.train import hsdp, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

# Wide enough that the padding to a multiple of the data axis is under 1% of the state.
HSDP = TrainConfig(model="mlp", devices=8, global_batch=64, hidden=64, features=4, steps=10, chunk=10, impl="jit",
                   optimizer="adam", strategy="zero3", mesh_replica=2)
DATA_GROUPS = ((0, 1, 2, 3), (4, 5, 6, 7))   # the data axis: four neighbouring devices in each group
REPLICA_GROUPS = ((0, 4), (1, 5), (2, 6), (3, 7))  # the replica axis: one device of each group


@functools.cache
def trained(config: TrainConfig):
    return train(validate(config), measure_scaling=False)


def test_hsdp_trains_as_one_device_does():
    one, hsdp = trained(dataclasses.replace(HSDP, devices=1, mesh_replica=1)), trained(HSDP)
    assert validate(HSDP).mesh == {"replica": 2, "data": 4}
    np.testing.assert_allclose(hsdp.losses, one.losses, rtol=1e-5)
    for name, value in one.params.items():
        np.testing.assert_allclose(hsdp.params[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert hsdp.replica_max_diff == 0.0  # the two groups' copies of each shard stay equal


def test_each_device_holds_a_quarter_of_the_state():
    """1/|data| of the parameters, gradient and Adam's moments (not 1/D: the groups repeat it)."""
    hsdp, whole = trained(HSDP).footprint, trained(dataclasses.replace(HSDP, devices=1, mesh_replica=1)).footprint
    for part in ("param_bytes_per_device", "grad_bytes_per_device", "opt_bytes_per_device"):
        assert getattr(hsdp, part) / getattr(whole, part) == pytest.approx(1 / 4, rel=0.03), part


def test_the_step_reduce_scatters_over_data_and_all_reduces_over_replica():
    program = programs.build(validate(HSDP).program_spec(HSDP.chunk))
    found = hlo.collectives(program.compiled.as_text())
    groups = {kind: {c.groups for c in found if c.kind == kind} for kind in ("reduce-scatter", "all-reduce")}
    assert groups["reduce-scatter"] == {DATA_GROUPS}
    assert REPLICA_GROUPS in groups["all-reduce"]
    # The replica axis's bytes: each device's 1/4 shard of the gradient, all-reduced over 2 groups.
    replica = sum(c.operand_bytes for c in found if c.kind == "all-reduce" and c.groups == REPLICA_GROUPS)
    psi = trained(HSDP).footprint.param_count
    assert replica == pytest.approx(hsdp.replica_comm_bytes(psi, 4, 2, "zero3"), rel=0.05)
    f = trained(HSDP).footprint
    assert f.comm_bytes_per_step == pytest.approx(f.model_comm_bytes_per_step, rel=0.05)


def test_the_cli_trains_on_a_replica_axis_and_records_the_mesh(capsys, tmp_path):
    from mlflow.tracking import MlflowClient

    from harness.processes import new_tracking_store
    from pmap_core.cli.commands import main

    uri = new_tracking_store(tmp_path / "mlflow.db")
    assert main(["train", "--model", "mlp", "--hidden", "64", "--features", "4", "--global-batch", "64", "--steps",
                 "10", "--chunk", "10", "--optimizer", "adam", "--strategy", "zero3", "--mesh", "replica=2,data=4",
                 "--json", "--tracking-uri", uri]) == 0
    run = json.loads(capsys.readouterr().out)
    assert (run["impl"], run["devices"], run["mesh"]) == ("jit", 8, "replica=2,data=4")
    assert run["final_loss"] == pytest.approx(trained(HSDP).final_loss, rel=1e-6)
    logged = MlflowClient(uri).get_run(run["run_id"]).data.params
    assert (logged["mesh_replica"], logged["mesh_data"], logged["strategy"]) == ("2", "4", "zero3")


@pytest.mark.parametrize("changes, code", [(dict(mesh_replica=3), "mesh_not_dividing"),
                                           (dict(impl="pmap", strategy="dp", optimizer="sgd"), "replica_needs_jit")])
def test_a_replica_axis_that_cannot_run_is_refused(changes, code):
    with pytest.raises(LabInputError) as refused:
        validate(dataclasses.replace(HSDP, **changes))
    assert refused.value.code == code


def test_the_refusal_has_a_text_in_both_languages():
    from labs.texts import table as text_table

    texts = text_table("common")
    for code in ("mesh_not_dividing", "replica_needs_jit"):
        assert {"en", "zh"} <= set(texts[f"error.{code}"])
