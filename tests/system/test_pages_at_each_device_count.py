"""Every page at D = 1, 3 and 16, and the worksheet at D = 1, 3 and 8, each D in a process of its own (this one's D
here, the others in child processes, all at once; one child per D walks both, since starting a process costs more
than a page). The counts are the points where a page can differ: one device (nothing to split), an odd count that is
no power of two (3), the default 8, and more devices than the default (16); 2 or 5 would repeat 8 or 3. The pages at
the default 8, this process's own count, open on their defaults in tests/pages (each lab in
test_moved_from_browser.py, the home page in its heading test), so they are not walked again here.

- every page of the registry opens on its default settings, with no exception and no error box (a laptop with
  one GPU gives D = 1, a server may be started with an odd count), in one language at each D, English and 中文
  in turn, so that each page is drawn in both languages and neither at every count;
- every worksheet step at D = 1, 3 and 8: its answer computed on that runtime (a step not bound to a
  count binds itself to the runtime's), checked on the Worksheet page, and the lab its link opens shows the
  step's settings with no error box and no setting ignored. tests/core/test_worksheet_devices.py binds the
  steps to each D inside one 8-device process."""

from __future__ import annotations

import pytest

from labs.registry import HOME, LABS
from pmap_core.practice import worksheets
from tests.core.test_worksheet_devices import sweep_at

PAGE_DEVICE_COUNTS = (1, 3, 16)
WORKSHEET_DEVICE_COUNTS = (1, 3, 8)
DEVICE_COUNTS = tuple(sorted({*PAGE_DEVICE_COUNTS, *WORKSHEET_DEVICE_COUNTS}))
LANGUAGE_AT = {devices: ("en", "zh")[i % 2] for i, devices in enumerate(PAGE_DEVICE_COUNTS)}
SCRIPTS = [HOME.script, *(lab.script for lab in LABS)]

# The module's first test sets up every device count's run (its children's own limit is 900 s): on 2 cores
# shared with other work it took over pytest's 300 s per test (pyproject.toml).
pytestmark = pytest.mark.timeout(900)


def pages_here() -> dict:
    """{lang: {script: [what went wrong]}}: each page, in this device count's language (LANGUAGE_AT), on its
    defaults on this process's device count: the exceptions and error boxes shown, or the error of a page that did
    not finish."""
    from labs.ui import background
    from tests.apptest_support import open_lab

    lang, found = LANGUAGE_AT.get(worksheets.runtime_devices(), "en"), {}
    for lab in [HOME, *LABS]:
        try:
            at = open_lab(None if lab is HOME else lab.script, lang=lang)
            found[lab.script] = [e.value for e in at.exception] + [e.value for e in at.error]
        except Exception as error:  # noqa: BLE001 - a page that does not finish is as wrong as an error box
            found[lab.script] = [f"{type(error).__name__}: {error}"]
        background.jobs().drop_waiting()  # its first answer is checked here: the next page need not wait
    return {lang: found}


def steps_here() -> dict:
    """{sheet/step: what it says and does on this runtime}, as JSON gives it back."""
    import json

    from tests.apptest_support import open_lab

    devices = worksheets.runtime_devices()
    found, labs = {}, {}
    for sheet in worksheets.load_sheets().sheets:
        for template in sheet.steps:
            step = template.at(devices)  # as the page binds it
            sweep = sweep_at(devices) if step.needs_sweep else None
            answer = worksheets.compute_answer(template, sweep)  # unbound: on this runtime's devices
            shown = worksheets.shown(answer)
            report = {"devices": step.values.get("devices"), "answer": shown,
                      "accepted": worksheets.is_correct(step, answer, answer),
                      "question": {lang: step.say(step.question, lang) for lang in worksheets.LANGS},
                      "explain": {lang: step.say(step.explain, lang, answer=shown) for lang in worksheets.LANGS}}
            at = open_lab("worksheet", sheet=sheet.id, step=step.id)
            problems = [e.value for e in at.exception] + [e.value for e in at.error]
            if not step.needs_sweep:  # the page computes the answer itself, and accepts it
                widget = {worksheets.SHAPE: at.text_input, worksheets.NUMBER: at.number_input}.get(step.kind, at.radio)
                widget(key=f"worksheet.{sheet.id}.{step.id}.guess").set_value(answer)
                at.button(key="worksheet.check").click().run()
                problems += [e.value for e in at.exception] + [e.value for e in at.error]
                report["checked"] = [s.value for s in at.success]
            report["page"] = problems
            query = step.query("en")
            key = (step.lab, tuple(sorted(query.items())))
            if key not in labs:
                lab = open_lab(step.lab, **{k: v for k, v in query.items() if k != "lang"})
                kept = {k: lab.query_params.get(k) for k in query}
                labs[key] = {"problems": [e.value for e in lab.exception] + [e.value for e in lab.error],
                             "changed": {k: [v, kept[k]] for k, v in query.items() if kept[k] != v}}
            report["lab"] = labs[key]
            found[f"{sheet.id}/{step.id}"] = report
    return json.loads(json.dumps(found))


def walks_here() -> dict:
    """{"pages": pages_here(), "worksheet": steps_here()}, each None where it is not walked at this count: the pages
    on their defaults first, as a first visitor opens them."""
    here = worksheets.runtime_devices()
    return {"pages": pages_here() if here in PAGE_DEVICE_COUNTS else None,
            "worksheet": steps_here() if here in WORKSHEET_DEVICE_COUNTS else None}


@pytest.fixture(scope="module")
def walks_at_each_device_count():
    """{D: walks_here() on a runtime of D devices}."""
    from harness.processes import json_at_device_counts

    here = worksheets.runtime_devices()
    others = json_at_device_counts(["-m", "tests.children.pages_at_device_count"],
                                   [d for d in DEVICE_COUNTS if d != here], timeout=900)
    return {here: walks_here(), **others}


@pytest.fixture(scope="module")
def steps_at_each_device_count(walks_at_each_device_count):
    return {devices: walks["worksheet"] for devices, walks in walks_at_each_device_count.items()}


@pytest.mark.parametrize("devices", PAGE_DEVICE_COUNTS)
def test_every_page_opens_clean_on_its_defaults(walks_at_each_device_count, devices):
    for lang, pages in walks_at_each_device_count[devices]["pages"].items():
        assert list(pages) == SCRIPTS, (devices, lang)
        broken = {script: problems for script, problems in pages.items() if problems}
        assert not broken, (devices, lang, broken)


@pytest.mark.parametrize("devices", WORKSHEET_DEVICE_COUNTS)
def test_every_step_is_answered_on_the_page_at_each_device_count(steps_at_each_device_count, devices):
    steps = steps_at_each_device_count[devices]
    assert len(steps) == sum(len(s.steps) for s in worksheets.load_sheets().sheets)
    for name, step in steps.items():
        where = (devices, name)
        assert step["accepted"] and not step["page"], (where, step["page"])
        assert step["devices"] is None or 1 <= step["devices"] <= devices, where
        assert all(step["answer"] in text for text in step["explain"].values()), where
        if "checked" in step:
            assert len(step["checked"]) == 1 and step["answer"] in step["checked"][0], (where, step["checked"])


@pytest.mark.parametrize("devices", WORKSHEET_DEVICE_COUNTS)
def test_the_lab_a_step_opens_shows_its_settings_at_each_device_count(steps_at_each_device_count, devices):
    for name, step in steps_at_each_device_count[devices].items():
        assert not step["lab"]["problems"], (devices, name, step["lab"]["problems"])
        assert not step["lab"]["changed"], (devices, name, step["lab"]["changed"])


@pytest.mark.parametrize("devices,counts,said", [
    (1, {"1_shards/pad_per_device": 1, "2_collectives/reduce_scatter_shape": 1, "3_compiled/mesh_block_shape": 1},
     {"3_compiled/mesh_block_shape": "on a 1 × 1 mesh"}),
    (3, {"1_shards/pad_per_device": 3, "2_collectives/reduce_scatter_shape": 2, "3_compiled/mesh_block_shape": 2,
         "4_scaling/fastest_d": 2},
     {"1_shards/pad_per_device": "D = 3", "2_collectives/reduce_scatter_shape": "D = 2"}),
    (8, {"1_shards/pad_per_device": 4, "2_collectives/reduce_scatter_shape": 4, "3_compiled/mesh_block_shape": 8,
         "4_scaling/fastest_d": 8},
     {"1_shards/pad_per_device": "D = 4", "3_compiled/mesh_block_shape": "on a 2 × 4 mesh"}),
])
def test_a_step_runs_on_the_count_its_question_names(steps_at_each_device_count, devices, counts, said):
    """At D = 3 a step of at most 4 devices runs on 3, the reduce-scatter of 8 values on 2 (3 does not
    divide 8), as the mesh of an 8 × 8 array and the sweep's batch of 256 do; at D = 8 the steps of at most 4
    run on 4 and the mesh on all 8; at D = 1 all on one. tests/core/test_worksheet_devices.py binds them at
    more counts (5 among them) in one process."""
    steps = steps_at_each_device_count[devices]
    for name, count in counts.items():
        assert steps[name]["devices"] == count, (devices, name)
    for name, words in said.items():
        assert words in steps[name]["question"]["en"], (devices, name)
