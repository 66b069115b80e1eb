"""Every common mistake behaves on the installed JAX as the lab says, checked against references."""

import functools
import threading
import time
import warnings

import jax
import numpy as np
import pytest

from labs.texts import table as text_table
from pmap_core import LabInputError
from pmap_core.practice import pitfalls
from pmap_core.practice.pitfalls import runtime as pitfalls_runtime

N = jax.local_device_count()


@functools.cache
def run(pitfall_id):
    return pitfalls.run_pitfall(pitfall_id)


def test_there_are_at_least_twelve_entries_of_every_kind():
    ids = pitfalls.pitfall_ids()
    assert len(ids) >= 12 and len(set(ids)) == len(ids)
    kinds = {pitfalls.get_pitfall(i).kind for i in ids}
    assert kinds == {pitfalls.RAISES, pitfalls.SILENT, pitfalls.WASTEFUL}


def test_every_entry_has_its_texts_in_both_languages():
    table = text_table("mistakes")
    for pitfall_id in pitfalls.pitfall_ids():
        for key in (f"w.entry.{pitfall_id}", f"entry.{pitfall_id}.what", f"entry.{pitfall_id}.why",
                    f"entry.{pitfall_id}.fix"):
            assert table[key]["en"] and table[key]["zh"], key


@pytest.mark.parametrize("pitfall_id", pitfalls.pitfall_ids())
def test_the_claim_holds_and_the_fix_runs(pitfall_id):
    result = run(pitfall_id)
    assert not result.fix.raised, result.fix.as_text()
    assert result.claim_holds, (result.mistake.as_text(), result.fix.as_text())
    assert result.mistake.raised == (result.kind == pitfalls.RAISES)


@pytest.mark.parametrize("pitfall_id, error_type", [
    ("leading_axis", "ValueError"), ("indivisible", "IndivisibleError"), ("late_config", "RuntimeError"),
    ("unreplicated_params", "ValueError"), ("device_put_replicated", "AttributeError"),
    ("gather_scalar", "ValueError"), ("unbound_axis", "NameError"), ("wrong_axis_name", "NameError"),
])
def test_raising_mistakes_raise_what_jax_raises(pitfall_id, error_type):
    mistake = run(pitfall_id).mistake
    assert mistake.error_type == error_type
    assert mistake.error_message and "--------------------" not in mistake.error_message


def test_capture_keeps_the_real_exception_text():
    def fails():
        raise ValueError("first line\nsecond line\n--------------------\nfooter")
    captured = pitfalls.capture(fails)
    assert captured.raised and captured.error_type == "ValueError"
    assert captured.error_message == "first line\nsecond line"
    assert pitfalls.capture(lambda: {"x": np.arange(3)}).as_text() == "x: [0 1 2]"


def test_shard_map_trap_is_exactly_d_times_the_numpy_gradient():
    x = np.arange(2.0 * N)
    y = 3 * x + 1
    reference = np.mean(2 * (0.5 * x - y) * x)  # d/dw of mean((w x - y)^2) at w = 0.5
    mistake, fix = run("shard_map_trap").mistake.values, run("shard_map_trap").fix.values
    np.testing.assert_allclose(mistake["gradient"], N * reference, rtol=1e-5)
    for form in ("check_vma_false_plus_pmean", "pcast_plus_pmean", "no_collective_divide_by_D"):
        np.testing.assert_allclose(fix[form], reference, rtol=1e-5)


def test_out_axes_none_returns_device_zero_and_the_fix_the_mean():
    mistake, fix = run("out_axes_none").mistake.values, run("out_axes_none").fix.values
    assert mistake["returned"] == 0.0  # device 0 holds 0 * 10
    np.testing.assert_allclose(mistake["per_device"], np.arange(N) * 10.0)
    assert fix["returned"] == pytest.approx(np.mean(np.arange(N) * 10.0))


def test_one_key_gives_one_value_and_split_gives_n():
    mistake, fix = run("same_key").mistake.values, run("same_key").fix.values
    assert len(np.unique(mistake["noise_per_device"])) == 1
    assert len(np.unique(fix["with_split"])) == N
    np.testing.assert_array_equal(fix["with_split"], fix["with_fold_in"])


def test_late_xla_flags_are_ignored_and_early_ones_work():
    assert run("late_xla_flags").mistake.values == {"devices_before": 1, "devices_after": 1}
    assert run("late_xla_flags").fix.values == {"devices": 4}


def test_side_effects_run_once_and_debug_callback_every_call():
    assert run("side_effects").mistake.values["appends"] == 1
    assert "Tracer" in run("side_effects").mistake.values["what_was_seen"]
    assert run("side_effects").fix.values["values_seen"] == sorted([float(i) for i in range(N)] * 2)


def test_indexing_a_pmap_output_touches_every_device_but_a_shard_does_not():
    mistake, fix = run("index_output").mistake.values, run("index_output").fix.values
    assert mistake["y0_devices"] == N and mistake["y0_shape"] == (250_000,)
    assert fix["shard_shape"] == (1, 250_000) and fix["shard_device"].endswith(":0")


def test_pmap_of_jit_compiles_to_the_same_program_and_jit_of_pmap_traces_once():
    assert run("pmap_of_jit").mistake.values["same_compiled_hlo"] is True
    jit_of_pmap = run("jit_of_pmap").mistake.values
    assert jit_of_pmap["traces_for_3_calls"] == 1 and jit_of_pmap["warnings"] == []
    np.testing.assert_allclose(jit_of_pmap["output"], np.arange(N) * 2.0)


def test_unknown_entry_is_an_input_error():
    with pytest.raises(LabInputError) as error:
        pitfalls.run_pitfall("no_such_mistake")
    assert error.value.code == "unknown_pitfall"


def test_jit_of_pmap_records_only_its_own_warnings_while_another_session_warns(recwarn):
    """Two sessions in one server: the other one's warnings must not show up in this one's result,
    and this one's capture must not swallow them."""
    done, sent = threading.Event(), []

    def other_session():
        while not done.is_set():
            sent.append(f"the other session's warning {len(sent)}")
            warnings.warn(sent[-1], UserWarning, stacklevel=1)
            done.wait(0.001)

    other = threading.Thread(target=other_session, daemon=True)
    other.start()
    try:
        while len(sent) < 3:  # the other session is warning before ours starts...
            time.sleep(0.001)
        before = len(sent)
        ours = pitfalls_runtime.jit_of_pmap_mistake()
        during = len(sent) - before  # ...and while it runs
    finally:
        done.set()
        other.join(10)
    assert during > 0, "the other session sent no warning while ours ran: nothing was tested"
    assert ours["warnings"] == []
    theirs = [str(w.message) for w in recwarn if "other session" in str(w.message)]
    assert theirs == sent


def test_a_capture_gets_every_warning_of_its_thread_even_one_shown_before():
    for _ in range(2):
        with pitfalls_runtime.warnings_of_this_thread() as caught:
            warnings.warn("deprecated here", DeprecationWarning, stacklevel=1)  # ignored by default filters
            warnings.warn("shown once by default", UserWarning, stacklevel=1)
        assert [str(w.message) for w in caught] == ["deprecated here", "shown once by default"]


def test_leading_axis_at_most_the_device_count_runs_on_that_many_devices_and_longer_fails():
    """pmap maps a leading axis of length L onto L devices when L <= D (4 rows on 8 run on 4); L > D fails."""
    for rows in range(1, N + 1):
        out = jax.pmap(lambda v: v * 2)(np.arange(float(rows)))
        assert len(out.sharding.device_set) == rows
    for rows in (N + 1, 2 * N):
        with pytest.raises(Exception):  # noqa: B017 - ValueError or IndivisibleError, by divisibility
            jax.pmap(lambda v: v * 2)(np.arange(float(rows)))
    mistake, fix = run("leading_axis").mistake, run("leading_axis").fix.values
    assert mistake.error_type == "ValueError" and "squeeze" in mistake.error_message  # 2N rows on N devices
    assert fix["short_axis_rows"] == max(N // 2, 1) == fix["short_axis_ran_on_devices"]  # shown live, not typed
    table = text_table("mistakes")
    texts = " ".join(table[k][lang] for k in table if k.endswith(("leading_axis", "leading_axis.why",
                                                                   "indivisible.why", "indivisible.fix"))
                     for lang in ("en", "zh"))
    for false_claim in ("must equal", "≠", "必须等于"):
        assert false_claim not in texts


def test_shard_map_trap_fix_includes_the_idiomatic_grad_outside_shard_map():
    x = np.arange(2.0 * N)
    reference = np.mean(2 * (0.5 * x - (3 * x + 1)) * x)  # NumPy: d/dw of mean((w x - y)^2) at w = 0.5
    fix = run("shard_map_trap").fix.values
    np.testing.assert_allclose(fix["grad_outside_shard_map"], reference, rtol=1e-5)
    assert "grad_outside_shard_map" in text_table("mistakes")[
        "entry.shard_map_trap.fix"]["en"]
