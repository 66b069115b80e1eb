"""The migration entries of the mistakes page: pmap code for older JAX, run on the installed one.

Each raises JAX's own message (a fragment of it, verbatim, is checked here), its fix runs, and the
fix's result agrees with a reference computed here with NumPy or the shape rules.
"""

import functools
import inspect

import jax
import numpy as np
import pytest

from labs.texts import table as text_table
from pmap_core.practice import pitfalls
from pmap_core.practice.pitfalls import entries, migration

N = jax.local_device_count()
MIGRATION = ("committed_input", "shard_map_in_specs", "mesh_constructors", "nested_pmap", "pmap_shmap_merge_flag",
             "device_put_sharded")


@functools.cache
def run(pitfall_id):
    return pitfalls.run_pitfall(pitfall_id)


def test_the_migration_entries_are_registered_once_with_texts_in_both_languages():
    ids = pitfalls.pitfall_ids()
    assert set(MIGRATION) <= set(ids) and len(ids) == len(set(ids))
    table = text_table("mistakes")
    for pitfall_id in MIGRATION:
        assert pitfalls.get_pitfall(pitfall_id).kind == pitfalls.RAISES
        for part in ("what", "why", "fix"):
            assert table[f"entry.{pitfall_id}.{part}"]["en"] and table[f"entry.{pitfall_id}.{part}"]["zh"]
        assert pitfalls.get_pitfall(pitfall_id).mistake.__module__ == migration.__name__


@pytest.mark.parametrize("pitfall_id, error_type, fragments", [
    ("committed_input", "ValueError", ("Sharding passed to jit does not match the sharding on the respective arg",
                                       "arg sharding: SingleDeviceSharding(device=CpuDevice(id=0)")),
    ("shard_map_in_specs", "ValueError", ("in_specs passed to shard_map: P('data',) does not match the specs of "
                                          "the input: P(None,)", "jax.reshard")),
    ("mesh_constructors", "ValueError", ("in_specs passed to shard_map: P('data',) does not match the specs of "
                                         "the input: P(None,)",)),
    ("nested_pmap", "ValueError", ("The context mesh AbstractMesh('outer'", "axis_types=(Manual,)",
                                   "should match the mesh passed to shard_map Mesh('inner'")),
    ("pmap_shmap_merge_flag", "AttributeError", ("Unrecognized config option: jax_pmap_shmap_merge",)),
    ("device_put_sharded", "AttributeError", ("jax.device_put_sharded is deprecated; use jax.device_put instead",)),
])
def test_each_mistake_raises_jax_s_own_message_and_the_claim_holds(pitfall_id, error_type, fragments):
    result = run(pitfall_id)
    assert result.claim_holds, (result.mistake.as_text(), result.fix.as_text())
    assert not result.fix.raised, result.fix.as_text()
    assert result.mistake.error_type == error_type, result.mistake.as_text()
    for fragment in fragments:
        assert fragment in result.mistake.error_message, (fragment, result.mistake.error_message)
    assert "--------------------" not in result.mistake.error_message


def test_committed_input_fix_spreads_the_batch_and_doubles_it():
    fix = run("committed_input").fix.values
    np.testing.assert_array_equal(fix["output"], np.arange(N) * 2.0)
    assert fix["output_devices"] == N


def test_in_specs_fix_places_the_batch_and_an_auto_mesh_still_reshards():
    fix = run("shard_map_in_specs").fix.values
    assert fix["mesh_axis_types"] == "(Explicit,)"
    assert fix["placed_type"] == f"float32[{2 * N}@data]"  # the sharding is part of the type over Explicit axes
    assert fix["output_spec"] == "P('data',)"
    np.testing.assert_array_equal(fix["output"], np.arange(2.0 * N) * 2)
    np.testing.assert_array_equal(fix["auto_axes_output"], np.arange(2.0 * N) * 2)


def test_the_two_mesh_constructors_give_other_axis_types_and_the_same_call_runs_over_auto_axes():
    """jax.sharding.Mesh(...) is Auto, jax.make_mesh is Explicit: the call the mistake makes over make_mesh
    runs over Mesh(...) and over make_mesh(axis_types=Auto), and gives NumPy's result."""
    from jax.sharding import AxisType, Mesh

    fix = run("mesh_constructors").fix.values
    assert fix["Mesh_axis_types"] == str(Mesh(np.array(jax.local_devices()), ("data",)).axis_types) == "(Auto,)"
    assert fix["make_mesh_axis_types"] == str((AxisType.Explicit,)) == "(Explicit,)"
    assert fix["make_mesh_auto_axis_types"] == "(Auto,)"
    for key in ("output_over_Mesh", "output_over_make_mesh_auto"):
        np.testing.assert_array_equal(fix[key], np.arange(2.0 * N) * 2, err_msg=key)
    # A lesson of its own: the in_specs entry's mistake uses make_mesh too, but never shows Mesh(...).
    table = text_table("mistakes")
    assert "jax.sharding.Mesh" not in " ".join(table[f"entry.shard_map_in_specs.{p}"]["en"] for p in ("what", "why"))
    assert "jax.sharding.Mesh(" in table["entry.mesh_constructors.what"]["en"]
    assert "Mesh(" not in inspect.getsource(migration.in_specs_mistake)
    assert "jax.make_mesh(" in inspect.getsource(migration.mesh_constructors_mistake)


def test_nested_pmap_fix_is_one_shard_map_over_a_2d_mesh_equal_to_numpy():
    outer, inner = migration.grid(N)
    assert outer * inner == N and outer <= inner
    x = np.arange(float(N)).reshape(outer, inner)
    fix = run("nested_pmap").fix.values
    assert fix["mesh"] == {"outer": outer, "inner": inner}
    np.testing.assert_array_equal(fix["output"], np.repeat(x.sum(axis=1, keepdims=True), inner, axis=1))


@pytest.mark.parametrize("devices, expected", [(1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)), (7, (1, 7)),
                                               (8, (2, 4)), (12, (3, 4)), (64, (8, 8))])
def test_grid_splits_every_device_count(devices, expected):
    assert migration.grid(devices) == expected


def test_the_merge_flag_is_unknown_here_and_its_environment_variable_changes_nothing():
    fix = run("pmap_shmap_merge_flag").fix.values
    assert fix["output_sharding"] == "NamedSharding" == fix["with_JAX_PMAP_SHMAP_MERGE_0"]
    assert fix["warnings_about_it"] == 0
    np.testing.assert_array_equal(fix["output"], np.arange(float(N)) * 2)
    assert "jax_pmap_shmap_merge" not in jax.config.values  # trying it changed nothing in this process


def test_device_put_sharded_fix_puts_piece_d_on_device_d():
    fix = run("device_put_sharded").fix.values
    assert fix["shape"] == (N, 2) and fix["type"] == f"float32[{N}@data,2]"
    assert fix["device_d_holds_piece_d"] is True
    texts = text_table("mistakes")
    # device_put_replicated's text does not speak for device_put_sharded: this entry does, checked here.
    assert "same holds" not in texts["entry.device_put_replicated.why"]["en"]


def test_device_put_replicated_fix_shows_true_replication_with_p_empty():
    result = run("device_put_replicated")
    assert "jax.device_put_replicated is deprecated; use jax.device_put instead" in result.mistake.error_message
    fix = result.fix.values
    assert fix["replicated_shape"] == (1,) and fix["devices_holding_all_of_w"] == N
    assert fix["stacked_shape"] == (N, 1) and fix["devices_holding_a_copy"] == N


def test_index_output_finds_the_collective_that_moves_row_0_to_every_device():
    """The existing y[0] entry, extended: the compiled indexing's collectives, with their bytes."""
    mistake = run("index_output").mistake.values
    row_bytes = 250_000 * 4  # one float32 row
    assert mistake["row_bytes"] == row_bytes and mistake["compiled_like_y0"] is True
    if N > 1:
        assert mistake["y0_collectives"] and mistake["y0_collective_bytes_per_device"] >= row_bytes
        assert all(c.split()[0] in ("all-reduce", "all-gather", "collective-permute", "all-to-all")
                   for c in mistake["y0_collectives"])
    else:
        assert mistake["y0_collectives"] == [] and mistake["y0_collective_bytes_per_device"] == 0


def test_entries_that_need_two_devices_have_their_one_device_text():
    table = text_table("mistakes")
    assert set(pitfalls.pitfall_ids()) >= entries.NEEDS_TWO_DEVICES
    for pitfall_id in entries.NEEDS_TWO_DEVICES:
        key = f"entry.{pitfall_id}.one_device"
        assert table[key]["en"].startswith("With one device, as here") and table[key]["zh"], key
        assert entries.differs_here(pitfall_id) == (N == 1)
    for pitfall_id in set(pitfalls.pitfall_ids()) - entries.NEEDS_TWO_DEVICES:
        assert f"entry.{pitfall_id}.one_device" not in table
