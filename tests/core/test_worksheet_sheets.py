"""Worksheets: every step's answer is what its function computes here (each step bound to this
runtime's device count); predictions are scored against it (the computed value accepted, a wrong one
refused) in both languages; texts in both languages use the glossary's terms; sheets that name
anything outside the allow-list are refused. Other device counts: tests/core/test_worksheet_devices.py."""

from __future__ import annotations

import functools
import re
import string

import pytest

from labs.texts import GLOSSARY
from pmap_core import LabInputError
from pmap_core.practice import worksheets
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import sweep as run_sweep

LOADED = worksheets.load_sheets()
# Bound to this runtime's D, as the page binds them.
SHEETS = tuple(sheet.at(worksheets.runtime_devices()) for sheet in LOADED.sheets)
STEPS = [(sheet, step) for sheet in SHEETS for step in sheet.steps]
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


@functools.cache
def tiny_sweep_result():
    """A real sweep of the model the open steps ask about, as short as a sweep can be."""
    config = TrainConfig(model="mlp", devices=1, global_batch=64, steps=4, chunk=2, scaling="strong")
    return run_sweep(config, [1, 2, 4, 8])


def tiny_sweep() -> worksheets.MeasuredSweep:
    return worksheets.measured_sweep(tiny_sweep_result())


@functools.cache
def answers(sheet_id: str) -> dict[str, float | str]:
    """Each sheet's answers, computed once."""
    sheet = next(s for s in SHEETS if s.id == sheet_id)
    return {step.id: worksheets.compute_answer(step, tiny_sweep() if step.needs_sweep else None)
            for step in sheet.steps}


def wrong_prediction(step: worksheets.Step, answer: float | str) -> float | str:
    if step.kind == worksheets.CHOICE:
        return next(c for c in step.choice_ids() if c != answer)
    if step.kind == worksheets.SHAPE:
        dims = [int(n) for n in re.findall(r"\d+", str(answer))]
        return str(tuple([dims[0] + 1, *dims[1:]]))
    return float(answer) * (1 + 2 * step.tolerance) + 1


def test_every_sheet_in_the_repository_loads():
    assert not LOADED.broken, LOADED.broken
    assert [sheet.id for sheet in LOADED.sheets] == [p.stem for p in sorted(worksheets.WORKSHEETS_DIR.glob("*.toml"),
                                                                          key=worksheets.sheet_order)]


def test_enough_exercises_over_enough_labs():
    assert len(STEPS) >= 12
    assert len({step.lab for _, step in STEPS}) >= 6
    assert any(step.needs_sweep for _, step in STEPS)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("sheet,step", STEPS, ids=[f"{sheet.id}-{step.id}" for sheet, step in STEPS])
def test_the_computed_answer_is_accepted_and_a_wrong_one_refused(sheet, step, lang):
    answer = answers(sheet.id)[step.id]
    shown = worksheets.shown(answer)
    assert worksheets.is_correct(step, answer, answer)
    assert not worksheets.is_correct(step, wrong_prediction(step, answer), answer)
    if step.kind == worksheets.SHAPE:  # as a student types it
        assert worksheets.is_correct(step, shown.strip("()").rstrip(","), answer)
    if step.kind == worksheets.NUMBER and step.tolerance:
        assert worksheets.is_correct(step, float(answer) * (1 + step.tolerance / 2), answer)
    # What the student reads in this language: the question, hints, choices, and the explanation with the value.
    assert step.say(step.question, lang) and all(step.say(hint, lang) for hint in step.hints)
    assert shown in step.say(step.explain, lang, answer=shown)
    if step.kind == worksheets.CHOICE:
        assert answer in step.choice_ids() and all(c[lang] for c in step.choices)


def test_open_steps_read_the_students_sweep():
    sweep = tiny_sweep()
    assert [p.devices for p in sweep.points] == [1, 2, 4, 8]
    by_d = {p.devices: p for p in sweep.points}
    below = next((d for d, p in sorted(by_d.items()) if p.efficiency < 0.5), 0)
    assert worksheets.smallest_devices_below(sweep, "mlp", "strong", 0.5) == below
    assert worksheets.fastest_devices(sweep, "mlp", "strong") == max(by_d, key=lambda d: by_d[d].throughput)
    with pytest.raises(LabInputError) as refused:
        worksheets.smallest_devices_below(sweep, "linear", "strong", 0.5)
    assert refused.value.code == "sweep_mismatch"
    open_step = next(step for _, step in STEPS if step.needs_sweep)
    with pytest.raises(LabInputError) as missing:
        worksheets.compute_answer(open_step)
    assert missing.value.code == "needs_sweep"


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_texts_in_both_languages_with_the_glossary_terms():
    for sheet, step in STEPS:
        texts = [sheet.title, sheet.intro, step.question, step.explain, *step.hints, *step.choices]
        for text in texts:
            assert not CJK.search(text["en"]), (sheet.id, step.id, text["en"])
            assert CJK.search(text["zh"]) or text["zh"] == text["en"], (sheet.id, step.id, text["zh"])
            assert _placeholders(text["en"]) == _placeholders(text["zh"]) <= {
                worksheets.ANSWER, *worksheets.DEVICE_VALUES}, (sheet.id, step.id)
            for entry in GLOSSARY:
                flags = 0 if re.search(r"[A-Z]", entry["en_pattern"]) else re.IGNORECASE
                named = bool(re.search(entry["en_pattern"], text["en"], flags))
                if named:
                    assert any(form in text["zh"] for form in entry["zh_forms"]), (step.id, entry["en"], text["zh"])
                if named or entry.get("banned_where") != "term":  # as tests/pages/test_texts.py reads the glossary
                    assert not [b for b in entry.get("banned_zh", ()) if b in text["zh"]], (step.id, text["zh"])


GOOD_STEP = """
[[steps]]
id = "s"
lab = "basics"
settings = {{ batch = 8 }}
kind = "number"
function = "{function}"
args = {{ batch = 8, devices = 2 }}
result = {result}
question = {{ en = "q", zh = "问" }}
explain = {{ en = "e", zh = "解" }}
hints = [{{ en = "h", zh = "提" }}]
"""
HEAD = 'title = { en = "t", zh = "题" }\nintro = { en = "i", zh = "介" }\n'


def _sheet(function: str = "pmap_core.concepts.sharding.plan_shards", result: str = '["per_device"]') -> str:
    return HEAD + GOOD_STEP.format(function=function, result=result)


def test_a_well_formed_sheet_loads_and_runs():
    step = worksheets.parse_sheet("t", _sheet()).steps[0]
    assert worksheets.compute_answer(step) == 4.0


@pytest.mark.parametrize("text", [
    _sheet(function="os.system"),
    _sheet(function="pmap_core.practice.worksheets.function_of"),
    _sheet(function="pmap_core.practice.quiz.registry.get_question"),
    _sheet(result='["__class__", "__init__", "__globals__"]'),
    _sheet(result='["per_device", true]'),
    _sheet().replace('zh = "问" ', ""),
    _sheet().replace('kind = "number"', 'kind = "essay"'),
    _sheet().replace('kind = "number"', 'kind = "number"\nanswer = 4'),
    _sheet() + _sheet().replace(HEAD, ""),
    "title = [",
    HEAD + "steps = []",
    _sheet().replace('function = "pmap_core.concepts.sharding.plan_shards"', 'function = ["os.system"]'),
    _sheet().replace('kind = "number"', 'kind = "number"\nchoices = 5'),
], ids=["os", "unlisted", "unlisted-quiz", "dunder-path", "bool-index", "one-language", "unknown-kind",
        "typed-in-answer", "duplicate-ids", "not-toml", "no-steps", "function-not-a-name", "choices-not-a-list"])
def test_a_sheet_outside_the_rules_is_refused(text):
    with pytest.raises(worksheets.WorksheetError):
        worksheets.parse_sheet("bad", text)


@pytest.mark.parametrize("typed,shape", [("(4, 2)", "(4, 2)"), ("4,2", "(4, 2)"), ("[8]", "(8,)"),
                                         ("(8,)", "(8,)"), ("4x2", "(4, 2)")])
def test_shapes_as_students_type_them(typed, shape):
    assert worksheets.parse_shape(typed) == shape


@pytest.mark.parametrize("typed", ["", "four", "(4, -2)", "![i](http://127.0.0.1:9/p.png)"])
def test_a_shape_that_is_not_one_is_refused(typed):
    with pytest.raises(LabInputError):
        worksheets.parse_shape(typed)
