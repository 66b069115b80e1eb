"""The migration page in English and 中文: the facts tests/core/test_migration_steps.py checks, as
the page shows them; changing the mesh, spec and devices redraws from the shards; bad link values
fall back with a warning. The page answers before it compiles: its programs compile and run in the background
(each section says so with a ⏳ note, and shows once they are done)."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from labs.texts import table as text_table
from pmap_core.concepts import migration
from pmap_core.train import models
from tests.apptest_support import assert_clean, compiles_seen, unfold, until_done
from tests.apptest_support import open_lab as open_page


def open_lab(script: str, **query):
    """The page once the programs its first run started in the background show."""
    return until_done(open_page(script, **query))


def test_page_renders_with_the_computed_facts():
    at = open_lab("migration")
    assert_clean(at)
    assert {"devices": "8", "mesh": "2x4", "spec": "x,y", "rows": "8", "cols": "8", "model": "mlp"}.items() \
        <= at.query_params.items()
    successes = " ".join(s.value for s in at.success)
    assert "All three end with the same parameters" in successes
    assert "every device holds the block" in successes
    mlp = models.init_params("mlp", migration.HLO_FEATURES, migration.HLO_HIDDEN, 0)
    assert f"communicate the same: {4 * sum(np.size(p) for p in mlp.values())} bytes" in successes  # gradients
    assert any("float32[8@x,8@y]" in m.value for m in at.markdown)
    assert any("`float32[2,3]{V:data}`" in m.value for m in at.markdown)  # what shard_map's body saw
    code = " ".join(c.value for c in unfold(at).code)  # the compiled programs' texts are folded
    assert "jax.pmap(" in code and "jax.shard_map(" in code and "all-reduce" in code
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2  # the blocks, the bytes per step
    blocks = next(c for c in charts if "which devices hold each block" in c.proto.spec.lower())
    frame = convert_arrow_bytes_to_pandas_df(blocks.proto.datasets[0].data.data)
    # 2x4 mesh, P('x', 'y') on 8x8: eight 4x2 blocks, one device each, in the order of the mesh
    assert sorted(zip(frame["rows"], frame["cols"], frame["devices"], strict=True)) == sorted(
        (f"{4 * (d // 4)}:{4 * (d // 4) + 4}", f"{2 * (d % 4)}:{2 * (d % 4) + 2}", str(d)) for d in range(8))


def test_page_in_chinese():
    at = open_lab("migration", lang="zh")
    assert_clean(at)
    assert at.title[0].value == "pmap → shard_map → jit"
    successes = " ".join(s.value for s in at.success)
    assert "三种写法得到相同的参数和损失" in successes and "通信量相同" in successes
    assert any("哪些变了" in s.value for s in at.subheader)


def test_changing_the_mesh_and_spec_redraws_from_the_shards():
    at = open_lab("migration")
    at.selectbox(key="migration.mesh").set_value("4x2")
    until_done(at.selectbox(key="migration.spec").set_value("y,x").run())
    assert_clean(at)
    assert at.query_params["mesh"] == "4x2" and at.query_params["spec"] == "y,x"
    assert any("float32[8@y,8@x]" in m.value for m in at.markdown)
    assert any("every device holds the block" in s.value for s in at.success)


def test_a_spec_the_mesh_lacks_is_an_error_with_jax_own_words():
    at = open_lab("migration", mesh="8", spec="x,y")
    assert not at.exception
    assert len(at.error) == 1 and "names mesh axis 'y'" in at.error[0].value
    assert any("not found in mesh" in c.value for c in at.code)
    assert any("communicate the same" in s.value for s in at.success)  # the rest of the page still runs


def test_changing_devices_gives_a_mesh_of_the_new_count():
    at = open_lab("migration")
    until_done(at.slider(key="migration.devices").set_value(3).run())
    assert not at.exception
    assert at.query_params["mesh"] == "1x3" and at.selectbox(key="migration.mesh").options == ["3", "1x3", "3x1"]
    assert "cuts dimension 1 (size 8) into 3" in at.error[0].value  # 8 columns over 'y' of size 3
    until_done(at.slider(key="migration.cols").set_value(9).run())
    assert_clean(at)


@pytest.mark.parametrize("devices", [3, 5, 7])
def test_a_device_count_that_does_not_divide_8_opens_on_a_placement_that_splits(devices):
    at = open_lab("migration", devices=devices)
    assert_clean(at)
    assert at.query_params["mesh"] == f"1x{devices}" and at.query_params["spec"] == "x,y"
    assert int(at.query_params["cols"]) % devices == 0
    assert any("every device holds the block" in s.value for s in at.success)


@pytest.mark.parametrize(("devices", "lang"), [(3, "en"), (3, "zh"), (1, "en")])
def test_the_trap_the_page_states_is_run_beside_it(devices, lang):
    at = open_lab("migration", devices=devices, lang=lang)
    assert_clean(at)
    trap = migration.run_three_ways(devices, 2).trap
    texts = text_table("migration")
    if devices > 1:
        shown = [s.value for s in at.success]
        assert texts["trap.shows"][lang].format(factor=trap.factor, devices=devices) in shown
        assert f"{devices}×" in texts["trap.shows"]["en"].format(factor=trap.factor, devices=devices)
    else:  # one device: the sum over the devices is the one gradient
        assert texts["trap.one_device"][lang].format(factor=trap.factor) in [i.value for i in at.info]
    table = next(frame.value for frame in at.dataframe if "without_pcast" in frame.value.columns)
    np.testing.assert_allclose(table["without_pcast"], trap.without_pcast)
    np.testing.assert_allclose(table["without_pcast"], devices * table["numpy_grad"], rtol=1e-4, atol=1e-6)


def test_bad_link_values_fall_back_with_a_warning():
    at = open_page("migration", devices=4, mesh="9x9", spec="<b>", rows=999, model="cnn")
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)  # on the first answer, which reads the link
    for name in ("mesh", "spec", "rows", "model"):
        assert f"`{name}`" in warnings, name
    until_done(at)
    assert_clean(at)
    assert {"devices": "4", "mesh": "2x2", "spec": "x,y", "rows": "8", "model": "mlp"}.items() \
        <= at.query_params.items()
    # The page ran again by itself once its background work was done: the warnings stay, the same ones.
    assert " ".join(w.value for w in at.warning) == warnings
    at.radio(key="migration.model").set_value("linear").run()  # the visitor chooses: that warning goes
    until_done(at)
    assert "`model`" not in " ".join(w.value for w in at.warning) and "`rows`" in " ".join(w.value for w in at.warning)


def test_a_link_restores_a_one_dimensional_mesh():
    at = open_lab("migration", devices=4, mesh="4", spec="x", model="linear")
    assert_clean(at)
    assert at.selectbox(key="migration.mesh").value == "4" and at.radio(key="migration.model").value == "linear"
    assert any("float32[8@x,8]" in m.value for m in at.markdown)


def test_the_first_answer_comes_before_any_compile():
    """Its first run, on settings no one asked for before, compiles nothing in the page's run and says what is still
    being worked out; the sections then show, compiled off the page's run."""
    with compiles_seen() as compiled:
        at = open_page("migration", devices=6, per_device=5, model="linear")
        assert_clean(at)
        assert [i for i in at.info if i.icon == "⏳"]
        assert at.title[0].value == "pmap → shard_map → jit" and at.get("vega_lite_chart")  # the mesh's blocks
        until_done(at)
        assert_clean(at)
        assert any("All three end with the same parameters" in s.value for s in at.success)
        assert compiled and set(compiled) == {"pmap-lab-job"}


def test_after_the_warm_up_the_default_page_shows_every_section_in_its_first_run():
    """The server's warm-up computes the page's default sections (`labs.ui.migration_work`): the first visitor's
    first run then shows all of them, with no ⏳ note and no compile of its own, so the browser draws the page once."""
    from labs.ui import shared_cache
    from pmap_core.concepts import migration_steps

    shared_cache._migration_defaults()  # the warm-up's step, here in the test's thread: done when it returns
    with compiles_seen() as compiled:
        at = open_page("migration")
        assert_clean(at)
        assert not [i for i in at.info if i.icon == "⏳"]
        assert any("All three end with the same parameters" in s.value for s in at.success)  # the three ways
        assert any("communicate the same" in s.value for s in at.success)  # the compiled programs
        steps = next(frame.value for frame in at.dataframe if "verdict" in frame.value.columns)
        assert len(steps) == len(migration_steps.STEP_NAMES)  # every step from 0.10.2 to 0.12
        assert "pmap-lab-job" not in compiled
