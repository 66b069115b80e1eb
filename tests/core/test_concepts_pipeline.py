"""The pipeline lab's core (`pmap_core.concepts.pipeline`): the schedule as records, cell for cell the table
the compiled step follows; the bubble counted from it against (P − 1)/(M + P − 1) and the Playbook's
(P − 1)/M; the micro-batches' inputs each device keeps (device 0 none, then GPipe M, 1F1B P − s + 1); the
settings refused by name; the lockstep fit against NumPy's least squares; the peak bytes of both compiled
schedules against their memory_analysis; the step time measured at each M of the ladder; the data axis a
D ≥ 2P allows, and the data × stage pipeline trained: its bytes per mesh axis against the ring formula
worked out by hand, its final loss against the unsplit model's on one device, at D = 3, 4, 5 and 6 (P = 1, 2, 3)."""

import dataclasses

import numpy as np
import pytest

from pmap_core.concepts import pipeline
from pmap_core.train import pipeline as train_pipeline
from pmap_core.train import programs
from pmap_core.validation import LabInputError

SIZES = [(1, 1), (1, 4), (2, 1), (2, 2), (3, 2), (3, 5), (4, 8), (5, 3), (8, 16)]


@pytest.mark.parametrize("schedule", train_pipeline.SCHEDULES)
@pytest.mark.parametrize("stages, micro", SIZES)
def test_the_cells_are_the_table_the_compiled_step_follows(stages, micro, schedule):
    table = train_pipeline.schedule_table(stages, micro, schedule)
    cells = pipeline.schedule_cells(stages, micro, schedule)
    assert len(cells) == stages * len(table) == stages * 2 * (micro + stages - 1)
    for cell in cells:
        slot = table[cell.slot][cell.device]
        kind = {train_pipeline.FORWARD: "forward", train_pipeline.BACKWARD: "backward",
                train_pipeline.IDLE: "idle"}[slot.kind]
        assert (cell.kind, cell.micro) == (kind, None if kind == "idle" else slot.micro)
        assert cell.label == ("" if kind == "idle" else str(slot))
    rows = pipeline.schedule_rows(cells)
    assert [row["device"] for row in rows] == list(range(stages))
    assert all(row[f"t{t}"] == (str(table[t][row["device"]]) if table[t][row["device"]].kind else "·")
               for row in rows for t in range(len(table)))


@pytest.mark.parametrize("schedule", train_pipeline.SCHEDULES)
@pytest.mark.parametrize("stages, micro", SIZES)
def test_the_bubble_counted_is_the_formulas(stages, micro, schedule):
    counted = pipeline.bubble(stages, micro, schedule)
    assert counted.slots == 2 * (micro + stages - 1) and counted.busy_per_device == 2 * micro
    assert counted.idle_cells == 2 * (stages - 1) * stages
    assert counted.counted == pytest.approx((stages - 1) / (micro + stages - 1)) == pytest.approx(counted.formula)
    assert counted.counted == train_pipeline.schedule_bubble(stages, micro, schedule)
    assert counted.playbook_ratio == pytest.approx((stages - 1) / micro)
    # One meaning of "kept" everywhere: inputs held from arrival to backward. Device 0 keeps none (its backward
    # recomputes from its rows of the batch); the interview and sheet 10 ask for the second stage's.
    expected = [0] + ([micro] * (stages - 1) if schedule == "gpipe"
                      else [min(stages - s + 1, micro) for s in range(1, stages)])
    assert list(counted.kept) == expected == train_pipeline.held(
        train_pipeline.schedule_table(stages, micro, schedule), "activations")
    assert counted.most_kept == (0 if stages == 1 else micro if schedule == "gpipe" else min(stages, micro))


@pytest.mark.parametrize("args, code", [
    ((2, 4, 4, 8, "gpipe", 8, 32), "pipeline_stages_over_devices"),
    ((4, 4, 6, 8, "gpipe", 8, 32), "layers_not_divisible"),
    ((4, 4, 4, 3, "gpipe", 6, 32), "pipeline_rows_not_divisible"),
    ((4, 4, 4, 8, "zigzag", 8, 32), "unknown_schedule"),
    ((4, 4, 4, 65, "gpipe", 8, 32), "out_of_range"),
    ((4, 4, 4, 64, "gpipe", 1028, 32), "out_of_range"),   # b past MAX_ROWS
    ((4, 4, 1, 8, "gpipe", 8, 32), "out_of_range"),
    ((4, 0, 4, 8, "gpipe", 8, 32), "out_of_range"),
    ((9, 1, 2, 8, "gpipe", 8, 32), "too_many_devices"),
    ((8, 8, 16, 64, "gpipe", 1024, 1024), "too_much_work"),
])
def test_settings_that_do_not_fit_are_refused_by_name(args, code):
    with pytest.raises(LabInputError) as refused:
        pipeline.check_settings(*args, available=8)
    assert refused.value.code == code


def test_the_work_of_one_timed_call_is_bounded():
    per_sample = 8 * 64 + 6 * 64 * 64 + 64  # the limit's unit: F·H, six H·H, then H (train.models)
    settings = pipeline.check_settings(8, 4, 8, 8, "gpipe", 16, 64, available=8)  # the page's defaults at D = 8
    assert pipeline.STEPS * 8 * 16 * per_sample <= pipeline.MAX_WORK and settings.layers == 8
    with pytest.raises(LabInputError) as refused:
        pipeline.check_settings(8, 8, 16, 64, "gpipe", 1024, 1024, available=8)
    per_sample = 8 * 1024 + 14 * 1024 * 1024 + 1024
    assert refused.value.params == {"work": pipeline.STEPS * 64 * 1024 * per_sample, "limit": pipeline.MAX_WORK}


def test_the_rows_refusal_suggests_the_next_b_that_splits():
    with pytest.raises(LabInputError) as refused:
        pipeline.check_settings(3, 3, 3, 4, "1f1b", 4, 16, available=8)
    assert refused.value.params == {"stages": 3, "rows": 4, "batch": 16, "suggestion": 6}


def test_a_global_batch_that_splits_over_the_stages_is_not_refused_for_b():
    # M = 2, b = 2, P = 4: the global batch of 4 rows splits over the 4 devices, and it trains; the ladder
    # leaves out M = 1, whose 2 rows would not.
    settings = pipeline.check_settings(4, 4, 4, 2, "gpipe", 2, 16, available=8)
    assert settings.config().global_batch == 4 and settings.ladder == (2,)
    assert pipeline.microbatch_ladder(8, 2, 4) == [2, 4, 8]
    assert pipeline.peak_memory(settings)[0].peak_bytes


@pytest.mark.parametrize("devices, stages", [(1, 1), (3, 3), (8, 4)])
def test_settings_that_fit_make_a_valid_pipeline_config(devices, stages):
    settings = pipeline.check_settings(devices, stages, 2 * stages, 4, "1f1b", 2 * stages, 16, available=8)
    config = settings.config()
    assert (config.impl, config.devices, config.pipeline_stages, config.global_batch) == (
        "pipeline", stages, stages, 4 * 2 * stages)
    assert settings.config(microbatches=1, schedule="gpipe").global_batch == 2 * stages


@pytest.mark.parametrize("most, ladder", [(1, [1]), (2, [1, 2]), (3, [1, 2, 3]), (8, [1, 2, 4, 8]),
                                          (12, [1, 2, 4, 8, 12])])
def test_the_microbatch_ladder(most, ladder):
    assert pipeline.microbatch_ladder(most) == ladder


def _points(stages: int, schedule: str, seconds: dict[int, float]) -> list[pipeline.StepPoint]:
    counts = {m: pipeline.slot_counts(stages, m, schedule) for m in seconds}
    return [pipeline.StepPoint(m, m, 2 * (m + stages - 1), counts[m].forward_slots, counts[m].backward_slots, t, 0.0)
            for m, t in seconds.items()]


def test_the_lockstep_model_of_1f1b_is_fitted_exactly_and_is_not_the_papers():
    # A slot lasts its slowest work: 1F1B at P = 4 costs P·t_f + (2M + P − 2)·t_b, not (M + P − 1)(t_f + t_b).
    stages, t_f, t_b = 4, 1e-3, 2.5e-3
    seconds = {m: stages * t_f + (2 * m + stages - 2) * t_b for m in (1, 2, 4, 8)}
    points = _points(stages, "1f1b", seconds)
    fitted = pipeline.fit_slot_times(points)
    assert fitted == (pytest.approx(t_f), pytest.approx(t_b), pytest.approx(t_f + t_b))
    fit = pipeline.StepFit(stages, 8, "1f1b", tuple(points), *fitted, 8, True)
    assert fit.separable and fit.worst_relative_error == pytest.approx(0, abs=1e-9)
    assert fit.asynchronous_s(8) == pytest.approx(11 * (t_f + t_b))
    assert fit.fitted_s(8) == pytest.approx(seconds[8]) and fit.fitted_s(8) > fit.asynchronous_s(8)
    assert fit.lockstep_s(8, "gpipe") == pytest.approx(11 * (t_f + t_b))
    assert 1.2 < fit.lockstep_s(8, "1f1b") / fit.lockstep_s(8, "gpipe") < 1.3


def test_gpipe_fits_only_the_sum_of_a_forward_and_a_backward():
    stages, pair = 4, 3e-3
    points = _points(stages, "gpipe", {m: (m + stages - 1) * pair for m in (1, 2, 4, 8)})
    t_f, t_b, fitted = pipeline.fit_slot_times(points)
    assert (t_f, t_b) == (None, None) and fitted == pytest.approx(pair)
    fit = pipeline.StepFit(stages, 8, "gpipe", tuple(points), t_f, t_b, fitted, 8, True)
    assert not fit.separable and fit.worst_relative_error == pytest.approx(0, abs=1e-9)
    assert fit.lockstep_s(8, "1f1b") is None and fit.lockstep_s(8, "gpipe") == pytest.approx(11 * pair)


def test_the_fit_is_numpys_least_squares():
    stages = 3
    seconds = {1: 0.9e-3, 2: 1.6e-3, 4: 1.9e-3, 8: 4.1e-3, 16: 7.0e-3}
    points = _points(stages, "1f1b", seconds)
    counts = np.array([[p.forward_slots, p.backward_slots] for p in points], float)
    (t_f, t_b), *_ = np.linalg.lstsq(counts, np.array(list(seconds.values())), rcond=None)
    assert pipeline.fit_slot_times(points)[:2] == (pytest.approx(t_f), pytest.approx(t_b))


@pytest.mark.parametrize("stages, cores, simulated, shows", [
    (4, 2, True, False), (2, 2, True, True), (1, 1, True, True), (8, 1, False, True)])
def test_the_bubble_shows_in_time_with_a_core_per_stage_or_real_devices(stages, cores, simulated, shows):
    assert pipeline.shows_bubble_in_time(stages, cores, simulated) is shows


@pytest.mark.parametrize("stages, micro", [(1, 3), (2, 4), (3, 2)])
def test_the_peak_bytes_are_each_compiled_programs_memory_analysis(stages, micro):
    settings = pipeline.check_settings(stages, stages, stages if stages > 1 else 2, micro, "gpipe", stages * 2, 8,
                                       available=8)
    rows = pipeline.peak_memory(settings)
    assert [row.schedule for row in rows] == list(train_pipeline.SCHEDULES)
    for row in rows:
        config = dataclasses.replace(settings, schedule=row.schedule).config(steps=1)
        stats = programs.build(config.program_spec(1)).compiled.memory_analysis()
        assert row.peak_bytes == (stats.argument_size_in_bytes + stats.output_size_in_bytes
                                  - stats.alias_size_in_bytes + stats.temp_size_in_bytes)
        assert row.temp_bytes == stats.temp_size_in_bytes
        kept = 0 if stages == 1 else micro if row.schedule == "gpipe" else min(stages, micro)
        assert (row.kept, row.stash_model_bytes) == (kept, kept * settings.rows * settings.hidden * 4)
    if stages == 1:  # nothing kept, nothing saved: the page blames no compiler
        assert pipeline.memory_reason(rows) == "same_none"
    peaks = {row.schedule: row.peak_bytes for row in rows}
    verdict = pipeline.memory_verdict(rows)
    assert verdict == ("same" if peaks["gpipe"] == peaks["1f1b"] else min(peaks, key=peaks.get))


def test_the_memory_verdict():
    def row(schedule, peak):
        return pipeline.MemoryRow(schedule, peak, 0, 0, 1, 0)

    assert pipeline.memory_verdict([row("gpipe", 10), row("1f1b", 8)]) == "1f1b"
    assert pipeline.memory_verdict([row("gpipe", 8), row("1f1b", 10)]) == "gpipe"
    assert pipeline.memory_verdict([row("gpipe", 8), row("1f1b", 8)]) == "same"
    assert pipeline.memory_verdict([row("gpipe", None), row("1f1b", 8)]) == "unknown"


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_the_step_time_is_measured_at_each_m_and_fitted(stages):
    settings = pipeline.check_settings(stages, stages, 2 * stages, 4, "1f1b", stages, 8, available=8)
    heard = []
    fit = pipeline.measure_step_times(settings, on_point=lambda p, i, n: heard.append((p.microbatches, i, n)),
                                      repeats=1)
    assert heard == [(1, 0, 3), (2, 1, 3), (4, 2, 3)]
    assert [(p.microbatches, p.global_batch, p.slots) for p in fit.points] == [
        (m, m * stages, 2 * (m + stages - 1)) for m in (1, 2, 4)]
    assert all(p.step_time_s > 0 for p in fit.points)
    assert [(p.forward_slots, p.backward_slots) for p in fit.points] == [
        (c.forward_slots, c.backward_slots) for c in (pipeline.slot_counts(stages, m, "1f1b") for m in (1, 2, 4))]
    assert (fit.t_forward_s, fit.t_backward_s, fit.t_pair_s) == pipeline.fit_slot_times(fit.points)
    rows = fit.chart_rows()
    assert [r["series"] for r in rows] == ["measured", "fit"] * 3
    assert [r["step_time_ms"] for r in rows[1::2]] == pytest.approx([fit.fitted_s(m) * 1e3 for m in (1, 2, 4)])


def _stage_params(features: int, hidden: int, layers: int, stages: int) -> list[int]:
    """Parameters of each stage, by hand: F·H + H, then H·H + H per hidden layer, then H + 1."""
    sizes = [features * hidden + hidden] + [hidden * hidden + hidden] * (layers - 2) + [hidden + 1]
    per = layers // stages
    return [sum(sizes[s * per:(s + 1) * per]) for s in range(stages)]


@pytest.mark.parametrize("devices, stages, layers, replicas", [(8, 4, 4, 2), (8, 2, 4, 4), (3, 1, 2, 3),
                                                                (5, 2, 4, 2), (64, 16, 16, 4)])
def test_a_data_axis_beside_the_pipeline(devices, stages, layers, replicas):
    axis = pipeline.data_axis(devices, stages, layers, 32)
    assert (axis.replicas, axis.used, axis.unused) == (replicas, replicas * stages, devices - replicas * stages)
    stage_bytes = 4 * max(_stage_params(pipeline.FEATURES, 32, layers, stages))
    assert axis.stage_param_bytes == stage_bytes
    assert axis.allreduce_bytes == pytest.approx(2 * (replicas - 1) / replicas * stage_bytes)


@pytest.mark.parametrize("devices, stages", [(1, 1), (2, 2), (3, 2), (7, 4)])
def test_no_data_axis_below_two_pipelines(devices, stages):
    assert pipeline.data_axis(devices, stages, 4, 32) is None


# --- the data × stage pipeline, trained ------------------------------------------------------------------


def _one_device_loss(settings: pipeline.Settings, replicas: int) -> float:
    """The reference: the same model, batch, initial parameters and steps, unsplit on one device."""
    from pmap_core.train.config import TrainConfig
    from pmap_core.train.loop import train
    from pmap_core.train.plan import validate

    batch = replicas * settings.microbatches * settings.rows
    config = validate(TrainConfig(model="mlp", impl="jit", devices=1, layers=settings.layers, hidden=settings.hidden,
                                  features=pipeline.FEATURES, global_batch=batch, steps=pipeline.STEPS,
                                  chunk=pipeline.STEPS))
    return train(config, measure_scaling=False).losses[-1]


@pytest.mark.parametrize("devices, stages, layers, micro, schedule, rows, hidden", [
    (4, 2, 4, 4, "gpipe", 4, 16),    # the page test's settings: X = 2 pipelines of 2 stages
    (5, 2, 4, 3, "1f1b", 2, 8),      # odd D: X = 2, one device left over
    (3, 1, 2, 4, "1f1b", 2, 8),      # one stage: X = 3 (odd), nothing to ppermute
    (6, 3, 6, 2, "gpipe", 3, 8),     # odd P
])
def test_the_data_axis_run_sends_the_ring_formulas_bytes_and_trains_as_data_parallelism(
        devices, stages, layers, micro, schedule, rows, hidden):
    settings = pipeline.check_settings(devices, stages, layers, micro, schedule, rows, hidden, available=8)
    heard = []
    run = pipeline.measure_data_axis(devices, settings, on_run=heard.append)
    replicas = devices // stages
    assert heard == ["pipeline", "data_parallel"]
    assert (run.replicas, run.stages, run.axis.used, run.global_batch) == (
        replicas, stages, replicas * stages, replicas * micro * rows)
    # The data axis: one all-reduce per step of the (padded) largest stage's gradient and the loss, on a ring.
    stage_bytes = 4 * max(_stage_params(pipeline.FEATURES, hidden, layers, stages))
    ring = 2 * (replicas - 1) / replicas
    assert run.data_reductions == 1 and run.data_shapes == (f"f32[{stage_bytes // 4}]", "f32[]")
    assert run.data_bytes == pytest.approx(ring * (stage_bytes + 4)) == pytest.approx(run.formula_data_bytes)
    assert run.axis.allreduce_bytes == pytest.approx(ring * stage_bytes)
    # The stage axis: two ppermutes of (rows, H) float32 per slot, 2(M + P − 1) slots; the loss summed once.
    slots = 2 * (micro + stages - 1)
    assert run.slots == slots
    expected = (2 * slots, 2 * slots * rows * hidden * 4) if stages > 1 else (0, 0)
    assert (run.permutes_per_step, run.permute_bytes) == expected
    assert run.formula_permute_bytes == expected[1]
    assert run.stage_reduce_bytes == pytest.approx(2 * (stages - 1) / stages * 4)
    assert run.comm_bytes_per_step == pytest.approx(run.data_bytes + run.permute_bytes + run.stage_reduce_bytes)
    assert run.collectives_per_step == run.data_reductions + run.stage_reductions + run.permutes_per_step
    assert [row["measured_bytes"] for row in run.traffic_rows()] == pytest.approx(
        [row["formula_bytes"] for row in run.traffic_rows()])
    # The same training as data parallelism, and as the unsplit model on one device.
    reference = _one_device_loss(settings, replicas)
    assert run.pipeline_loss == pytest.approx(reference, rel=pipeline.LOSS_RTOL)
    assert run.data_parallel_loss == pytest.approx(reference, rel=pipeline.LOSS_RTOL)
    assert run.loss_gap == pytest.approx(abs(run.pipeline_loss - run.data_parallel_loss) / run.data_parallel_loss)
    assert run.data_parallel_collectives_per_step == 1  # pmap: the gradients and the loss in one all-reduce
    assert run.scaling_ratio == pytest.approx(run.baseline_step_s / run.step_s)
    assert run.per_collective_s == pytest.approx(run.step_s / run.collectives_per_step)


def test_the_ring_share_and_the_mesh_groups():
    assert [pipeline.ring_share(x) for x in (1, 2, 3, 4)] == pytest.approx([0, 1, 4 / 3, 1.5])
    assert pipeline.axis_groups(2, 3, "data") == {frozenset({0, 3}), frozenset({1, 4}), frozenset({2, 5})}
    assert pipeline.axis_groups(2, 3, "stage") == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}

    def collective(kind, groups):
        return pipeline.Collective(kind, "c", ("f32[]",), 4, None, groups)

    assert pipeline.mesh_axis_of(collective("all-reduce", ((0, 3), (1, 4), (2, 5))), 2, 3) == "data"
    assert pipeline.mesh_axis_of(collective("all-reduce", ((3, 4, 5), (0, 1, 2))), 2, 3) == "stage"
    assert pipeline.mesh_axis_of(collective("all-reduce", ()), 3, 1) == "data"  # one group of every device
    assert pipeline.mesh_axis_of(collective("all-reduce", ((0, 1),)), 2, 3) is None
    assert pipeline.mesh_axis_of(collective("all-reduce", None), 2, 3) is None
    assert pipeline.mesh_axis_of(collective("collective-permute", None), 2, 3) == "stage"


def test_no_data_axis_run_below_two_pipelines_nor_past_the_work_limit():
    settings = pipeline.check_settings(3, 2, 4, 4, "gpipe", 4, 16, available=8)
    with pytest.raises(LabInputError) as refused:
        pipeline.measure_data_axis(3, settings)
    assert refused.value.code == "pipeline_no_data_axis" and refused.value.params == {
        "stages": 2, "needed": 4, "devices": 3}
    big = pipeline.check_settings(8, 1, 2, 16, "gpipe", 1024, 128, available=8)  # one pipeline fits the limit
    with pytest.raises(LabInputError) as refused:
        pipeline.measure_data_axis(8, big)  # eight of them do not
    assert refused.value.code == "too_much_work"
