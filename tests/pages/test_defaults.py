"""One home for every default a user sees: the training page, `python -m pmap_core train` and
`python -m pmap_core export training` all start from the field defaults of `TrainConfig`."""

import dataclasses

import jax

from pmap_core import export
from pmap_core.cli import training as train_cli
from pmap_core.train.config import TrainConfig
from tests.apptest_support import assert_clean, open_lab

DEFAULTS = TrainConfig()
# Where the page and the CLI differ from the dataclass by design: both train on every device there is.
EVERY_DEVICE = dataclasses.replace(DEFAULTS, devices=jax.device_count())


def test_the_page_trains_with_the_defaults_when_nothing_is_set():
    at = open_lab("training")
    assert_clean(at)
    at.button(key="training.train").click().run()
    assert_clean(at)
    ran = at.session_state["training.last_run"].result.config
    assert ran == dataclasses.replace(EVERY_DEVICE, chunk=min(DEFAULTS.chunk, DEFAULTS.steps))


def test_the_page_offers_the_default_width_of_the_mlp():
    at = open_lab("training", model="mlp")
    assert_clean(at)
    assert at.number_input(key="training.hidden").value == DEFAULTS.hidden


def test_the_cli_trains_with_the_defaults_when_nothing_is_set():
    config, info = train_cli.join_and_configure(train_cli.parse(["train"]))
    assert info.num_processes == 1
    assert config == EVERY_DEVICE


def test_the_exported_script_has_the_defaults_when_nothing_is_set():
    assert export.script_for("training", {}) == export.training_script(DEFAULTS)
    header = export.script_for("training", {}).split('"""')[1]
    assert f"lr={DEFAULTS.learning_rate}" in header and f"batch={DEFAULTS.global_batch}" in header

