"""Pipeline parallelism (impl pipeline): a deeper MLP's layers in stages over a `stage` axis, the step
following a schedule table slot by slot; GPipe and 1F1B train as data parallelism does, and the bubble
counted from the table is (P − 1)/(M + P − 1)."""

import dataclasses
import json

import numpy as np
import pytest

from pmap_core.train import models, pipeline
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.pipeline import BACKWARD, FORWARD, IDLE, Slot, bubble_fraction, format_table, schedule_table
from pmap_core.train.plan import validate
from pmap_core.train.program import ProgramSpec
from pmap_core.validation import LabInputError

# The CLI's defaults (300 steps at η = 0.1): the deeper MLP's residual layers keep it off the edge of
# stability (models.residual_scale), so every correct order of the float sums ends within 1e-5.
DEEP = TrainConfig(model="mlp", layers=4, devices=4, global_batch=256, steps=300, chunk=25, learning_rate=0.1)


def _table(text: str) -> list[list[Slot]]:
    """A table written one line per stage: F0 a forward of micro-batch 0, B0 its backward, . idle."""
    def slot(cell: str) -> Slot:
        return Slot(IDLE) if cell == "." else Slot(FORWARD if cell[0] == "F" else BACKWARD, int(cell[1:]))

    rows = [[slot(cell) for cell in line.split()] for line in text.strip().splitlines()]
    return [list(column) for column in zip(*rows, strict=True)]


@pytest.mark.parametrize("stages, micro, schedule, expected", [
    (2, 2, "gpipe", """
        F0 F1 .  .  B1 B0
        .  F0 F1 B1 B0 .
    """),
    (2, 2, "1f1b", """
        F0 F1 .  B0 .  B1
        .  F0 B0 F1 B1 .
    """),
    (3, 2, "gpipe", """
        F0 F1 .  .  .  .  B1 B0
        .  F0 F1 .  .  B1 B0 .
        .  .  F0 F1 B1 B0 .  .
    """),
    (3, 3, "1f1b", """
        F0 F1 F2 .  .  B0 .  B1 .  B2
        .  F0 F1 .  B0 F2 B1 .  B2 .
        .  .  F0 B0 F1 B1 F2 B2 .  .
    """),
])
def test_schedule_tables_match_the_hand_written_ones(stages, micro, schedule, expected):
    table = schedule_table(stages, micro, schedule)
    assert table == _table(expected), "\n" + format_table(table)
    assert bubble_fraction(table) == pytest.approx((stages - 1) / (micro + stages - 1))


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("stages, micro", [(1, 4), (2, 1), (4, 8), (8, 3)])
def test_every_table_does_each_piece_of_work_once_in_two_m_plus_p_minus_one_slots(stages, micro, schedule):
    table = schedule_table(stages, micro, schedule)
    assert len(table) == 2 * (micro + stages - 1)
    for s in range(stages):
        work = sorted((slot.kind, slot.micro) for row in table if (slot := row[s]).kind != IDLE)
        assert work == sorted((kind, m) for kind in (FORWARD, BACKWARD) for m in range(micro))
    assert bubble_fraction(table) == pytest.approx((stages - 1) / (micro + stages - 1))


def test_gpipe_runs_its_backwards_in_reverse_the_last_micro_batch_first():
    # GPipe §2.3: the last micro-batch's forward ends the forward pass, so its backward starts the backward one.
    table = schedule_table(4, 8, "gpipe")
    for s in range(4):
        backwards = [row[s].micro for row in table if row[s].kind == BACKWARD]
        assert backwards == list(range(7, -1, -1))
    assert pipeline.held(table, "activations") == [0, 8, 8, 8]  # stage 0 recomputes from its rows of the batch
    assert pipeline.held(table, "cotangents") == [1, 1, 1, 0]


@pytest.mark.parametrize("stages, micro, gpipe, one_f_one_b", [
    (4, 8, (11, 11), (4, 18)), (2, 8, (9, 9), (2, 16)), (3, 2, (4, 4), (3, 5)), (1, 4, (4, 4), (4, 4))])
def test_lockstep_slots_are_counted_by_their_slowest_work(stages, micro, gpipe, one_f_one_b):
    # In lockstep a slot lasts its slowest work: under 1F1B the forwards share slots with backwards, so
    # 18 of its 22 slots (P = 4, M = 8) last a backward, against GPipe's 11: P·t_f + (2M + P − 2)·t_b.
    for schedule, expected in (("gpipe", gpipe), ("1f1b", one_f_one_b)):
        counts = pipeline.slot_counts(schedule_table(stages, micro, schedule))
        assert (counts.forward_slots, counts.backward_slots) == expected
        assert sum(expected) == 2 * (micro + stages - 1)
    one, g = (pipeline.slot_counts(schedule_table(4, 8, s)) for s in ("1f1b", "gpipe"))
    for t_b in (2.0, 3.0):  # a backward recomputes its forward: 2–3 forwards' time
        assert 1.2 <= one.step_time(1.0, t_b) / g.step_time(1.0, t_b) <= 1.33


def test_one_f_one_b_keeps_at_most_p_micro_batches_in_flight():
    stages, micro = 4, 8
    for schedule, most in (("gpipe", micro), ("1f1b", stages)):
        table = schedule_table(stages, micro, schedule)
        in_flight = [0] * stages
        peak = 0
        for row in table:
            for s, slot in enumerate(row):
                in_flight[s] += {FORWARD: 1, BACKWARD: -1, IDLE: 0}[slot.kind]
                peak = max(peak, in_flight[s])
        assert peak == most


def test_two_layers_keep_the_model_of_before():
    params = models.init_params("mlp", 8, 32, 0)
    assert models.LAYERS["mlp"] == (("w1", "b1"), ("w2", "b2")) == models.layer_names("mlp", 2)
    assert {n: p.shape for n, p in params.items()} == {"w1": (8, 32), "b1": (32,), "w2": (32,), "b2": ()}
    deep = models.init_params("mlp", 8, 32, 0, layers=4)
    assert {n: p.shape for n, p in deep.items()} == {
        "w1": (8, 32), "b1": (32,), "w2": (32, 32), "b2": (32,), "w3": (32, 32), "b3": (32,), "w4": (32,), "b4": ()}
    np.testing.assert_array_equal(deep["w1"], params["w1"])
    assert models.multiply_adds_per_sample("mlp", 8, 32) == 8 * 32 + 32
    assert models.multiply_adds_per_sample("mlp", 8, 32, 4) == 8 * 32 + 2 * 32 * 32 + 32


def test_the_two_layer_model_is_one_tanh_layer_and_a_linear_output_and_deeper_ones_add_residual_layers():
    import jax.numpy as jnp

    x = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    p = models.init_params("mlp", 8, 32, 0)
    expected = np.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    np.testing.assert_allclose(models.predict("mlp", {n: jnp.asarray(v) for n, v in p.items()}, x), expected,
                               rtol=1e-5, atol=1e-6)
    deep = models.init_params("mlp", 8, 32, 0, layers=4)
    h = np.tanh(x @ deep["w1"] + deep["b1"])
    for k in (2, 3):
        h = h + np.tanh(h @ deep[f"w{k}"] + deep[f"b{k}"]) / 4
    np.testing.assert_allclose(models.predict("mlp", {n: jnp.asarray(v) for n, v in deep.items()}, x),
                               h @ deep["w4"] + deep["b4"], rtol=1e-5, atol=1e-6)
    assert [models.residual_scale(k, 4) for k in range(4)] == [None, 0.25, 0.25, None]
    assert [models.residual_scale(k, 2) for k in range(2)] == [None, None]


@pytest.mark.parametrize("layers, devices, seed", [(4, 3, 0), (4, 1, 1), (8, 5, 0)])
def test_the_deeper_mlp_ends_where_it_does_on_four_devices_after_the_default_300_steps(layers, devices, seed):
    """Off the edge of stability, one order of the float sums against another stays within 1e-5."""
    base = dataclasses.replace(DEEP, layers=layers, seed=seed, global_batch=240)
    four = train(validate(dataclasses.replace(base, devices=4)), measure_scaling=False)
    other = train(validate(dataclasses.replace(base, devices=devices)), measure_scaling=False)
    np.testing.assert_allclose(other.losses, four.losses, rtol=1e-5)
    assert four.losses[-1] < 0.25 * four.losses[0]


@pytest.fixture(scope="module")
def data_parallel():
    return train(validate(DEEP), measure_scaling=False)


def test_a_deeper_mlp_trains_data_parallel_on_every_replicated_program(data_parallel):
    assert data_parallel.losses[-1] < 0.5 * data_parallel.losses[0]
    for impl in ("shard_map", "jit"):
        result = train(validate(dataclasses.replace(DEEP, impl=impl)), measure_scaling=False)
        np.testing.assert_allclose(result.losses, data_parallel.losses, rtol=1e-5)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_both_schedules_train_as_data_parallelism_does(schedule, data_parallel):
    config = dataclasses.replace(DEEP, impl="pipeline", pipeline_stages=4, microbatches=8, schedule=schedule)
    result = train(validate(config), measure_scaling=False)
    np.testing.assert_allclose(result.losses, data_parallel.losses, rtol=1e-5)
    assert set(result.params) == set(data_parallel.params)
    for name, value in data_parallel.params.items():
        np.testing.assert_allclose(result.params[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    f = result.footprint
    assert f.param_bytes_per_device < data_parallel.footprint.param_bytes_per_device
    assert f.comm_by_kind["collective-permute"] > 0  # activations forward, cotangents back, every slot


@pytest.mark.parametrize("devices, stages, layers, micro, schedule", [
    (4, 2, 4, 4, "gpipe"), (8, 4, 4, 8, "1f1b"), (6, 2, 4, 2, "1f1b"), (3, 3, 6, 4, "gpipe")])
def test_pipelines_side_by_side_on_a_data_axis_train_as_data_parallelism_does(devices, stages, layers, micro,
                                                                              schedule):
    base = dataclasses.replace(DEEP, layers=layers, devices=devices, global_batch=240, steps=100)
    flat = train(validate(base), measure_scaling=False)
    config = validate(dataclasses.replace(base, impl="pipeline", pipeline_stages=stages, microbatches=micro,
                                          schedule=schedule))
    assert config.derived()["mesh_data"] == devices // stages  # the data axis a run's record names
    piped = train(config, measure_scaling=False)
    np.testing.assert_allclose(piped.losses, flat.losses, rtol=1e-5)
    for name, value in flat.params.items():
        np.testing.assert_allclose(piped.params[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert piped.replica_max_diff == 0.0  # the pipelines' copies of each stage stay equal


@pytest.mark.parametrize("stages, micro", [(4, 8), (4, 16), (2, 4), (3, 5), (4, 2), (1, 3)])
def test_gpipe_keeps_every_micro_batch_and_1f1b_at_most_p_minus_s_plus_1_on_stage_s(stages, micro):
    gpipe, one = schedule_table(stages, micro, "gpipe"), schedule_table(stages, micro, "1f1b")
    assert pipeline.held(gpipe, "activations") == [0] + [micro] * (stages - 1)
    assert pipeline.held(one, "activations") == [0] + [min(micro, stages - s + 1) for s in range(1, stages)]
    assert pipeline.stash_slots(gpipe) == (micro if stages > 1 else 1, 1)
    assert pipeline.stash_slots(one) == (min(micro, stages) if stages > 1 else 1, 1)


def _spec(micro: int, schedule: str, stages: int = 4, devices: int = 4) -> ProgramSpec:
    return ProgramSpec("pipeline", "mlp", devices, 240 // devices, 8, 32, 2, layers=4, pipeline_stages=stages,
                       microbatches=micro, schedule=schedule)


@pytest.mark.parametrize("micro", [2, 4, 8, 16])
def test_the_compiled_peak_differs_by_the_activations_1f1b_does_not_keep(micro):
    """GPipe's stash is the whole batch's activations whatever M; 1F1B's P micro-batches shrink as 1/M:
    the compiled programs' peaks differ by exactly that, and not at all when M ≤ P."""
    peaks = pipeline.peak_bytes_by_schedule(_spec(micro, "gpipe"))
    saved = pipeline.stash_bytes(_spec(micro, "gpipe")) - pipeline.stash_bytes(_spec(micro, "1f1b"))
    assert pipeline.stash_bytes(_spec(micro, "gpipe")) == 4 * (240 + 240 // micro) * 32
    assert saved == 4 * max(0, micro - 4) * (240 // micro) * 32
    assert peaks["gpipe"] - peaks["1f1b"] == saved
    assert (peaks["1f1b"] < peaks["gpipe"]) == (micro > 4)


def test_the_cli_reports_the_bubble_and_the_data_parallel_result(capsys):
    from pmap_core.cli.commands import main

    common = ["train", "--model", "mlp", "--layers", "4", "--steps", "100", "--json", "--no-tracking"]
    assert main([*common, "--devices", "4"]) == 0
    flat = json.loads(capsys.readouterr().out)
    for schedule in ("gpipe", "1f1b"):
        assert main([*common, "--pipeline-stages", "4", "--microbatches", "8", "--schedule", schedule]) == 0
        piped = json.loads(capsys.readouterr().out)
        assert (piped["impl"], piped["devices"], piped["schedule"]) == ("pipeline", 4, schedule)
        assert piped["bubble_fraction"] == pytest.approx(3 / 11)
        assert piped["final_loss"] == pytest.approx(flat["final_loss"], rel=1e-5)
    assert "bubble_fraction" not in flat


def test_the_bubble_reaches_mlflow(tmp_path):
    from pmap_core.tracking.callback import result_metrics

    config = validate(dataclasses.replace(DEEP, impl="pipeline", pipeline_stages=2, microbatches=4, steps=2,
                                          chunk=2, devices=2))
    assert result_metrics(train(config, measure_scaling=False))["bubble_fraction"] == pytest.approx(1 / 5)


def test_a_pipeline_run_logs_its_mesh_data_over_the_stages(capsys, tmp_path):
    """D = 8 in 4 stages is a data axis of 2 beside a stage axis of 4, whether `--mesh` or the older flags say it."""
    from mlflow.tracking import MlflowClient

    from harness.processes import new_tracking_store
    from pmap_core.cli.commands import main

    uri = new_tracking_store(tmp_path / "mlflow.db")
    common = ["train", "--model", "mlp", "--layers", "4", "--steps", "2", "--chunk", "2", "--json",
              "--tracking-uri", uri]
    params = []
    for flags in (["--mesh", "data=2,stage=4"], ["--devices", "8", "--pipeline-stages", "4"]):
        assert main([*common, *flags]) == 0
        run = json.loads(capsys.readouterr().out)
        assert (run["impl"], run["devices"], run["mesh"]) == ("pipeline", 8, "data=2,stage=4")
        params.append(MlflowClient(uri).get_run(run["run_id"]).data.params)
    for logged in params:
        assert (logged["mesh_data"], logged["mesh_stage"], logged["mesh"]) == ("2", "4", "data=2,stage=4")
        assert logged["mesh_model"] == logged["mesh_seq"] == logged["mesh_expert"] == "1"
        assert logged["schedule"] == "gpipe" and "optimizer" not in logged and "context" not in logged


@pytest.mark.parametrize("devices, stages, mesh", [(1, 1, {"data": 1}), (3, 3, {"data": 1, "stage": 3}),
                                                    (6, 3, {"data": 2, "stage": 3})])
def test_the_mesh_multiplies_to_d(devices, stages, mesh):
    config = dataclasses.replace(DEEP, devices=devices, pipeline_stages=stages)
    assert config.mesh == mesh and config.mesh_data == mesh["data"]


@pytest.mark.parametrize("settings, code", [
    (dict(impl="pipeline", pipeline_stages=4, microbatches=8, schedule="zigzag"), "unknown_schedule"),
    (dict(impl="pipeline", pipeline_stages=4, optimizer="adam"), "pipeline_needs_mlp_sgd"),
    (dict(impl="pipeline", pipeline_stages=4, precision="mixed"), "pipeline_needs_mlp_sgd"),
    (dict(impl="pipeline", pipeline_stages=4, model="linear"), "pipeline_needs_mlp_sgd"),
    (dict(impl="pipeline", pipeline_stages=3), "pipeline_devices"),
    (dict(impl="pipeline", pipeline_stages=4, layers=6), "layers_not_divisible"),
    (dict(impl="pipeline", pipeline_stages=4, microbatches=3, global_batch=260), "microbatches_not_divisible"),
    (dict(pipeline_stages=4), "stages_need_pipeline"),
    (dict(microbatches=8), "stages_need_pipeline"),
    (dict(impl="tensor", mesh_model=2), "layers_need_replicated"),
    (dict(impl="jit", strategy="zero3"), "layers_need_replicated"),
    (dict(layers=1), "out_of_range"),
])
def test_what_the_pipeline_cannot_run_is_refused(settings, code):
    with pytest.raises(LabInputError) as refused:
        validate(dataclasses.replace(DEEP, **settings))
    assert refused.value.code == code


def test_every_new_refusal_has_a_text_in_both_languages():
    from labs.texts import table as text_table

    TEXTS = text_table("common")

    for code in ("unknown_schedule", "layers_need_replicated", "stages_need_pipeline", "pipeline_needs_mlp_sgd",
                 "pipeline_devices", "layers_not_divisible", "microbatches_not_divisible"):
        assert set(TEXTS[f"error.{code}"]) == {"en", "zh"}
