"""The transformer on the training page: its settings in the link, a run in both languages at D = 1 and 3, its
refusals as the page's texts."""

import math

import pytest
from mlflow.tracking import MlflowClient

from labs.texts import table as text_table
from pmap_core.train import config as train_config
from pmap_core.train import transformer
from pmap_core.validation import MAX_STEPS
from tests.apptest_support import assert_clean, open_lab

SMALL = {"model": "transformer", "steps": 20, "batch": 48, "d_model": 16, "heads": 2, "seq_len": 8, "vocab": 16}
TRAINING_TEXTS, COMMON_TEXTS = text_table("training"), text_table("common")


def shown(at) -> str:
    return " ".join(e.value for kind in (at.markdown, at.caption, at.info, at.success, at.warning, at.error)
                    for e in kind)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", [1, 3])
def test_the_transformer_trains_on_the_training_page(store, lang, devices):
    at = open_lab("training", lang=lang, devices=devices, **SMALL)
    assert_clean(at)
    for name in ("layers", "d_model", "heads", "seq_len", "vocab"):
        assert at.number_input(key=f"training.{name}").label == (
            TRAINING_TEXTS.get(f"w.{name}") or COMMON_TEXTS[f"w.{name}"])[lang]
    assert not [w for w in at.number_input if w.key == "training.hidden"]  # the MLP's width is not the transformer's
    assert f"ln 16 = {math.log(16):.3g}" in shown(at)
    at.button(key="training.train").click().run()
    assert_clean(at)
    result = at.session_state["training.last_run"].result
    cfg = result.config
    assert (cfg.model, cfg.devices, cfg.global_batch, cfg.steps) == ("transformer", devices, 48, 20)
    assert (cfg.d_model, cfg.heads, cfg.seq_len, cfg.vocab, cfg.layers) == (16, 2, 8, 16, 2)
    assert cfg.learning_rate == train_config.default_learning_rate("transformer", cfg.hidden)
    assert len(result.losses) == 20 and abs(result.losses[0] - math.log(16)) < 0.5  # it starts near ln(vocab)
    final = COMMON_TEXTS["metric.final_loss"][lang]
    assert {m.label: m.value for m in at.metric}[final] == f"{result.final_loss:.3g}"
    if devices > 1:
        assert result.replicas_identical
    tracked = at.session_state["training.last_run"]
    stored = MlflowClient(store).get_run(tracked.run_id)
    assert stored.info.run_name == f"transformer-pmap-d16-h2-T8-V16-D{devices}-B48"
    assert [stored.data.params[name] for name in ("d_model", "heads", "seq_len", "vocab", "layers")] == [
        "16", "2", "8", "16", "2"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_heads_that_do_not_divide_d_model_are_refused_with_the_pages_text(lang):
    at = open_lab("training", lang=lang, **{**SMALL, "heads": 3})
    assert not at.exception, [e.value for e in at.exception]
    expected = COMMON_TEXTS["error.block_not_divisible"][lang].format(parts=3, size=16, nearest="15, 18")
    assert [e.value for e in at.error] == [expected]
    assert at.button(key="training.train").disabled


def test_work_over_the_limit_is_refused_not_run():
    at = open_lab("training", model="transformer", steps=MAX_STEPS, batch=256)
    assert not at.exception, [e.value for e in at.exception]
    assert any("multiply-adds, over this server's limit" in e.value for e in at.error)
    assert at.button(key="training.train").disabled


def test_the_mlp_stays_the_default_and_keeps_its_settings():
    at = open_lab("training")
    assert_clean(at)
    assert at.radio(key="training.model").value == train_config.TrainConfig().model
    assert not [w for w in at.number_input if w.key == "training.d_model"]
    at = open_lab("training", model="mlp")
    assert at.number_input(key="training.hidden") and not [w for w in at.number_input if w.key == "training.heads"]


def test_the_transformer_offers_its_command_instead_of_an_export():
    at = open_lab("training", **SMALL)
    assert_clean(at)
    command = " ".join(c.value for c in at.code)
    assert "--model transformer" in command and "--d-model 16 --heads 2 --seq-len 8 --vocab 16" in command


# --- the sharded data parallel page ---------------------------------------------------------------

SHARDED = {"model": "transformer", "steps": 4, "batch": 48, "d_model": 16, "heads": 2, "seq_len": 8, "vocab": 16,
           "strategy": "zero3", "measure_max": 1}
SHARDED_TEXTS = text_table("sharded_dp")


@pytest.mark.parametrize(("lang", "devices"), [("en", 3), ("zh", 1)])
def test_the_transformer_trains_sharded_on_the_sharded_dp_page(store, lang, devices):
    at = open_lab("sharded_dp", lang=lang, devices=devices, **SHARDED)
    assert_clean(at)
    assert not [w for w in at.number_input if w.key in ("sharded_dp.hidden", "sharded_dp.features")]
    psi = transformer.param_count(transformer.Dims(16, 2, 8, 16), 2)
    assert f"Ψ = {psi:,}" in shown(at)
    at.button(key="sharded_dp.train").click().run()
    assert_clean(at)
    runs = at.session_state["sharded_dp.last_run"]
    cfg, result = runs[0].result.config, runs[0].result
    assert (cfg.model, cfg.strategy, cfg.devices, cfg.impl, cfg.d_model, cfg.heads) == (
        "transformer", "zero3", devices, "jit", 16, 2)
    assert result.footprint.param_count == psi and len(result.losses) == 4
    assert abs(result.losses[0] - math.log(16)) < 0.5
    heading = SHARDED_TEXTS["result.heading"][lang].split("{")[0]
    assert any(s.value.startswith(heading) for s in at.subheader)


def test_the_sharded_dp_page_refuses_heads_that_do_not_divide_d_model():
    at = open_lab("sharded_dp", **{**SHARDED, "heads": 3})
    assert not at.exception, [e.value for e in at.exception]
    expected = COMMON_TEXTS["error.block_not_divisible"]["en"].format(parts=3, size=16, nearest="15, 18")
    assert expected in [e.value for e in at.error]
    assert at.button(key="sharded_dp.train").disabled


def test_the_sharded_dp_page_keeps_the_mlp_by_default():
    at = open_lab("sharded_dp")
    assert_clean(at)
    assert at.radio(key="sharded_dp.model").value == "mlp"
    assert at.number_input(key="sharded_dp.hidden") and not [w for w in at.number_input
                                                             if w.key == "sharded_dp.d_model"]


@pytest.mark.parametrize("settings", [
    {"impl": "tensor", "devices": 8, "mesh_model": 2, "sequence_parallel": "on"},
    {"impl": "pipeline", "devices": 8, "layers": 4, "pipeline_stages": 4, "microbatches": 8, "schedule": "1f1b"},
    {"impl": "jit", "devices": 8, "optimizer": "adam", "strategy": "zero3", "mesh_replica": 2},
    {"impl": "context", "devices": 3, "mesh_seq": 3, "context": "ring"},
], ids=lambda settings: settings["impl"])
def test_the_command_a_transformer_page_shows_runs_the_pages_config(settings):
    """The command line shown instead of a script export (`labs.ui.transformer.train_command`), parsed by the CLI, is
    the page's run: every program setting it sets (sequence parallelism included) and its mesh."""
    import shlex

    from labs.ui.transformer import train_command
    from pmap_core.cli.training import join_and_configure, parse

    config = train_config.TrainConfig(model="transformer", global_batch=48, steps=20, **settings)
    words = shlex.split(train_command(config))
    assert words[:4] == ["python", "-m", "pmap_core", "train"]
    parsed, _ = join_and_configure(parse(words[3:]))
    assert parsed == config and parsed.mesh == config.mesh
