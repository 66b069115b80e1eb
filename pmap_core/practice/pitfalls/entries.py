"""The registered mistakes, in the order the lab lists them, with the claim the lab makes about each."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import pmap_core.practice.pitfalls.migration as mg
import pmap_core.practice.pitfalls.runtime as rt
import pmap_core.practice.pitfalls.shapes as sh
from pmap_core.practice.pitfalls.types import HARMLESS, RAISES, SILENT, WASTEFUL, Captured, Pitfall
from pmap_core.runtime import DATA_AXIS


def _raises(error_type: str):
    """Claim: the mistake raises `error_type`, and the fix runs."""
    def claim(mistake: Captured, fix: Captured) -> bool:
        return mistake.error_type == error_type and not fix.raised
    return claim


def _values(check):
    """Claim: both run, and `check(mistake_values, fix_values)` holds."""
    def claim(mistake: Captured, fix: Captured) -> bool:
        return not mistake.raised and not fix.raised and bool(check(mistake.values, fix.values))
    return claim


def _close(a, b) -> bool:
    return bool(np.allclose(a, b, rtol=1e-5))


def _leading_axis_claim(mistake: Captured, fix: Captured) -> bool:
    # Longer than the device count fails; as long runs on every device; shorter runs on that many devices.
    values = fix.values or {}
    return (_raises("ValueError")(mistake, fix) and values["output_shape"][0] == values["devices_here"]
            and values["short_axis_ran_on_devices"] == values["short_axis_rows"])


def _indivisible_claim(mistake: Captured, fix: Captured) -> bool:
    # With one device every length divides: D + 1 rows are then only too long (the squeeze message).
    expected = "IndivisibleError" if jax.local_device_count() > 1 else "ValueError"
    return _raises(expected)(mistake, fix)


def _late_config_claim(mistake: Captured, fix: Captured) -> bool:
    return mistake.error_type == "RuntimeError" and not fix.raised and fix.values["devices"] == 4


def _one_device() -> bool:
    return jax.local_device_count() == 1


def _raises_with(error_type: str, fragment: str):
    """Claim: the mistake raises `error_type` with `fragment` in JAX's message, and the fix runs."""
    def claim(mistake: Captured, fix: Captured) -> bool:
        return _raises(error_type)(mistake, fix) and fragment in (mistake.error_message or "")
    return claim


def _unreplicated_claim(mistake: Captured, fix: Captured) -> bool:
    # With one device, w's one row is the one device's row: it runs, and equals the fix.
    if _one_device():
        return _values(lambda m, f: _close(np.ravel(m["w"]), f["w_per_device"]))(mistake, fix)
    return _raises("ValueError")(mistake, fix)


def _index_output_claim(m, f) -> bool:
    # y[0] lands on every device; with two or more the compiled indexing moves at least a row between
    # them, with one there is nothing to move. Reading the shard is the row with its device axis.
    moved = m["y0_collective_bytes_per_device"] >= m["row_bytes"] if m["y0_devices"] > 1 \
        else not m["y0_collectives"]
    return (m["y0_devices"] == jax.local_device_count() and m["compiled_like_y0"] and moved
            and f["shard_shape"][1:] == m["y0_shape"])


def _committed_input_claim(mistake: Captured, fix: Captured) -> bool:
    f = fix.values or {}
    fixed = not fix.raised and _close(f["output"], f["numpy"]) and f["output_devices"] == jax.local_device_count()
    if _one_device():  # device 0 is then all of pmap's devices: nothing to move
        return fixed and not mistake.raised and _close(mistake.values["output"], f["output"])
    return fixed and _raises_with("ValueError", "does not match the sharding")(mistake, fix)


def _in_specs_claim(mistake: Captured, fix: Captured) -> bool:
    f = fix.values or {}
    return (_raises_with("ValueError", "does not match the specs of the input")(mistake, fix)
            and "Explicit" in f["mesh_axis_types"] and _close(f["output"], f["numpy"])
            and _close(f["auto_axes_output"], f["numpy"]))


def _mesh_constructors_claim(mistake: Captured, fix: Captured) -> bool:
    # The same call runs over Mesh(...) (Auto) and is refused over make_mesh (Explicit) unless asked for Auto.
    f = fix.values or {}
    return (_raises_with("ValueError", "does not match the specs of the input")(mistake, fix)
            and f["Mesh_axis_types"] == f["make_mesh_auto_axis_types"] == "(Auto,)"
            and f["make_mesh_axis_types"] == "(Explicit,)"
            and _close(f["output_over_Mesh"], f["numpy"]) and _close(f["output_over_make_mesh_auto"], f["numpy"]))


def _nested_pmap_claim(mistake: Captured, fix: Captured) -> bool:
    return (_raises_with("ValueError", "should match the mesh passed to shard_map")(mistake, fix)
            and _close(fix.values["output"], fix.values["numpy"]))


def _merge_flag_claim(mistake: Captured, fix: Captured) -> bool:
    f = fix.values or {}
    return (_raises_with("AttributeError", "jax_pmap_shmap_merge")(mistake, fix)
            and f["output_sharding"] == f["with_JAX_PMAP_SHMAP_MERGE_0"] == "NamedSharding"
            and f["warnings_about_it"] == 0)


# Entries whose mistake needs two or more devices to show, and the kind each shows with one device: five
# run and give the fix's result; y[0] is still a computation of its own, only without a collective. The
# page says so where this runtime has one device (texts `entry.<id>.one_device`); every claim above holds
# for any device count.
ONE_DEVICE_KINDS = {"unreplicated_params": HARMLESS, "out_axes_none": HARMLESS, "same_key": HARMLESS,
                    "index_output": WASTEFUL, "shard_map_trap": HARMLESS, "committed_input": HARMLESS}
NEEDS_TWO_DEVICES = frozenset(ONE_DEVICE_KINDS)


def differs_here(pitfall_id: str) -> bool:
    """Whether, on this runtime, the entry's mistake does not show (one device)."""
    return pitfall_id in NEEDS_TWO_DEVICES and _one_device()


def kind_here(pitfall_id: str) -> str:
    """The kind of mistake the lab states for this entry on this runtime (its kind, or its one-device kind)."""
    kind = next(entry.kind for entry in PITFALLS if entry.id == pitfall_id)
    return ONE_DEVICE_KINDS[pitfall_id] if differs_here(pitfall_id) else kind


def _same_w(mistake: Captured, fix: Captured) -> bool:
    return _close(np.ravel(mistake.values["w"]), fix.values["w_per_device"])


def _same_output(mistake: Captured, fix: Captured) -> bool:
    return _close(mistake.values["output"], fix.values["output"])


def _right_mean(mistake: Captured, fix: Captured) -> bool:
    return _close(mistake.values["returned"], fix.values["numpy_mean"])


def _no_two_alike(mistake: Captured, fix: Captured) -> bool:
    return mistake.values["distinct"] == len(fix.values["with_split"])


def _true_gradient(mistake: Captured, fix: Captured) -> bool:
    return _close(mistake.values["gradient"], mistake.values["full_batch_gradient"])


def grad_outside_shard_map() -> float:
    """The idiomatic form: shard_map computes the loss (a pmean of the shard losses), grad is taken outside."""
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    n = jax.local_device_count()
    mesh = Mesh(np.array(jax.local_devices()), (DATA_AXIS,))
    x = jnp.arange(2.0 * n)
    sharded_loss = jax.shard_map(lambda w, x, y: lax.pmean(rt._loss(w, x, y), DATA_AXIS), mesh=mesh,
                                 in_specs=(P(), P(DATA_AXIS), P(DATA_AXIS)), out_specs=P())
    return float(jax.jit(jax.grad(sharded_loss))(jnp.array(0.5), x, 3 * x + 1))  # autodiff handles the pmean


def shard_map_trap_fixes() -> dict[str, Any]:
    """Three corrections inside shard_map (`shard_map_trap_fix`), and the idiomatic one: grad outside."""
    return {**rt.shard_map_trap_fix(), "grad_outside_shard_map": grad_outside_shard_map()}


def _shard_map_claim(m, f) -> bool:
    fixes = ("check_vma_false_plus_pmean", "pcast_plus_pmean", "no_collective_divide_by_D", "grad_outside_shard_map")
    return _close(m["ratio"], m["devices"]) and all(_close(f[k], f["full_batch_gradient"]) for k in fixes)


PITFALLS = (
    Pitfall("leading_axis", RAISES, sh.leading_axis_mistake, sh.leading_axis_fix, _leading_axis_claim),
    Pitfall("indivisible", RAISES, sh.indivisible_mistake, sh.indivisible_fix, _indivisible_claim),
    Pitfall("late_config", RAISES, rt.late_config_mistake, rt.late_config_fix, _late_config_claim,
            helpers=(rt.run_in_fresh_python,)),
    Pitfall("late_xla_flags", SILENT, rt.late_xla_flags_mistake, rt.late_xla_flags_fix,
            _values(lambda m, f: m["devices_after"] == m["devices_before"] == 1 and f["devices"] == 4),
            helpers=(rt.run_in_fresh_python,)),
    Pitfall("pmap_of_jit", WASTEFUL, rt.pmap_of_jit_mistake, rt.pmap_of_jit_fix,
            _values(lambda m, f: m["same_compiled_hlo"]), helpers=(rt.normalize_hlo,)),
    Pitfall("jit_of_pmap", WASTEFUL, rt.jit_of_pmap_mistake, rt.jit_of_pmap_fix,
            _values(lambda m, f: _close(m["output"], f["output"]) and m["traces_for_3_calls"] == 1)),
    Pitfall("unreplicated_params", RAISES, sh.unreplicated_mistake, sh.unreplicated_fix, _unreplicated_claim,
            helpers=(sh._linear_step,), harmless=_same_w),
    Pitfall("device_put_replicated", RAISES, sh.device_put_replicated_mistake, sh.device_put_replicated_fix,
            _raises_with("AttributeError", "jax.device_put")),
    Pitfall("device_put_sharded", RAISES, mg.device_put_sharded_mistake, mg.device_put_sharded_fix,
            lambda m, f: _raises_with("AttributeError", "jax.device_put")(m, f) and f.values["device_d_holds_piece_d"]),
    Pitfall("index_output", WASTEFUL, rt.index_output_mistake, rt.index_output_fix, _values(_index_output_claim)),
    Pitfall("out_axes_none", SILENT, sh.out_axes_none_mistake, sh.out_axes_none_fix,
            _values(lambda m, f: m["returned"] == m["per_device"][0]
                    and len(set(m["per_device"].tolist())) == jax.local_device_count()
                    and _close(f["returned"], f["numpy_mean"])), harmless=_right_mean),
    Pitfall("gather_scalar", RAISES, sh.gather_scalar_mistake, sh.gather_scalar_fix, _raises("ValueError")),
    Pitfall("unbound_axis", RAISES, sh.unbound_axis_mistake, sh.unbound_axis_fix, _raises("NameError")),
    Pitfall("wrong_axis_name", RAISES, sh.wrong_axis_name_mistake, sh.wrong_axis_name_fix, _raises("NameError")),
    Pitfall("same_key", SILENT, sh.same_key_mistake, sh.same_key_fix,
            _values(lambda m, f: m["distinct"] == 1 and _close(f["with_split"], f["with_fold_in"])
                    and f["distinct"] == len(f["with_split"]) == jax.local_device_count()), harmless=_no_two_alike),
    # Timings are shown, not judged: the claim is only that both ran and measured something.
    Pitfall("timing", SILENT, rt.timing_mistake, rt.timing_fix,
            _values(lambda m, f: min(m.values()) > 0 and f["median_s"] > 0 and f["compile_s"] >= 0),
            helpers=(rt._heavy,)),
    Pitfall("shard_map_trap", SILENT, rt.shard_map_trap_mistake, shard_map_trap_fixes, _values(_shard_map_claim),
            helpers=(grad_outside_shard_map, rt.shard_map_trap_fix, rt._loss, rt._shard_map_grad),
            harmless=_true_gradient),
    Pitfall("side_effects", SILENT, rt.side_effects_mistake, rt.side_effects_fix,
            _values(lambda m, f: m["appends"] == 1 and f["appends"] == 2 * len(set(f["values_seen"])))),
    # --- migrating from the old pmap (pmap is jit(shard_map) since JAX 0.8) ---
    Pitfall("committed_input", RAISES, mg.committed_input_mistake, mg.committed_input_fix, _committed_input_claim,
            harmless=_same_output),
    Pitfall("shard_map_in_specs", RAISES, mg.in_specs_mistake, mg.in_specs_fix, _in_specs_claim),
    Pitfall("mesh_constructors", RAISES, mg.mesh_constructors_mistake, mg.mesh_constructors_fix,
            _mesh_constructors_claim),
    Pitfall("nested_pmap", RAISES, mg.nested_pmap_mistake, mg.nested_pmap_fix, _nested_pmap_claim,
            helpers=(mg.grid,)),
    Pitfall("pmap_shmap_merge_flag", RAISES, mg.merge_flag_mistake, mg.merge_flag_fix, _merge_flag_claim,
            helpers=(rt.run_in_fresh_python,)),
)
