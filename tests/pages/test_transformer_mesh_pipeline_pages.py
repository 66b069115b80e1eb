"""The transformer on the 2-D mesh and pipeline pages: it trains at D = 1, 3 and 8 in both languages, the figures
shown are the core's (the final loss of `loop.train` on the same config, Megatron's bytes per step from the
config), and a split that does not divide shows one error line."""

import dataclasses

import pytest

from labs.texts import table as text_table
from pmap_core.concepts import mesh_2d
from pmap_core.concepts import pipeline as pipeline_concept
from pmap_core.train import loop, models
from tests.apptest_support import assert_clean, open_lab, until_done

SIZES = {"model": "transformer", "d_model": 16, "heads": 2, "seq_len": 8, "vocab": 16}
COMMON_TEXTS, MESH_TEXTS = text_table("common"), text_table("mesh_2d")


def shown(at) -> str:
    return " ".join(e.value for kind in (at.markdown, at.caption, at.info, at.success, at.warning) for e in kind)


@pytest.mark.parametrize(("lang", "devices", "mesh", "heads"),
                         [("en", 1, "1x1", 2), ("zh", 3, "1x3", 3), ("en", 8, "4x2", 2)])
def test_the_transformer_trains_on_the_mesh_page(store, lang, devices, mesh, heads):
    sizes = {**SIZES, "d_model": 8 * heads, "heads": heads}  # 3 model devices need heads that 3 divides
    at = until_done(open_lab("mesh_2d", lang=lang, devices=devices, steps=10, batch=24, layers=2, mesh=mesh, **sizes))
    assert_clean(at)
    assert not [w for w in at.number_input if w.key in ("mesh_2d.hidden", "mesh_2d.features")]
    at.button(key="mesh_2d.train").click().run()
    assert_clean(at)
    result = at.session_state["mesh_2d.last_run"].result
    cfg = result.config
    data, model = (int(n) for n in mesh.split("x"))
    assert (cfg.model, cfg.impl, cfg.mesh_data, cfg.mesh_model, cfg.d_model, cfg.heads) == (
        "transformer", "tensor", data, model, 8 * heads, heads)
    again = loop.train(dataclasses.replace(cfg), measure_scaling=False)
    assert result.final_loss == again.final_loss
    final = COMMON_TEXTS["metric.final_loss"][lang]
    assert {m.label: m.value for m in at.metric}[final] == f"{result.final_loss:.3g}"
    formula = mesh_2d.comm_formula_bytes(cfg)
    if devices > 1:
        assert f"{formula:,.0f}" in shown(at)
        # what the compiled step sends is the formula plus the loss's one value over data
        assert result.footprint.comm_bytes_per_step == pytest.approx(formula + mesh_2d.loss_bytes(data))
    # The command names the run's mesh as the run records it (`TrainConfig.mesh`: the axes it splits over).
    command = " ".join(c.value for c in at.code)
    assert (f"--mesh data={data},model={model}" if model > 1 else f"--devices {data} --impl tensor") in command


def test_the_mesh_page_refuses_a_model_axis_that_does_not_divide_the_heads():
    at = open_lab("mesh_2d", devices=4, steps=10, batch=24, mesh="1x4", **SIZES)  # 2 heads on 4 model devices
    assert not at.exception, [e.value for e in at.exception]
    expected = COMMON_TEXTS["error.mesh_not_divisible"]["en"].format(axis="model", count=4, name="heads", size=2)
    assert [e.value for e in at.error] == [expected]
    assert at.selectbox(key="mesh_2d.mesh").value == "2x2"  # it starts from the default shape
    assert "1x4" in shown(at)  # named among the shapes left out


def test_the_mesh_page_keeps_the_mlp_by_default():
    at = open_lab("mesh_2d")
    assert_clean(at)
    assert at.radio(key="mesh_2d.model").value == "mlp"
    assert at.number_input(key="mesh_2d.hidden") and not [w for w in at.number_input if w.key == "mesh_2d.d_model"]


# --- the pipeline page ------------------------------------------------------------------------------

PIPE = {**SIZES, "layers": 2, "microbatches": 2, "rows": 2}


@pytest.mark.parametrize(("lang", "devices", "stages"), [("zh", 1, 1), ("en", 3, 1), ("en", 8, 2)])
def test_the_transformer_trains_in_pipeline_stages(lang, devices, stages):
    at = open_lab("pipeline", lang=lang, devices=devices, stages=stages, **PIPE)
    assert_clean(at)
    assert not [w for w in at.number_input if w.key == "pipeline.hidden"]
    settings = pipeline_concept.check_settings(devices, stages, 2, 2, "gpipe", 2, 64, model="transformer",
                                               dims=models.Dims(16, 2, 8, 16))
    assert settings.activation_values == 2 * 8 * 16  # b × S × d_model at a block boundary
    if devices // stages < 2:
        return
    at.button(key="pipeline.train_data").click().run()
    assert_clean(at)
    _, ran, run = at.session_state["pipeline.data_last"]
    assert ran == settings
    assert run.formula_permute_bytes == (2 * run.slots * settings.activation_values * 4 if stages > 1 else 0)
    assert run.permute_bytes == run.formula_permute_bytes and run.data_bytes == run.formula_data_bytes
    piped = loop.train(settings.config(replicas=run.replicas))
    assert run.pipeline_loss == piped.losses[-1]
    if stages > 1:
        assert f"{run.formula_permute_bytes:,}" in shown(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_blocks_that_do_not_split_into_the_stages_are_refused(lang):
    at = open_lab("pipeline", lang=lang, devices=4, stages=4, **{**PIPE, "layers": 6, "rows": 4})
    assert not at.exception, [e.value for e in at.exception]
    expected = COMMON_TEXTS["error.layers_not_divisible"][lang].format(layers=6, stages=4)
    assert [e.value for e in at.error] == [expected]


def test_the_pipeline_page_keeps_the_mlp_by_default():
    at = open_lab("pipeline")
    assert_clean(at)
    assert at.radio(key="pipeline.model").value == "mlp"
    assert at.number_input(key="pipeline.hidden")


def test_the_pipeline_page_measures_the_transformer_s_schedules():
    """Predict, then Measure: both schedules' compiled peaks for the transformer, the stash model counting
    b × S × d_model values per kept micro-batch."""
    at = open_lab("pipeline", devices=4, stages=2, **{**PIPE, "microbatches": 4})
    at.radio(key="pipeline.guess").set_value("1f1b").run()
    at.button(key="pipeline.measure").click().run(timeout=600)
    assert_clean(at)
    measured = at.session_state["pipeline.last"]
    assert measured.settings.model == "transformer"
    per_micro = 2 * 8 * 16 * 4  # rows × seq_len × d_model float32 bytes
    assert {row.schedule: row.stash_model_bytes for row in measured.memory} == {
        row.schedule: row.kept * per_micro for row in measured.memory}
    assert all(row.peak_bytes for row in measured.memory)
