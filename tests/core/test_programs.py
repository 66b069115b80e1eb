"""The parallel-program interface: a way of running the step registered from outside the lab trains
through the same loop, measurements and tracking as the lab's own, and every built-in satisfies it."""

import dataclasses
import functools

import jax
import numpy as np
import pytest
from jax import lax
from jax.flatten_util import ravel_pytree

from pmap_core.runtime import DATA_AXIS
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.train.program import ProgramSpec
from pmap_core.train.replicated import ReplicatedProgram, pmap_program
from pmap_core.train.steps import sgd_update
from pmap_core.validation import LabInputError

CONFIG = TrainConfig(model="mlp", devices=4, global_batch=32, hidden=8, features=4, steps=12, chunk=5,
                     learning_rate=0.1, seed=3)


def build_gather_then_mean(spec: ProgramSpec) -> ReplicatedProgram:
    """A strategy the lab does not ship: each device all-gathers every device's gradient and takes
    the mean itself (D× the bytes of an all-reduce's result, the same numbers)."""
    loss_fn = functools.partial(models.loss, spec.model)

    def step(params, x, y, learning_rate):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        flat, unflatten = ravel_pytree(grads)
        mean = lax.all_gather(flat, DATA_AXIS).mean(axis=0)
        return sgd_update(params, unflatten(mean), learning_rate), loss

    return pmap_program(spec, step)


@pytest.fixture
def gather_then_mean():
    programs.register("gather_then_mean", build_gather_then_mean)
    yield "gather_then_mean"
    programs.unregister("gather_then_mean")


def test_a_registered_strategy_trains_through_the_loop_and_matches_pmap(gather_then_mean):
    ours = train(validate(dataclasses.replace(CONFIG, impl=gather_then_mean)), measure_scaling=False)
    reference = train(validate(CONFIG), measure_scaling=False)
    np.testing.assert_allclose(ours.losses, reference.losses, rtol=1e-5)
    for name, value in reference.params.items():
        np.testing.assert_allclose(ours.params[name], value, rtol=1e-5, atol=1e-7)
    assert ours.replicas_identical
    # The footprint reads the new program's own collectives from its compiled HLO.
    assert set(ours.footprint.comm_by_kind) == {"all-gather"}
    assert set(reference.footprint.comm_by_kind) == {"all-reduce"}
    psi = ours.footprint.param_count
    assert ours.footprint.comm_bytes_per_step == pytest.approx(4 * psi * 4 * 3 / 4)  # ring: (D−1)/D of D·4Ψ
    assert ours.footprint.param_bytes_per_device == reference.footprint.param_bytes_per_device == 4 * psi


def test_an_unregistered_name_is_refused_with_the_registered_ones(gather_then_mean):
    programs.unregister(gather_then_mean)
    with pytest.raises(LabInputError) as refused:
        validate(dataclasses.replace(CONFIG, impl=gather_then_mean))
    assert refused.value.code == "unknown_impl" and "pmap, shard_map, jit" in str(refused.value)
    with pytest.raises(ValueError):
        programs.unregister("pmap")


@pytest.mark.parametrize("config", [
    dataclasses.replace(CONFIG, impl="pmap"), dataclasses.replace(CONFIG, impl="shard_map"),
    dataclasses.replace(CONFIG, impl="jit"), dataclasses.replace(CONFIG, impl="jit", strategy="zero3",
                                                                 optimizer="adam")], ids=str)
def test_every_built_in_program_places_runs_and_reads_back_through_the_interface(config):
    program = programs.build(config.program_spec(3))
    data = models.make_data(config.model, config.global_batch, config.input_features, config.seed)
    initial = models.init_params(config.model, config.input_features, config.hidden, config.seed)
    carry, x, y, lr = program.place(initial, data, config.learning_rate)
    carry, losses = program.run(carry, x, y, lr)
    curve = program.step_losses(losses)
    assert curve.shape == (3,) and np.all(np.isfinite(curve))
    assert program.local_losses(losses).shape[0] == config.devices  # one row per local device
    params, diff = program.final_params(carry)
    assert diff == 0.0 and set(params) == set(initial)
    held = program.held_bytes(carry)
    whole = 4 * program.param_count
    assert held.params == (whole if config.strategy == "dp" else pytest.approx(whole / 4, rel=0.3))
    assert program.devices == tuple(jax.devices()[:config.devices])
    assert programs.build(config.program_spec(3)) is program  # compiled once per spec


def test_the_loss_curve_of_the_first_call_is_the_global_batch_loss():
    program = programs.build(CONFIG.program_spec(1))
    data = models.make_data(CONFIG.model, CONFIG.global_batch, CONFIG.input_features, CONFIG.seed)
    initial = models.init_params(CONFIG.model, CONFIG.input_features, CONFIG.hidden, CONFIG.seed)
    _, losses = program.run(*program.place(initial, data, CONFIG.learning_rate))
    expected = float(models.loss(CONFIG.model, initial, data.x, data.y))
    assert program.step_losses(losses)[0] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("settings", [{}, {"impl": "jit", "strategy": "zero3", "optimizer": "adam"}], ids=str)
def test_a_train_clicks_settings_walk_enters_no_core_file_more_than_twice(settings, tmp_path):
    from harness.train_click_walk import train_click_walk
    from harness.walks import summary

    stops = train_click_walk(TrainConfig(steps=20, chunk=10, **settings), tmp_path / "mlflow.db")
    entered, returns = summary(stops)
    assert max(entered.values()) <= 2 and returns <= 8, stops
    assert "pmap_core/train/footprint.py" in entered and "pmap_core/tracking/callback.py" in entered


def test_a_run_holds_its_programs_settings_as_one_nested_value_and_its_spec_is_derived_from_it():
    """No copies: TrainConfig declares only the settings every run has, a program's settings are its owner's instance
    inside `settings` (left out at their defaults), read and replaced by name; the spec carries the same value."""
    from pmap_core.train.context import ContextSettings
    from pmap_core.train.settings import declarations, settings_of
    from pmap_core.train.tensor import TensorSettings
    from pmap_core.train.zero import ShardedStateSettings

    own = {f.name for f in dataclasses.fields(TrainConfig)}
    assert not own & set(declarations()) and {f.name for f in dataclasses.fields(ProgramSpec)} <= own | {
        "per_device_batch", "features", "program"}
    assert TrainConfig(strategy="dp", mesh_model=1) == TrainConfig() and TrainConfig().settings == ()
    config = dataclasses.replace(TrainConfig(impl="tensor", devices=4, strategy="zero3"), mesh_model=2)
    assert config.settings == (TensorSettings(mesh_model=2), ShardedStateSettings(strategy="zero3"))
    assert (config.strategy, config.mesh_model, config.context, config.mesh) == ("zero3", 2, "allgather",
                                                                                {"data": 2, "model": 2})
    spec = config.program_spec(3)
    assert spec.settings == config.settings and (spec.strategy, spec.mesh_model) == ("zero3", 2)
    assert dataclasses.replace(config, context="ring").settings[0] == ContextSettings(context="ring")
    for entry in programs.REGISTRY.values():
        assert entry.settings is None or {f.name for f in settings_of(entry.settings)} <= set(declarations())


def test_every_setting_is_declared_once():
    """Walk the declarations (TrainConfig's own settings, every registered program's, every declared class): no name
    twice, so a flag, a range, a default and a help text each have one home; declaring a name again is refused."""
    from pmap_core.train.settings import declarations, declared, setting, settings_of

    owners = [TrainConfig, *(entry.settings for entry in programs.REGISTRY.values() if entry.settings),
              *declarations().values()]
    home: dict[str, type] = {}
    for cls in dict.fromkeys(owners):
        for field in settings_of(cls):
            assert home.setdefault(field.name, cls) is cls, (
                f"{field.name}: declared by {home[field.name].__qualname__} and {cls.__qualname__}")

    @dataclasses.dataclass(frozen=True)
    class AnotherStrategy:
        strategy: str = setting("dp", "a second home for the sharded state's --strategy")

    with pytest.raises(TypeError, match="'strategy' is declared by ShardedStateSettings and"):
        declared(AnotherStrategy)


def test_each_program_runs_records_only_its_own_settings_beside_every_runs():
    """MLflow's params of a run: TrainConfig's own settings, the mesh, and the settings of its impl's programs only
    (a pmap run names no optimizer, a pipeline run no context scheme)."""
    from pmap_core.tracking.callback import run_params
    from pmap_core.train.settings import defaults

    common = set(run_params(TrainConfig()))
    assert {"model", "devices", "impl", "mesh", "mesh_data", "mesh_stage", "mesh_model"} <= common
    owned = {entry.name: set(defaults(entry.settings)) for entry in programs.REGISTRY.values() if entry.settings}
    for impl, programs_of_impl in (("pmap", ()), ("jit", ("zero",)), ("tensor", ("tensor",)),
                                   ("context", ("context",)), ("expert", ("expert",)), ("pipeline", ("pipeline",))):
        own = set().union(*(owned[name] for name in programs_of_impl), *(programs.REGISTRY[name].shares
                                                                         for name in programs_of_impl))
        assert set(run_params(TrainConfig(impl=impl))) == common | own, impl


def test_train_help_lists_each_flag_once_under_its_program(capsys):
    import re

    from pmap_core.cli.training import parse

    with pytest.raises(SystemExit):
        parse(["train", "--help"])
    help_text = capsys.readouterr().out
    flags = re.findall(r"^  (--[a-z-]+)", help_text, re.MULTILINE)
    assert len(flags) == len(set(flags)) and {"--mesh", "--strategy", "--context", "--schedule"} <= set(flags)
    for impl, flag in (("jit", "--strategy"), ("tensor", "--sequence-parallel"), ("context", "--context"),
                       ("expert", "--experts"), ("pipeline", "--microbatches")):
        section = help_text.split(f"impl {impl}'s settings:")[1].split("\n\n")[0]
        assert f"  {flag} " in section, impl


def test_the_mesh_flag_names_each_axis_with_its_program_and_the_help_its_program_declares(capsys):
    """`--mesh`'s help is written from the axes' declarations, not a list of programs in the CLI: each axis beside
    data with the impl that owns it and the help its setting declares, once."""
    import re

    from pmap_core.cli.training import parse
    from pmap_core.train.config import axis_fields
    from pmap_core.train.settings import declarations, help_of, settings_of

    with pytest.raises(SystemExit):
        parse(["train", "--help"])
    mesh_help = " ".join(capsys.readouterr().out.split("\n  --mesh data=X,AXIS=Y")[1].split("\n\n")[0].split())
    assert axis_fields().keys() == {"model", "seq", "expert", "stage", "replica"}
    for axis, name in axis_fields().items():
        field = next(f for f in settings_of(declarations()[name]) if f.name == name)
        said = f"{axis} (impl {programs.impl_of_axis(axis)}): {' '.join(help_of(field).split())}."
        assert mesh_help.count(said) == 1, (axis, mesh_help)
    assert re.search(r"model \(impl tensor\): .*tensor parallelism", mesh_help)


def test_one_name_one_builder_and_impl_jit_with_a_sharded_state_selects_zero():
    builders = [entry.build for entry in programs.REGISTRY.values()]
    assert len(set(builders)) == len(builders) and programs.PROGRAMS["zero"] is programs.REGISTRY["zero"].build
    assert programs.resolve(TrainConfig(impl="jit")).name == "jit"
    for changes in ({"strategy": "zero3"}, {"optimizer": "adam"}, {"accum_steps": 2}, {"precision": "mixed"}):
        assert programs.resolve(TrainConfig(impl="jit", **changes)).name == "zero"
    assert programs.impls() == ("pmap", "shard_map", "jit", "tensor", "context", "expert", "pipeline")


def test_tensor_and_pipeline_runs_have_their_own_analytic_model_not_zeros():
    """The footprint's model is the run's program's: Megatron's bytes sent for the tensor-parallel MLP and no
    model of the bytes held (ZeRO's said Ψ replicated), none for a pipeline; ZeRO's for a sharded state."""
    from pmap_core.costs import analytic

    mlp = dict(model="mlp", global_batch=32, hidden=8, features=4, steps=2, chunk=2, seed=0)
    tensor_run = train(validate(TrainConfig(devices=4, impl="tensor", mesh_model=2, **mlp)), measure_scaling=False)
    assert tensor_run.footprint.model_memory is None
    assert tensor_run.footprint.model_comm_bytes_per_step == pytest.approx(
        analytic.tensor_comm_bytes_per_step(32, 4, 8, 2, 2))
    assert tensor_run.footprint.ratios()["param"] is None
    piped = train(validate(TrainConfig(devices=2, impl="pipeline", pipeline_stages=2, **mlp)), measure_scaling=False)
    assert piped.footprint.model_memory is None and piped.footprint.model_comm_bytes_per_step is None
    assert set(piped.footprint.ratios().values()) == {None}
    zero_run = train(validate(TrainConfig(devices=2, impl="jit", strategy="zero2", optimizer="adam", **mlp)),
                     measure_scaling=False)
    memory, comm = analytic.zero_model(zero_run.footprint.param_count, 2, "zero2", optimizer="adam")
    assert zero_run.footprint.model_memory == memory and zero_run.footprint.model_comm_bytes_per_step == comm


def test_no_module_names_a_program_by_a_constant_and_the_planner_asks_each_program_for_its_layouts():
    """Programs answer for themselves: outside the registry no `*_IMPL` constant names a program (a caller names the
    setting or the axis it sets: `programs.impl_of`, `impl_of_axis`), and the planner's `train_settings` writes no
    program's name, each program saying which layouts it runs (`Program.plans`)."""
    import ast
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    # Not a program table: what old records without an impl param ran, and TrainConfig's default.
    readers = {"LEGACY_IMPL", "DEFAULT_IMPL"}
    named = {}
    for path in [*root.joinpath("pmap_core").rglob("*.py"), *root.joinpath("labs").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else (
                node.name if isinstance(node, ast.alias) else "")
            if re.fullmatch(r"[A-Z_]+_IMPL", name) and name not in readers:
                named.setdefault(str(path.relative_to(root)), set()).add(name)
    assert named == {}
    from pmap_core.concepts.planner import check

    source = ast.parse(pathlib.Path(check.__file__).read_text(encoding="utf-8"))
    train_settings = next(node for node in source.body
                          if isinstance(node, ast.FunctionDef) and node.name == "train_settings")
    literals = {node.value for node in ast.walk(train_settings) if isinstance(node, ast.Constant)}
    assert not literals & set(programs.REGISTRY)
    assert (programs.impl_of("strategy"), programs.impl_of_axis("model"), programs.impl_of_axis("stage")) == (
        "jit", "tensor", "pipeline")
