"""The migration lab's steps from JAX 0.10.2 to 0.12 (pmap_core.concepts.migration_steps), at D = 1 and 3:
every fact a step shows is checked against a reference computed here (NumPy, the jaxpr's text, the
exception JAX raises, the flag read through jax.config, the package metadata), and each verdict against
the record of 0.10.2 it is computed from."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import importlib.metadata
import io
import re
import sys
import warnings

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.concepts import migration_steps as ms

DEVICE_COUNTS = (1, 3)


@functools.cache
def run(name: str, devices: int) -> ms.StepRun:
    return ms.run_step(name, devices)


def raised(call) -> str | None:
    """`Type: message` of what `call()` raises here, as a step shows it; None when it raises nothing."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the reference is whatever JAX raises
        return f"{type(error).__name__}: {ms.jax_message(error)}"
    return None


# --- the programs, against references ---------------------------------------------------------------


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_pmap_smap_and_shard_map_double_like_numpy_without_a_warning(devices):
    values = ms.three_maps(devices)
    x = np.arange(2.0 * devices, dtype=np.float32)
    np.testing.assert_array_equal(values["x"], x)
    for name in ms.MAPS:
        np.testing.assert_array_equal(values[name], 2 * x, err_msg=name)
        assert values[name].shape == (2 * devices,)
    assert values["pmap == smap == shard_map == 2 * x"] is True
    assert values["[hasattr(jax, f) for f in ('pmap', 'smap', 'shard_map')]"] == [True, True, True]
    first_line = jax.pmap.__doc__.strip().splitlines()[0]
    assert values["jax.pmap.__doc__.strip().splitlines()[0]"] == first_line
    assert first_line.startswith("Old way of doing parallel map. Use :py:func:`jax.shard_map` instead.")
    assert values["warnings"] == []
    mesh = jax.make_mesh((devices,), ("data",), devices=jax.devices()[:devices])
    assert values["mesh.axis_types"] == mesh.axis_types
    facts = run("three_maps", devices).facts
    assert facts["pmap"] == ms.show(2 * x) and facts["warnings"] == "[]"


def test_three_maps_sees_warnings_its_calls_raise():
    """The warnings fact is read, not assumed: a pmap body that warns shows up in it."""
    seen = []

    def noisy(v):
        warnings.warn("traced once", UserWarning, stacklevel=1)
        seen.append(1)
        return v

    ran = ms.attempt(lambda: jax.pmap(noisy, devices=jax.devices()[:1])(np.ones((1, 2))))
    assert seen and ran.warnings == ("UserWarning: traced once",)


def residual_lines(f, *args) -> list[str]:
    """JAX's own account of what f's backward pass keeps (print_saved_residuals, captured)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        jax.ad_checkpoint.print_saved_residuals(f, *args)
    return printed.getvalue().splitlines()


def test_remat_facts_are_what_the_installed_jax_has():
    values = ms.remat_now()
    policies = jax.checkpoint_policies
    assert values["type(jax.checkpoint_policies)"] is type(policies)
    assert values["dir(jax.checkpoint_policies)"] == [n for n in dir(policies) if not n.startswith("_")]
    assert len(values["dir(jax.checkpoint_policies)"]) == 12 and "dots_saveable" in dir(policies)
    custom = values["callable(jax.custom_remat)"]
    if hasattr(jax, "custom_remat"):
        assert not custom.raised and custom.value is True
    else:  # the wheel installed here, whatever its changelog lists
        assert str(custom) == raised(lambda: jax.custom_remat)
        assert str(custom) == "AttributeError: module 'jax' has no attribute 'custom_remat'"
    flag = values["jax.config.jax_remat3"]
    assert not flag.raised and flag.value is jax.config.values["jax_remat3"] is False


def test_dots_saveable_keeps_the_matmul_outputs_and_nothing_saveable_keeps_none():
    values = ms.remat_now()

    def layer(w, x):  # the step's layer, written again here
        return jnp.sum(jnp.sin(jnp.sin(x @ w) @ w))

    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    dots = str(jax.make_jaxpr(layer)(w, x)).count("dot_general")
    assert values["dot_general in make_jaxpr(layer)"] == dots == 2
    for policy, kept in (("dots_saveable", dots), ("nothing_saveable", 0)):
        f = jax.checkpoint(layer, policy=getattr(jax.checkpoint_policies, policy))
        assert values[f"residuals_kept(checkpoint(layer, policy={policy}))"] == kept
        lines = residual_lines(f, w, x)  # JAX's own listing agrees: the inputs, then what else it keeps
        assert sum("output of" in line for line in lines) == kept, lines
        assert sum("output of dot_general" in line for line in lines) == kept, lines
        assert ms.residuals_kept(f, w, x) == len(lines) - sum("from the argument" in line for line in lines)
    assert ms.residuals_kept(jax.checkpoint(layer, policy=jax.checkpoint_policies.everything_saveable), w, x) > dots


def test_empty_reads_the_jaxpr():
    values = ms.empty_now()
    jaxpr = jax.make_jaxpr(lambda: jnp.empty(4))()
    assert values["jax.make_jaxpr(lambda: jnp.empty(4))()"] == str(jaxpr)
    assert values["[e.primitive.name for e in jaxpr.eqns]"] == [e.primitive.name for e in jaxpr.eqns]
    zeros = "broadcast_in_dim 0.0" in str(jaxpr)
    assert values["'broadcast_in_dim 0.0' in str(jaxpr)"] is zeros
    assert not zeros and re.search(r"= empty\[", str(jaxpr))  # 0.11.0's uninitialized array, on this JAX
    assert "broadcast_in_dim 0.0" in ms.RECORDED["empty"]["jax.make_jaxpr(lambda: jnp.empty(4))()"]
    assert ms.RECORDED["empty"]["'broadcast_in_dim 0.0' in str(jaxpr)"] == "True"
    assert run("empty", 1).changed == (not zeros)


def test_cross_of_2_element_vectors_and_the_3_element_form_against_numpy():
    values = ms.cross_2d()
    a, b = np.ones(2), np.array([0.0, 1.0])
    formula = float(a[0] * b[1] - a[1] * b[0])
    assert values["a[0] * b[1] - a[1] * b[0]  # NumPy"] == formula == 1.0
    assert values["jnp.cross(jnp.pad(a, (0, 1)), jnp.pad(b, (0, 1)))[2]"] == formula
    outcome = values["jnp.cross(a, b)"]
    assert outcome.raised and outcome.error_type == "ValueError"
    assert str(outcome) == raised(lambda: jnp.cross(jnp.ones(2), jnp.array([0.0, 1.0])))
    assert str(outcome) == "ValueError: Dimension must be 3 for cross product"
    # The 3-element form is the 2-D cross product for any vectors, not only these.
    rng = np.random.default_rng(0)
    for _ in range(5):
        u, v = rng.normal(size=2), rng.normal(size=2)
        got = float(jnp.cross(jnp.pad(jnp.asarray(u), (0, 1)), jnp.pad(jnp.asarray(v), (0, 1)))[2])
        assert got == pytest.approx(u[0] * v[1] - u[1] * v[0], rel=1e-5, abs=1e-6)


def test_cloud_tpu_init_is_gone():
    outcome = ms.cloud_tpu_init()["importlib.import_module('jax.cloud_tpu_init').__name__"]
    with pytest.raises(ModuleNotFoundError) as error:
        importlib.import_module("jax.cloud_tpu_init")
    assert str(outcome) == f"ModuleNotFoundError: {error.value}" == \
        "ModuleNotFoundError: No module named 'jax.cloud_tpu_init'"


@pytest.mark.parametrize("name", ms.CORE_NAMES)
def test_removed_jax_core_names_raise_and_live_on_in_jax_extend_core(name):
    values = ms.core_names()
    assert values[f"hasattr(jax.extend.core, {name!r})"] is hasattr(jax.extend.core, name) is True
    outcome = values[f"jax.core.{name} is jax.extend.core.{name}"]
    assert outcome.error_type == "AttributeError" and outcome.warnings == ()
    assert str(outcome) == raised(lambda: getattr(jax.core, name))
    assert str(outcome) == f"AttributeError: module 'jax.core' has no attribute '{name}'"


def test_inline_lists_its_members_and_jit_takes_one():
    values = ms.inline_enum()
    assert values["[m.name for m in jax.Inline]"].value == [m.name for m in jax.Inline]
    assert set(values["[m.name for m in jax.Inline]"].value) == {"AUTO", "JAX_EARLY", "JAX_LATE", "XLA_EARLY",
                                                                "XLA_LATE"}
    assert values["float(jax.jit(lambda v: v + 1, inline=jax.Inline.AUTO)(1.0))"].value == 2.0


def test_the_interpreter_is_one_the_installed_jax_accepts():
    values = ms.interpreter()
    requires = importlib.metadata.metadata("jax")["Requires-Python"]
    assert values["importlib.metadata.metadata('jax')['Requires-Python']"] == requires
    assert values["sys.version_info[:3]"] == tuple(sys.version_info[:3])
    assert values["jax.__version__"] == jax.__version__
    minimum = tuple(int(part) for part in re.fullmatch(r">=\s*(\d+)\.(\d+)", requires).groups())
    assert sys.version_info[:2] >= minimum >= (3, 12)  # 0.11 dropped Python 3.11


# --- what a run holds, and the verdicts -------------------------------------------------------------


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_every_step_runs_and_compares_every_recorded_fact(devices):
    runs = ms.run_steps(devices)
    assert [r.name for r in runs] == list(ms.STEP_NAMES) == list(ms.RECORDED) == list(ms.CHANGELOG)
    for r in runs:
        assert r.devices == devices and r.recorded == ms.RECORDED[r.name]
        assert set(r.recorded) <= set(r.facts), r.name  # no recorded fact goes uncompared
        assert set(r.headline) <= set(r.recorded), r.name
        assert r.differs == tuple(k for k in r.recorded if r.facts[k] != r.recorded[k])
        assert r.changed == bool(r.differs)
        assert all(isinstance(v, str) for v in [*r.facts.values(), *r.recorded.values()])


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_the_verdicts_on_this_jax_follow_from_the_references(devices):
    """Which steps differ from 0.10.2, derived here from JAX itself: at least four do, and the same at every D."""
    def imports_cloud_tpu_init() -> bool:
        try:
            importlib.import_module("jax.cloud_tpu_init")
        except ModuleNotFoundError:
            return False
        return True

    expected = {
        "three_maps": False,  # the same facts as recorded: see the test of three_maps
        "remat": hasattr(jax, "custom_remat") or jax.config.values["jax_remat3"] is not False,
        "empty": "broadcast_in_dim 0.0" not in str(jax.make_jaxpr(lambda: jnp.empty(4))()),
        "cross": raised(lambda: jnp.cross(jnp.ones(2), jnp.array([0.0, 1.0]))) is not None,
        "cloud_tpu_init": not imports_cloud_tpu_init(),
        "core": not hasattr(jax.core, "new_jaxpr_eqn"),
        "inline": hasattr(jax, "Inline"),
        "python": importlib.metadata.metadata("jax")["Requires-Python"] != ">=3.11",
    }
    verdicts = {r.name: r.changed for r in ms.run_steps(devices)}
    assert verdicts == expected
    assert sum(verdicts.values()) >= 4
    assert verdicts == {r.name: r.changed for r in ms.run_steps(DEVICE_COUNTS[0])}


def test_a_verdict_changes_with_one_fact():
    same = run("three_maps", 3)
    assert not same.changed
    key = "pmap == smap == shard_map == 2 * x"
    other = dataclasses.replace(same, facts={**same.facts, key: "False"})
    assert other.changed and other.differs == (key,)
    missing = dataclasses.replace(same, facts={k: v for k, v in same.facts.items() if k != "warnings"})
    assert missing.differs == ("warnings",)  # a fact that did not run counts as differing


def test_the_record_is_0_10_2s_and_d_independent():
    assert ms.RECORDED_ON == "0.10.2"
    assert "x" not in ms.RECORDED["three_maps"] and "jax.__version__" not in ms.RECORDED["python"]
    assert ms.RECORDED["python"]["importlib.metadata.metadata('jax')['Requires-Python']"] == ">=3.11"
    assert ms.RECORDED["cross"]["jnp.cross(a, b)"] == "1.0"
    assert ms.RECORDED["cloud_tpu_init"]["importlib.import_module('jax.cloud_tpu_init').__name__"].startswith(
        "jax.cloud_tpu_init\nDeprecationWarning: ")
    assert ms.CHANGELOG["three_maps"] is None and "0.11.0" in ms.CHANGELOG_SECTION
    assert "will be removed in JAX 0.12.0" in ms.CHANGELOG["cross"]


# --- the helpers ---------------------------------------------------------------------------------------


def test_attempt_keeps_expected_errors_and_warnings_and_lets_the_rest_through():
    def warns_then_fails():
        warnings.warn("old", DeprecationWarning, stacklevel=1)
        raise ValueError("no\n--------------------\nJAX's note on removed frames")

    outcome = ms.attempt(warns_then_fails, ValueError)
    assert str(outcome) == "ValueError: no\nDeprecationWarning: old"
    assert ms.attempt(lambda: 3).value == 3 and str(ms.attempt(lambda: 3)) == "3"
    with pytest.raises(KeyError):
        ms.attempt(lambda: {}["missing"], ValueError)


def test_summary_and_listing():
    facts = {"a": "1", "b": "x\ny"}
    assert ms.summary(facts, ("b", "a")) == "b → x | y; a → 1"
    assert ms.listing(facts) == ">>> a\n1\n>>> b\nx\ny"


@pytest.mark.parametrize("name, devices", [("nothing", 1), ("three_maps", 0), ("three_maps", 10_000)])
def test_an_unknown_step_or_a_bad_device_count_is_refused(name, devices):
    with pytest.raises(LabInputError):
        ms.run_step(name, devices)
