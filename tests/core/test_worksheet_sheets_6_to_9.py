"""Sheets 6 to 9 (shard_map and the D× gradient trap, jit with shardings, ZeRO, multi-process loading) bound to
D = 1, 2, 3, 5 and 8 inside this process, as the Worksheet page binds them on a runtime of D devices: each step's
computed answer against an independent reference (the trap's factors by their rule, the bytes of the padded
layers and of the ring collectives counted by hand, the rows of each process from `train.loading` on real
devices), and each step's link opening its lab on the same devices. The Worksheet page itself, at each D in a
process of its own: tests/system/test_pages_at_each_device_count.py."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from pmap_core.concepts import multiprocess
from pmap_core.practice import worksheets
from pmap_core.train import loading

DEVICE_COUNTS = (1, 2, 3, 5, 8)
SHEETS = {sheet.id: sheet for sheet in worksheets.load_sheets().sheets}
LAYERS = (16 * 64 + 64, 64 + 1)  # the sharded-DP lab's MLP: w1 and b1, then w2 and b2


def used(runtime: int, divides: int = 0) -> int:
    """The largest d <= min(8, D) that divides `divides` (any d when it is 0)."""
    return max(d for d in range(1, min(8, runtime) + 1) if not divides or divides % d == 0)


def squarest(d: int) -> tuple[int, int]:
    x = max(a for a in range(1, math.isqrt(d) + 1) if d % a == 0)
    return x, d // x


def references(sheet_id: str, runtime: int) -> dict[str, float | str]:
    if sheet_id == "6_shard_map":
        d = used(runtime)
        return {"pmean_factor": d, "psum_factor": d * d, "no_collective_factor": d,
                "body_shape": "(2, 3)", "out_specs_error": "ValueError", "unchecked_shape": "(2, 3)"}
    if sheet_id == "7_jit_shardings":
        d = used(runtime, 24)
        return {"x_type": "float32[24@data,4]", "x_block": str((24 // d, 4)),
                "gather_kind": "all-gather" if d > 1 else "none", "gather_bytes": (d - 1) / d * 24 * 4 * 4,
                "sum_type": "float32[4]", "kept_kind": "none"}
    if sheet_id == "8_zero":
        d = used(runtime, 48)
        shards = [-(-n // d) for n in LAYERS]
        return {"mixed_zero2_per_param": 2 + (2 + 12) / d, "zero1_sent_gb": 8 * (d - 1) / d,
                "zero3_param_bytes": 4 * sum(shards),
                "zero3_padding": 4 * sum(s * d - n for s, n in zip(shards, LAYERS, strict=True)),
                "zero3_sent": 3 * 4 * d * sum(shards) * (d - 1) / d}  # 2 gathers + 1 reduce-scatter, padded
    d = used(runtime, 24)
    processes, per_process = squarest(d)
    return {"rows_per_process": 48 // processes, "rows_per_device": 48 // d,
            "process_of_last_device": (d - 1) // per_process, "loaded_per_step": 48, "reads_per_epoch": "once"}


CASES = [(sheet_id, runtime) for sheet_id in ("6_shard_map", "7_jit_shardings", "8_zero", "9_multiprocess")
         for runtime in DEVICE_COUNTS]


def test_the_sheets_have_the_steps_the_references_name():
    for sheet_id in ("6_shard_map", "7_jit_shardings", "8_zero", "9_multiprocess"):
        assert [step.id for step in SHEETS[sheet_id].steps] == list(references(sheet_id, 8)), sheet_id
    assert sum(len(SHEETS[s].steps) for s in ("6_shard_map", "7_jit_shardings", "8_zero", "9_multiprocess")) >= 16


@pytest.mark.parametrize("sheet_id,runtime", CASES, ids=[f"{s}-D{d}" for s, d in CASES])
def test_every_step_is_answered_at_each_device_count_as_the_references_say(sheet_id, runtime):
    expected = references(sheet_id, runtime)
    for step in SHEETS[sheet_id].at(runtime).steps:
        where = (sheet_id, runtime, step.id)
        assert step.settings["devices"] == step.values["devices"] <= runtime, where  # the lab opens on the same d
        answer = worksheets.compute_answer(step)
        assert worksheets.is_correct(step, expected[step.id], answer), (*where, answer, expected[step.id])
        shown = worksheets.shown(answer)
        for lang in worksheets.LANGS:
            assert shown in step.say(step.explain, lang, answer=shown), where
            assert "{" not in step.say(step.question, lang), where


@pytest.mark.parametrize("runtime", DEVICE_COUNTS)
def test_the_multiprocess_steps_open_the_lab_on_the_group_they_ask_about(runtime):
    for step in SHEETS["9_multiprocess"].at(runtime).steps:
        d = step.values["devices"]
        assert (step.settings["processes"], step.settings["per_process"]) == squarest(d)
        assert step.settings["processes"] <= 2 and step.settings["per_process"] <= 4  # what the lab allows


@pytest.mark.parametrize("devices", [1, 2, 3, 8])
def test_one_process_loads_the_rows_train_loading_gives_its_devices(devices):
    """With one process, its rows are what `loading.load_local` reads for this process's first d devices."""
    group = multiprocess.group_loading(1, devices, 48, 96)
    spec = loading.DataSpec("mlp", multiprocess.FEATURES, 96, 0)
    for step in range(group.steps_per_epoch):
        rows, _ = loading.load_local(spec, 48, step, jax.devices()[:devices])
        assert group.rows[step][0] == tuple(int(i) for i in np.ravel(rows))


def test_two_processes_split_every_step_between_them_and_read_each_sample_once():
    group = multiprocess.group_loading(2, 4, 48, 96)
    for step_rows in group.rows:
        assert [len(rows) for rows in step_rows] == [24, 24] and not set(step_rows[0]) & set(step_rows[1])
    assert sorted(i for step_rows in group.rows for rows in step_rows for i in rows) == list(range(96))
    assert group.reads_per_sample == "once"
