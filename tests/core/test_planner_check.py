"""The planner at the lab's own scale (`concepts.planner.check`): the lab's transformer as a planner shape, only the
layouts and variants the lab can run, each as the `TrainConfig` and the `python -m pmap_core train` argv that run it,
and the top plans on 8 devices compiled beside their predictions: memory within 20% of the compiler's peak, bytes per
mesh axis within 5% of the HLO's. Run with `-s` to see the figures."""

from __future__ import annotations

import pytest

from pmap_core.cli import training as cli_training
from pmap_core.concepts.planner import check, search
from pmap_core.concepts.planner.predict import Layout
from pmap_core.train import programs, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.mesh import DATA_AXIS, MODEL_AXIS, SEQ_AXIS, STAGE_AXIS
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

MEMORY_TOLERANCE = 0.20   # predicted memory per device against the compiler's peak
BYTES_TOLERANCE = 0.05    # predicted bytes per axis against the HLO's


@pytest.mark.parametrize("dims, layers", [
    (transformer.Dims(), 2), (transformer.Dims(d_model=48, heads=6, seq_len=16, vocab=40), 3),
    (transformer.Dims(d_model=16, heads=2, seq_len=8, vocab=24, experts=4, top_k=2), 2)])
def test_the_lab_model_counts_the_parameters_init_params_makes(dims, layers):
    counted = sum(int(value.size) for value in transformer.init_params(dims, layers, seed=0).values())
    assert check.lab_model(dims, layers).params == counted


def test_the_lab_workload_is_what_the_lab_trains():
    workload = check.lab_workload()
    assert (workload.sequences, workload.seq_len, workload.precision, workload.optimizer) == (256, 32, "float32", "sgd")
    assert TrainConfig().optimizer == workload.optimizer


def test_every_lab_layout_and_every_plan_runs_in_the_lab():
    layouts = check.lab_layouts(8)
    axes = {tuple(axis for axis in (STAGE_AXIS, SEQ_AXIS, MODEL_AXIS) if layout.size(axis) > 1) for layout in layouts}
    assert axes == {(), (STAGE_AXIS,), (SEQ_AXIS,), (MODEL_AXIS,)}  # no expert axis: the model has no experts
    assert {layout.sequence_parallel for layout in layouts if layout.model > 1} == {True, False}
    result = check.lab_plan(8)
    assert result.plans and not result.unfit
    runnable = dict(devices=8, global_batch=256, dims=check.LAB_DIMS, layers=2)
    for plan in result.plans:
        assert check.runnable(plan.layout, **runnable)
        config = check.train_config_of(plan.layout, 8)
        assert programs.resolve(config).name in programs.LAB_PROGRAMS
    # Every variant the search tried for a layout is one the lab runs (`search.plan`'s `runnable`).
    tried = search.variants(check.lab_model(), Layout(data=4, model=2), check.lab_workload(),
                            runnable=lambda v: check.runnable(v, **runnable))
    assert tried == [Layout(data=4, model=2)]
    data_only = search.variants(check.lab_model(), Layout(data=8), check.lab_workload(),
                                runnable=lambda v: check.runnable(v, **runnable))
    assert {(v.zero, v.remat) for v in data_only} == {(0, "none"), (0, "selective"), (0, "full"), (1, "none"),
                                                      (2, "none"), (3, "full")}


@pytest.mark.parametrize("layout, impl, changes", [
    (Layout(data=8), "pmap", {}),
    (Layout(data=8, remat="selective"), "pmap", {"remat": "selective"}),
    (Layout(data=8, zero=2, microbatches=2), "jit", {"strategy": "zero2", "accum_steps": 2}),
    (Layout(data=8, zero=3, remat="full"), "jit", {"strategy": "zero3"}),
    (Layout(data=4, model=2, sequence_parallel=False), "tensor", {"mesh_model": 2, "sequence_parallel": "off"}),
    (Layout(data=2, model=4), "tensor", {"mesh_model": 4, "sequence_parallel": "on"}),
    (Layout(data=4, seq=2), "context", {"mesh_seq": 2, "context": "allgather"}),
    (Layout(data=4, stage=2, remat="full", microbatches=8), "pipeline",
     {"pipeline_stages": 2, "microbatches": 8, "schedule": "1f1b"}),
])
def test_a_layouts_settings_validate_and_its_command_parses_to_the_same_config(layout, impl, changes):
    settings = check.train_settings(layout, 8)
    assert settings["impl"] == impl and {name: settings[name] for name in changes} == changes
    config = validate(TrainConfig(**settings))
    argv = check.train_command(layout, 8)
    assert argv[:4] == ["python", "-m", "pmap_core", "train"]
    parsed, _ = cli_training.join_and_configure(cli_training.parse(argv[3:]))
    assert validate(parsed) == config, argv


def test_the_command_of_a_model_with_experts_selects_the_expert_program():
    dims = transformer.Dims(d_model=16, heads=2, seq_len=8, vocab=24, experts=4, top_k=2)
    assert {layout.expert for layout in check.lab_layouts(4, dims=dims)} == {1, 2, 4}
    for layout in (Layout(data=4), Layout(data=2, expert=2)):
        config = validate(TrainConfig(**check.train_settings(layout, 4, dims=dims)))
        assert config.impl == "expert" and config.mesh_expert == layout.expert
        parsed, _ = cli_training.join_and_configure(cli_training.parse(check.train_command(layout, 4, dims=dims)[3:]))
        assert validate(parsed) == config


@pytest.mark.parametrize("layout, code", [
    (Layout(data=2, stage=2, model=2), "plan_not_runnable"),           # two axes beside data
    (Layout(data=4, model=2, zero=1), "plan_not_runnable"),            # ZeRO beside a model axis
    (Layout(data=4, seq=2, remat="full"), "plan_not_runnable"),        # remat beside a seq axis
    (Layout(data=4, stage=2), "plan_not_runnable"),                    # a pipeline always recomputes
    (Layout(data=8, zero=3), "plan_not_runnable"),                     # ZeRO-3 recomputes each layer
    (Layout(data=8, zero=1, remat="selective"), "plan_not_runnable"),  # remat with a sharded state
    (Layout(data=4, expert=2), "plan_not_runnable"),                   # experts without a model that has them
    (Layout(data=4, stage=2, remat="full", virtual=2), "plan_not_runnable"),
    (Layout(data=8, remat="most"), "plan_not_runnable"),
    (Layout(data=4), "plan_devices"),
    (Layout(data=8, zero=9), "out_of_range"),
    (Layout(data=8, microbatches=10**30), "out_of_range"),
    (Layout(data=-8), "out_of_range"),
])
def test_a_layout_the_lab_cannot_run_is_refused_with_a_code(layout, code):
    with pytest.raises(LabInputError) as refused:
        check.train_settings(layout, 8)
    assert refused.value.code == code
    with pytest.raises(LabInputError):
        check.train_command(layout, 8)


@pytest.mark.parametrize("call", [
    lambda: check.lab_plan(10**30), lambda: check.lab_plan(9), lambda: check.lab_plan(0),
    lambda: check.lab_plan(8, global_batch=10**30), lambda: check.lab_layouts(8, layers=10**9),
    lambda: check.lab_plan(8, dims=transformer.Dims(seq_len=10**12)),
    lambda: check.check_plan(Layout(data=10**30), 10**30), lambda: check.check_top(8, count=10**30),
    lambda: check.check_top(2**64), lambda: check.train_command(Layout(data=8), 8, global_batch=-1),
])
def test_huge_or_odd_integers_are_refused_before_anything_compiles(call):
    compiled = programs.build_planned.cache_info().misses
    with pytest.raises(LabInputError):
        call()
    assert programs.build_planned.cache_info().misses == compiled


def test_collectives_are_put_on_the_mesh_axis_their_groups_span():
    pipeline = Layout(data=4, stage=2)  # device k at (k // 2, k % 2)
    assert check.group_axis((0, 2, 4, 6), pipeline) == DATA_AXIS
    assert check.group_axis((0, 1), pipeline) == STAGE_AXIS
    assert check.group_axis((3,), pipeline) is None
    context = Layout(seq=8)  # one data position: the gradient's all-reduce over seq is the data-parallel group's
    assert check.group_axis(tuple(range(8)), context, "all-reduce") == DATA_AXIS
    assert check.group_axis(tuple(range(8)), context, "all-gather") == SEQ_AXIS
    assert check.group_axis(tuple(range(8)), Layout(data=4, seq=2), "all-gather") == DATA_AXIS


def _print(checked: check.CheckedPlan) -> None:
    predicted, found = checked.predicted_bytes, checked.hlo_bytes
    bytes_by_axis = ", ".join(f"{axis} {predicted.get(axis, 0):,.0f} vs {found.get(axis, 0):,.0f}"
                              for axis in checked.axis_ratios)
    print(f"\n  {checked.layout.label():45} memory {checked.prediction.memory.total:,.0f} predicted vs "
          f"{checked.compiled_peak_bytes:,} compiled ({checked.memory_ratio:.3f}); bytes per step predicted vs HLO: "
          f"{bytes_by_axis or 'none'}; reasons {', '.join(checked.reasons) or 'none'}")


def test_the_top_three_plans_on_8_devices_match_their_compiled_programs():
    top = check.check_top(8, 3)
    assert len(top) == 3
    for checked in top:
        _print(checked)
        assert checked.compiled_peak_bytes is not None
        assert abs(checked.prediction.memory.total - checked.compiled_peak_bytes) <= (
            MEMORY_TOLERANCE * checked.compiled_peak_bytes), checked
        assert checked.axis_ratios, checked  # 8 devices: some axis communicates
        for axis in checked.axis_ratios:
            predicted, found = checked.predicted_bytes.get(axis, 0.0), checked.hlo_bytes.get(axis, 0.0)
            assert abs(predicted - found) <= BYTES_TOLERANCE * found, (axis, checked)
        assert set(checked.reasons) <= set(check.REASONS)


def test_one_device_plans_without_communication_and_three_devices_plan_too():
    one = check.lab_plan(1)
    assert one.plans and all(not plan.prediction.comm for plan in one.plans)
    checked = check.check_top(1, 1)[0]
    _print(checked)
    assert checked.hlo_bytes == {} and checked.predicted_bytes == {} and checked.axis_ratios == {}
    three = check.lab_plan(3)
    assert three.plans and three.workload.sequences == 255  # the default batch that 3 devices divide
    checked = check.check_plan(three.plans[0].layout, 3)
    _print(checked)
    assert checked.compiled_peak_bytes and checked.layout == three.plans[0].layout


@pytest.mark.parametrize("devices", [1, 3, 6, 7, 8])
def test_every_plan_of_the_lab_has_a_label_of_its_own(devices):
    """Sequence parallelism on and off are two programs on the same axes: their labels (a chart's categories, a
    check run's name) tell them apart."""
    result = check.lab_plan(devices)
    layouts = [plan.layout for plan in (*result.plans, *result.unfit)]
    labels = [layout.label() for layout in layouts]
    assert len(labels) == len(set(labels)), labels
    assert all(("SP " in layout.label()) == (layout.model > 1) for layout in layouts)
