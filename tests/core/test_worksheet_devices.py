"""Worksheets at every device count: a step that runs on devices takes its count from the runtime's D
(`devices = { at_most, divides }`), so every step is answerable, and says what it ran, at D = 1, 2, 3,
5 and 8; the lab its link opens gets the same numbers. Steps are bound to each D here, in this 8-device
process (a step runs on a subset of the devices); tests/system/test_pages_at_each_device_count.py runs them in a
process of each D. Also: what a sheet may not say about devices and placeholders, refused when it loads,
and one broken sheet never hides the others."""

from __future__ import annotations

import functools
import shutil
import string

import pytest

from pmap_core.concepts import mesh_view
from pmap_core.practice import worksheets
from pmap_core.runtime import device_ladder

DEVICE_COUNTS = (1, 2, 3, 5, 8)
SHEETS = worksheets.load_sheets().sheets
TEMPLATES = [(sheet, step) for sheet in SHEETS for step in sheet.steps]
IDS = [f"{sheet.id}-{step.id}" for sheet, step in TEMPLATES]


def sweep_at(devices: int, model: str = "mlp", scaling: str = "strong") -> worksheets.MeasuredSweep:
    """A sweep as the training lab measures it on a runtime of D devices (its ladder): efficiency
    halving at each step up, throughput highest at the middle of the ladder."""
    ladder = device_ladder(devices)
    points = tuple(worksheets.SweepMeasure(d, 0.7 ** i, 100.0 - (i - len(ladder) // 2) ** 2)
                   for i, d in enumerate(ladder))
    return worksheets.MeasuredSweep(model, scaling, points)


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@functools.cache
def bound(devices: int) -> dict[tuple[str, str], tuple[worksheets.Step, float | str]]:
    """Every step bound to a runtime of D devices, with the answer it computes."""
    found = {}
    for sheet in SHEETS:
        for step in sheet.at(devices).steps:
            sweep = sweep_at(devices) if step.needs_sweep else None
            found[sheet.id, step.id] = step, worksheets.compute_answer(step, sweep)
    return found


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_every_step_is_answerable_and_says_what_it_ran_at_each_device_count(devices):
    for (sheet_id, step_id), (step, answer) in bound(devices).items():
        where = (devices, sheet_id, step_id)
        shown = worksheets.shown(answer)
        assert worksheets.is_correct(step, answer, answer), where
        for lang in worksheets.LANGS:
            said = [step.say(step.question, lang), *(step.say(h, lang) for h in step.hints),
                    *(step.say(c, lang) for c in step.choices)]
            explained = step.say(step.explain, lang, answer=shown)
            assert shown in explained, where
            assert "{" not in " ".join(said) + explained, where
            if step.devices and "devices" in step.args:  # its question or explanation names the count it ran on
                assert fields(step.question[lang] + step.explain[lang]) & set(worksheets.DEVICE_VALUES), where


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_a_step_runs_on_at_most_the_devices_there_are_and_its_lab_gets_the_same_settings(devices):
    for (sheet_id, step_id), (step, _) in bound(devices).items():
        where = (devices, sheet_id, step_id)
        values = [*step.settings.values(), *step.args.values()]
        assert not [v for v in values if isinstance(v, str) and v.startswith("$") and v != worksheets.SWEEP_ARG], where
        if step.devices is None:
            continue
        used = step.values["devices"]
        assert 1 <= used <= min(devices, step.devices.at_most), where
        assert step.settings["devices"] == used, where  # the lab's link opens on the same count
        assert step.args.get("devices", used) == used, where
        assert step.query("en")["devices"] == str(used), where
        if "mesh" in step.settings:
            assert step.settings["mesh"] == step.args["mesh_id"] == mesh_view.default_mesh(used), where


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_the_answers_at_each_device_count_are_the_rules(devices):
    got = {key: answer for key, (_, answer) in bound(devices).items()}
    d = min(4, devices)
    assert got["1_shards", "pad_per_device"] == -(-10 // d)
    assert got["1_shards", "pad_count"] == d * -(-10 // d) - 10
    assert got["1_shards", "drop_count"] == 14 % d
    assert got["1_shards", "owner_value"] == 3 * (d - 1) + 1000 * (d - 1)
    assert got["2_collectives", "all_gather_shape"] == str((d, 2))
    assert got["2_collectives", "all_gather_tiled_shape"] == str((2 * d,))
    scatter = max(n for n in range(1, d + 1) if 8 % n == 0)
    assert got["2_collectives", "reduce_scatter_shape"] == str((8 // scatter,))
    mesh = max(n for n in range(1, min(8, devices) + 1) if 8 % n == 0)
    x = max(a for a in range(1, mesh + 1) if mesh % a == 0 and a * a <= mesh)
    assert got["3_compiled", "mesh_block_shape"] == str((8 // x, 8 // (mesh // x)))
    assert got["3_compiled", "replicated_copies"] == mesh
    assert got["3_compiled", "pmap_jit_same"] == "true"
    memory = max(n for n in range(1, min(8, devices) + 1) if 256 % n == 0)
    assert got["4_scaling", "dp_memory"] == pytest.approx(16.0)
    assert got["4_scaling", "zero3_memory"] == pytest.approx(16.0 / memory)
    assert got["4_scaling", "fastest_d"] in device_ladder(devices)


def test_a_device_rule_picks_the_largest_count_that_fits():
    assert [worksheets.DeviceRule(4).pick(d) for d in (1, 2, 3, 5, 8, 64)] == [1, 2, 3, 4, 4, 4]
    assert [worksheets.DeviceRule(4, divides=8).pick(d) for d in (1, 2, 3, 5, 8)] == [1, 2, 2, 4, 4]
    assert [worksheets.DeviceRule(64, divides=256).pick(d) for d in (1, 3, 5, 6, 12, 64)] == [1, 2, 4, 4, 8, 64]


@pytest.mark.parametrize("devices", range(1, 9))
def test_a_steps_mesh_is_the_mesh_the_lab_opens_on(devices):
    values = worksheets.device_values(devices)
    assert values["mesh"] == mesh_view.default_mesh(devices)
    assert values["mesh_x"] * values["mesh_y"] == devices and values["last"] == devices - 1


def test_a_step_without_a_device_rule_is_the_same_at_every_count():
    plain = next(step for _, step in TEMPLATES if step.devices is None and not step.needs_sweep)
    assert plain.at(1) is plain and plain.bound and not plain.values


# --- what a sheet may say, checked when it loads ----------------------------------------

HEAD = 'title = { en = "t", zh = "题" }\nintro = { en = "i", zh = "介" }\n'
STEP = """
[[steps]]
id = "s"
lab = "collectives"
{rule}
settings = {{ op = "psum", devices = "{count}", size = 4 }}
kind = "number"
function = "pmap_core.concepts.collectives.run_collective"
args = {{ op = "psum", devices = "{count}", size = 4 }}
result = ["after", 0, 0]
question = {{ en = "{question_en}", zh = "{question_zh}" }}
explain = {{ en = "{explain_en}", zh = "{explain_zh}" }}
hints = [{{ en = "h", zh = "提" }}]
"""


def sheet_text(rule: str = "devices = { at_most = 4 }", count: str = "$devices",
               question_en: str = "psum, D = {devices}?", question_zh: str = "{devices} 台设备？",
               explain_en: str = "Sum: {answer}.", explain_zh: str = "和：{answer}。") -> str:
    return HEAD + STEP.format(rule=rule, count=count, question_en=question_en, question_zh=question_zh,
                              explain_en=explain_en, explain_zh=explain_zh)


def test_a_step_with_a_device_rule_loads_binds_and_runs():
    step = worksheets.parse_sheet("t", sheet_text()).steps[0]
    assert not step.bound
    at_three = step.at(3)
    assert at_three.settings["devices"] == at_three.args["devices"] == 3
    assert at_three.say(at_three.question, "en") == "psum, D = 3?"
    assert isinstance(worksheets.compute_answer(at_three), float)
    assert isinstance(worksheets.compute_answer(step), float)  # unbound: on this runtime's devices


@pytest.mark.parametrize("text,named", [
    (sheet_text(explain_en="A dict {x: 1} sums to {answer}."), "{x: 1}"),
    (sheet_text(explain_en="A brace { alone: {answer}."), "brace"),
    (sheet_text(explain_zh="和 } 是 {answer}。"), "brace"),
    (sheet_text(question_en="{answer}?"), "{answer}"),
    (sheet_text(explain_en="Sum: {answer.real}."), "{answer.real}"),
    (sheet_text(explain_en="Sum: {answer!r}."), "{answer!r}"),
    (sheet_text(explain_en="Sum: {answer:>9}."), "{answer:>9}"),
    (sheet_text(rule="", count="4"), "{devices}"),
    (sheet_text(question_zh="几台设备？"), "same values"),
], ids=["literal-dict", "single-open", "single-close-zh", "answer-in-question", "attribute", "conversion",
        "format-spec", "no-rule", "languages-differ"])
def test_a_text_whose_placeholders_would_fail_or_mislead_is_refused_when_the_sheet_loads(text, named):
    with pytest.raises(worksheets.WorksheetError) as refused:
        worksheets.parse_sheet("braces", text)
    message = str(refused.value)
    assert message.startswith("worksheets/braces.toml, step 1 (s), "), message
    assert named in message, message


def test_a_literal_brace_is_written_twice():
    step = worksheets.parse_sheet("t", sheet_text(explain_en="P() is {{}}: {answer}.")).steps[0].at(2)
    assert step.say(step.explain, "en", answer="1.0") == "P() is {}: 1.0."


@pytest.mark.parametrize("text", [
    sheet_text(rule="", count="$devices", question_en="q", question_zh="问"),
    sheet_text(count="$device"),
    sheet_text(count="$sweep"),
    sheet_text(rule="devices = { at_most = 0 }"),
    sheet_text(rule="devices = { at_most = 65 }"),
    sheet_text(rule="devices = { divides = 8 }"),
    sheet_text(rule='devices = { at_most = "4" }'),
    sheet_text(rule="devices = { at_most = 4, odd = true }"),
    sheet_text(rule="devices = 4"),
], ids=["no-rule", "unknown-name", "sweep-in-settings", "zero", "past-64", "no-at-most", "text", "unknown-key",
        "not-a-table"])
def test_a_sheet_that_names_devices_wrongly_is_refused(text):
    with pytest.raises(worksheets.WorksheetError):
        worksheets.parse_sheet("bad", text)


def test_one_broken_sheet_leaves_the_others_and_says_which_file_and_why(tmp_path):
    first_two = sorted(worksheets.WORKSHEETS_DIR.glob("*.toml"), key=worksheets.sheet_order)[:2]
    for path in first_two:
        shutil.copy(path, tmp_path)
    (tmp_path / "0_broken.toml").write_text('title = { en = "t", zh = "题" \n', encoding="utf-8")
    (tmp_path / "9_braces.toml").write_text(sheet_text(explain_en="{oops} {answer}"), encoding="utf-8")
    (tmp_path / "5_bytes.toml").write_bytes(b"\xff\xfe not text")
    loaded = worksheets.load_sheets(tmp_path)
    assert [sheet.id for sheet in loaded.sheets] == [path.stem for path in first_two]
    problems = {error.params["where"].split(",")[0]: error.params["problem"] for error in loaded.broken}
    assert list(problems) == ["worksheets/0_broken.toml", "worksheets/5_bytes.toml", "worksheets/9_braces.toml"]
    assert problems["worksheets/0_broken.toml"].startswith("not valid TOML")
    assert "cannot be read" in problems["worksheets/5_bytes.toml"]
    assert "{oops}" in problems["worksheets/9_braces.toml"]
    assert "step 1 (s), explain" in loaded.broken[2].params["where"]
