"""Sheet 5 (two mesh axes) bound to D = 1, 2, 3, 5 and 8 inside this process, as the Worksheet page binds it
on a runtime of D devices: each step's computed answer against an independent reference (the bytes of the
split arrays and of the ring all-reduces counted by hand, the Scaling Book's row by its formula), and the
link of each step opening the mesh lab on the same devices and shape. The Worksheet page itself, at each D in
a process of its own: tests/system/test_pages_at_each_device_count.py."""

import math

import pytest

from pmap_core.concepts import mesh_2d_view
from pmap_core.practice import worksheets

DEVICE_COUNTS = (1, 2, 3, 5, 8)
SHEET = next(sheet for sheet in worksheets.load_sheets().sheets if sheet.id == "5_meshes")
BATCH, FEATURES, HIDDEN = 240, 8, 120


def used_devices(runtime: int) -> int:
    """The largest d ≤ min(8, D) that divides 120."""
    return max(d for d in range(1, min(8, runtime) + 1) if 120 % d == 0)


def squarest(d: int) -> tuple[int, int]:
    data = max(a for a in range(1, math.isqrt(d) + 1) if d % a == 0)
    return data, d // data


def references(runtime: int) -> dict[str, float | str]:
    d = used_devices(runtime)
    x, y = squarest(d)
    local = FEATURES * HIDDEN / y + 2 * HIDDEN / y + 1  # w1's columns, b1 and w2's rows, b2
    return {
        "w1_type": f"float32[{FEATURES},{HIDDEN}@model]",
        "param_bytes": 4 * local,
        "bytes_model": 2 * (y - 1) / y * BATCH / x * 4,
        "bytes_data": 2 * (x - 1) / x * (local + 1) * 4,  # the gradient's all-reduce carries the loss too
        # What the compiled step sends over both axes, beside the book's 4BD + 4BD (30,720 B on every mesh).
        "book_tp": 2 * (y - 1) / y * BATCH / x * 4 + 2 * (x - 1) / x * (local + 1) * 4,
        "ambiguous_error": "ShardingTypeError",
        "reduced_all_reduces": 1.0 if d > 1 else 0.0,
    }


def test_the_sheet_has_the_steps_the_references_name():
    assert [step.id for step in SHEET.steps] == list(references(8))
    assert {step.lab for step in SHEET.steps} == {"mesh_2d"}


@pytest.mark.parametrize("runtime", DEVICE_COUNTS)
def test_every_step_is_answered_at_each_device_count_as_the_references_say(runtime):
    expected = references(runtime)
    bound = SHEET.at(runtime)
    d = used_devices(runtime)
    for step in bound.steps:
        assert step.values["devices"] == d and step.settings["devices"] == d, (runtime, step.id)
        if "mesh" in step.settings:  # the lab opens on the shape the answer was computed on
            assert step.settings["mesh"] == step.args["mesh_id"] == mesh_2d_view.shape_id(*squarest(d))
        answer = worksheets.compute_answer(step)
        assert worksheets.is_correct(step, expected[step.id], answer), (runtime, step.id, answer, expected[step.id])
        for lang in worksheets.LANGS:
            shown = worksheets.shown(answer)
            assert shown in step.say(step.explain, lang, answer=shown)
            assert "{" not in step.say(step.question, lang)


def test_the_book_tp_step_depends_on_the_run():
    answers = {runtime: worksheets.compute_answer(SHEET.at(runtime).step("book_tp")) for runtime in (1, 3, 8)}
    assert answers[1] == 0 and len(set(answers.values())) == 3
    assert all(answer < 2 * (4 * BATCH * FEATURES + 4 * BATCH * FEATURES) for answer in answers.values())
