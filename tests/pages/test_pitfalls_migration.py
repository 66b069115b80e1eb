"""The mistakes page on the migration entries (tests/core/test_pitfall_migration_entries.py checks
the entries themselves): an entry shows, its run confirms the claim on this JAX, and the page in 中文."""

import jax

from tests.apptest_support import assert_clean


def texts_of(elements):
    return " ".join(e.value for e in elements)


def test_mistakes_page_shows_a_migration_entry_and_confirms_its_claim(lab):
    at = lab("mistakes", entry="shard_map_in_specs")
    assert_clean(at)
    assert not at.info or all("With one device" not in i.value for i in at.info)  # N > 1: no one-device note
    at.button(key="mistakes.run").click().run()
    assert_clean(at)
    assert "in_specs passed to shard_map: P('data',) does not match" in texts_of(at.code)
    assert f"JAX {jax.__version__}" in texts_of(at.success)


def test_mistakes_page_in_chinese_shows_the_nested_pmap_entry(lab):
    at = lab("mistakes", lang="zh", entry="nested_pmap")
    assert_clean(at)
    assert at.subheader[0].value == "嵌套的 pmap"


def test_mistakes_page_shows_the_two_mesh_constructors_and_the_refusal_in_jax_s_words(lab):
    at = lab("mistakes", entry="mesh_constructors")
    assert_clean(at)
    assert at.subheader[0].value == "jax.make_mesh in place of jax.sharding.Mesh: other axis types"
    at.button(key="mistakes.run").click().run()
    assert_clean(at)
    code = texts_of(at.code)
    assert "in_specs passed to shard_map: P('data',) does not match the specs of the input: P(None,)" in code
    assert "Mesh_axis_types: (Auto,)" in code and "make_mesh_axis_types: (Explicit,)" in code
    assert f"JAX {jax.__version__}" in texts_of(at.success)
    zh = lab("mistakes", lang="zh", entry="mesh_constructors")
    assert_clean(zh)
    assert zh.subheader[0].value == "用 jax.make_mesh 代替 jax.sharding.Mesh：轴类型不同"
