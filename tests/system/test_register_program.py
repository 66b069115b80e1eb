"""A program the lab does not ship, with a setting the lab does not have, registered from outside: it trains
through the loop, its setting is checked against its own limits, tracked to MLflow as a param (read back from a
real sqlite store) and given by the CLI's own flag, printed in its JSON — and no module of the lab names it."""

import dataclasses
import functools
import json
import pathlib

import jax
import numpy as np
import pytest
from jax import lax
from mlflow.tracking import MlflowClient

import pmap_core
from harness.processes import new_tracking_store
from pmap_core.cli.commands import main
from pmap_core.runtime import DATA_AXIS
from pmap_core.tracking import check_tracking_uri
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.train.program import ProgramSpec
from pmap_core.train.replicated import ReplicatedProgram, pmap_program
from pmap_core.train.settings import setting
from pmap_core.train.steps import sgd_update
from pmap_core.validation import LabInputError

NAME, SETTING = "gained_sgd", "step_gain"
CONFIG = TrainConfig(model="mlp", devices=4, global_batch=32, hidden=8, features=4, steps=12, chunk=6,
                     learning_rate=0.05, seed=1)


@dataclasses.dataclass(frozen=True)
class ScaledStepSettings:
    step_gain: float = setting(1.0, "the SGD step is η · the gain ({low}–{high})", low=0.25, high=4.0, reported=True)


def build_scaled_step(spec: ProgramSpec) -> ReplicatedProgram:
    """Data-parallel SGD (pmap, the mean gradient) whose step is η · step_gain."""
    scale = float(spec.option(SETTING))
    loss_fn = functools.partial(models.loss, spec.model)

    def step(params, x, y, learning_rate):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return sgd_update(params, lax.pmean(grads, DATA_AXIS), learning_rate * scale), loss

    return pmap_program(spec, step)


@pytest.fixture
def scaled_step():
    programs.register(NAME, build_scaled_step, settings=ScaledStepSettings)
    yield NAME
    programs.unregister(NAME)


def test_it_trains_as_pmap_does_with_the_step_scaled(scaled_step):
    config = validate(dataclasses.replace(CONFIG, impl=scaled_step, options=((SETTING, 2.0),)))
    assert config.option(SETTING) == 2.0
    ours = train(config, measure_scaling=False)
    reference = train(validate(dataclasses.replace(CONFIG, learning_rate=0.1)), measure_scaling=False)
    np.testing.assert_allclose(ours.losses, reference.losses, rtol=1e-5)
    assert ours.losses[-1] < ours.losses[0]
    # Its setting's default, where the run leaves it out, is its dataclass's.
    assert validate(dataclasses.replace(CONFIG, impl=scaled_step)).options == ((SETTING, 1.0),)


def test_its_setting_is_checked_against_its_own_limits_and_only_for_it(scaled_step):
    with pytest.raises(LabInputError) as refused:
        validate(dataclasses.replace(CONFIG, impl=scaled_step, options=((SETTING, 9.0),)))
    assert refused.value.code == "out_of_range"
    with pytest.raises(LabInputError) as refused:
        validate(dataclasses.replace(CONFIG, impl="pmap", options=((SETTING, 2.0),)))
    assert refused.value.code == "unknown_program_setting"


def test_it_is_tracked_with_its_setting_as_a_param(scaled_step, tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    tracking = TrackingCallback(Tracker(check_tracking_uri(store)))
    config = validate(dataclasses.replace(CONFIG, impl=scaled_step, options=((SETTING, 2.0),)))
    tracked = tracking.tracked(train(config, [tracking], measure_scaling=False))
    run = MlflowClient(store).get_run(tracked.run_id)
    assert run.data.params[SETTING] == "2.0" and run.data.params["impl"] == NAME
    assert "options" not in run.data.params  # each setting under its own name
    assert run.data.metrics["final_loss"] == pytest.approx(tracked.result.final_loss)


def test_the_cli_gives_it_a_flag_and_prints_it(scaled_step, tmp_path, capsys):
    store = new_tracking_store(tmp_path / "mlflow.db")
    status = main(["train", "--impl", scaled_step, "--step-gain", "2", "--model", "mlp", "--devices", "4",
                   "--global-batch", "32", "--hidden", "8", "--features", "4", "--steps", "12", "--chunk", "6",
                   "--learning-rate", "0.05", "--seed", "1", "--json", "--tracking-uri", store])
    printed = json.loads(capsys.readouterr().out)
    assert status == 0
    assert printed["impl"] == NAME and printed[SETTING] == 2.0
    assert MlflowClient(store).get_run(printed["run_id"]).data.params[SETTING] == "2.0"
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "--step-gain" in capsys.readouterr().out


def test_no_module_of_the_lab_names_the_new_program_or_its_setting():
    """Registering it changed no line of the lab: nothing under pmap_core or labs mentions it."""
    root = pathlib.Path(pmap_core.__file__).resolve().parents[1]
    sources = [*root.joinpath("pmap_core").rglob("*.py"), *root.joinpath("labs").rglob("*.py"),
               *root.joinpath("labs").rglob("*.toml")]
    assert len(sources) > 100
    mentions = [str(path.relative_to(root)) for path in sources
                if NAME in (text := path.read_text(encoding="utf-8")) or SETTING in text
                or "step-gain" in text]
    assert mentions == []
