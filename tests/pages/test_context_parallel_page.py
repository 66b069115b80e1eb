"""The Context parallelism lab in English and 中文 at D = 1, 2, 3 and 8: the ring's timeline is `ring_schedule`'s, the
schedule the ring program permutes by (its collective-permutes in the compiled HLO); each device's causal work is
`work_per_device`'s with the ratio the sentence gives; nothing measured (and no formula that gives the answer away)
before the prediction, the Measure button waiting for it; after it, the figures are `concepts.context.measure`'s and
the sweep's fits `sweep_residuals`'; with a class code the guess is recorded before the answer shows. Bad input (P not
dividing seq_len, a zig-zag that does not split, heads not dividing d_model, Ulysses past the heads, one device) gives
one line, never a traceback."""

import re

import pytest
from conftest import assert_clean, button, frame_with, open_lab, said, worksheet_queries

from labs.texts import table as text_table
from pmap_core.concepts import context as cp
from pmap_core.tracking import classroom
from pmap_core.train import context, transformer
from tests.apptest_support import class_store

TEXTS = text_table("context_parallel")
COMMON = text_table("common")


def small(devices: int) -> dict:
    """A compile of a second or two on P devices: 2 heads of width 4, a block of 4 tokens."""
    return {"devices": devices, "batch": devices, "seq_len": 4 * devices, "d_model": 8, "heads": 2, "layers": 2}



def has_frame(at, column: str) -> bool:
    return any(column in d.value.columns for d in at.dataframe)


def permuted_pairs(hlo: str) -> set[frozenset]:
    """The source-target pairs of every collective-permute in compiled HLO."""
    found = set()
    for line in hlo.splitlines():
        if " collective-permute" in line and (pairs := re.search(r"source_target_pairs=\{(.*?)\}\}", line)):
            found.add(frozenset(tuple(map(int, p.split(","))) for p in re.findall(r"\{(\d+,\d+)", pairs[1] + "}")))
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", [1, 2, 3, 8])
def test_the_page_draws_the_schedule_and_the_work_and_reveals_nothing_before_the_guess(devices, lang):
    at = open_lab("context_parallel", lang=lang, devices=devices)
    assert_clean(at)
    s, b = cp.default_seq_len(devices), cp.default_batch(devices)
    assert (at.number_input(key="context_parallel.seq_len").value,
            at.number_input(key="context_parallel.batch").value) == (s, b)
    text = said(at)
    mesh = cp.check_settings(b, s, transformer.Dims().d_model, transformer.Dims().heads, 2, devices, "contiguous")
    assert TEXTS["mesh"][lang].format(p=mesh.devices, block=mesh.block, s=mesh.dims.seq_len, b=mesh.batch) in text
    assert not has_frame(at, "attention_bytes") and not has_frame(at, "hlo_bytes") and not at.latex
    assert TEXTS["measure.ring_same"][lang].split("{")[0] not in text
    assert button(at, "context_parallel.measure").disabled and button(at, "context_parallel.sweep").disabled
    ulysses = [w.value for w in at.warning if "Ulysses" in w.value]
    if devices == 1:
        assert TEXTS["one_device"][lang] in text and at.radio(key="context_parallel.guess").disabled
        assert not has_frame(at, "passes_to") and not ulysses
        return
    assert TEXTS["predict.first"][lang] in text and not at.radio(key="context_parallel.guess").disabled
    assert len(ulysses) == (0 if 4 % devices == 0 else 1)  # 4 heads: one line where P does not divide them
    # The timeline is the ring's own schedule, row by row.
    schedule = cp.ring_schedule(devices, "contiguous")
    rows = frame_with(at, "passes_to")
    assert [(r.step, r.device, r.block) for r in rows.itertuples()] == [
        (step, device, block) for step, held in enumerate(schedule.blocks) for device, block in enumerate(held)]
    assert list(rows["passes_to"][:devices]) == [str(target) for _, target in schedule.pairs]
    assert TEXTS["schedule.explain"][lang].format(steps=devices, passes=devices - 1, p=devices,
                                                  last=devices - 1) in text
    # The causal work per device, and the ratio the sentence derives from it.
    work = cp.work_per_device(s, devices, "contiguous")
    assert TEXTS["work.contiguous"][lang].format(total=sum(work), most=max(work), least=min(work),
                                                 ratio=max(work) / min(work), last=devices - 1) in text
    even = cp.work_per_device(s, devices, "zigzag")
    assert TEXTS["work.zigzag_even"][lang].format(each=even[0], most=max(even), least=min(even), ratio=1.0) in text


def test_the_zig_zag_timeline_carries_each_blocks_two_chunks():
    at = open_lab("context_parallel", devices=4, layout="zigzag")
    assert_clean(at)
    rows = frame_with(at, "passes_to")
    assert list(rows["positions"][:4]) == ["0–3, 28–31", "4–7, 24–27", "8–11, 20–23", "12–15, 16–19"]
    assert TEXTS["schedule.zigzag"]["en"].format(chunks=8, last_chunk=7, first="0–3, 28–31", p=4) in said(at)


@pytest.mark.parametrize(("devices", "lang", "layout"), [(2, "en", "contiguous"), (3, "zh", "zigzag")])
def test_a_guess_then_measure_shows_the_cores_figures_then_the_sweep_its_fits(devices, lang, layout):
    query = {**small(devices), "seq_len": 4 * devices, "layout": layout}
    at = open_lab("context_parallel", lang=lang, **query)
    assert_clean(at)
    at.radio(key="context_parallel.guess").set_value(cp.MORE).run()
    assert not button(at, "context_parallel.measure").disabled
    assert button(at, "context_parallel.sweep").disabled  # the sweep follows a measurement
    button(at, "context_parallel.measure").click().run()
    assert_clean(at)
    dims = transformer.Dims(8, 2, 4 * devices, cp.VOCAB)
    measured = cp.measure(dims, 2, devices, devices, 1, layout)
    assert set(measured.steps) == ({"allgather", "ring", "ulysses"} if devices == 2 else {"allgather", "ring"})
    rows = frame_with(at, "attention_bytes")
    steps = list(measured.steps.values())
    assert list(rows["attention_bytes"]) == [cp.attention_bytes(s.comm_by_kind) for s in steps]
    assert list(rows["formula_attention_bytes"]) == [cp.attention_bytes(s.formula_by_kind) for s in steps]
    assert list(rows["comm_bytes"]) == [s.comm_bytes for s in steps]
    assert list(rows["loss"]) == pytest.approx([s.loss for s in steps], rel=1e-6)
    assert list(rows["residual_bytes"]) == [s.residual_bytes for s in steps]
    assert list(rows["peak_bytes"]) == [s.peak_bytes for s in steps]
    kinds = frame_with(at, "hlo_bytes")
    assert list(kinds["hlo_bytes"]) == [s.comm_by_kind.get(k, 0.0) for s in steps
                                        for k in sorted(set(s.comm_by_kind) | set(s.formula_by_kind))]
    text = said(at)
    answer = cp.ring_vs_allgather(measured)
    assert answer == cp.SAME
    assert TEXTS["outcome"][lang].format(guess=TEXTS["answer.more"][lang], answer=TEXTS["answer.same"][lang]) in text
    ring, gathered = (cp.attention_bytes(measured.steps[s].comm_by_kind) for s in ("ring", "allgather"))
    assert TEXTS["measure.ring_same"][lang].format(ring=ring, allgather=gathered, ratio=ring / gathered, p=devices,
                                                   layers=2) in text
    assert at.latex  # the formula comes with the answer
    # The ring program permutes K/V by the schedule the timeline draws (and dK/dV back by its transpose).
    forward = cp.ring_schedule(devices, layout).pairs
    assert permuted_pairs(measured.steps["ring"].hlo) == {frozenset(forward),
                                                          frozenset((t, s) for s, t in forward)}
    assert cp.ring_schedule is context.ring_schedule

    button(at, "context_parallel.sweep").click().run()
    assert_clean(at)
    settings = cp.check_settings(devices, 4 * devices, 8, 2, 2, devices, layout)
    fits = frame_with(at, "c2_share")
    sweeps = cp.sweep_residuals(settings)
    for row, sweep in zip(fits.itertuples(), sweeps, strict=True):
        assert (row.c0, row.c1, row.c2) == pytest.approx(sweep.fit, abs=1e-6)
    one = sweeps[0].fit[2]
    assert [row.c2_share for row in fits.itertuples()][1] == pytest.approx(1 / devices, rel=1e-6)  # all-gather
    shares = {sw.scheme: sw.fit[2] / one for sw in sweeps[1:]}
    key = ("sweep.even" if all(abs(v * devices - 1) <= 0.02 for v in shares.values()) else "sweep.at_most"
           if all(v * devices <= 1.02 for v in shares.values()) else "sweep.not_split")
    assert key != "sweep.not_split"
    assert TEXTS[key][lang].split("{")[0] in said(at)

    # Other settings: the figures of the last ones are not shown as these ones'.
    at.number_input(key="context_parallel.layers").set_value(3).run()
    assert_clean(at)
    assert TEXTS["measure.stale"][lang] in said(at) and not has_frame(at, "attention_bytes")


@pytest.mark.parametrize(("query", "code"), [
    ({"devices": 3, "seq_len": 32}, "mesh_not_divisible"),
    ({"devices": 4, "seq_len": 36, "layout": "zigzag"}, "zigzag_not_divisible"),
    ({"devices": 2, "d_model": 30}, "block_not_divisible"),
    ({"devices": 3, "batch": 4}, "batch_not_divisible"),
])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_settings_give_one_error_line_and_nothing_runs(query, code, lang):
    at = open_lab("context_parallel", lang=lang, **query)
    assert not at.exception
    assert len(at.error) == 1
    assert at.radio(key="context_parallel.guess").disabled and button(at, "context_parallel.measure").disabled
    assert not has_frame(at, "passes_to")
    key = f"error.{code}"
    first_words = (TEXTS.get(key) or COMMON[key])[lang].split("{")[0]
    assert at.error[0].value.startswith(first_words), at.error[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ulysses_past_the_heads_is_one_line_and_the_others_still_run(lang):
    at = open_lab("context_parallel", lang=lang, devices=4, heads=2, d_model=8, batch=4, seq_len=16)
    assert_clean(at)
    (line,) = [w.value for w in at.warning]
    assert line.startswith(TEXTS["ulysses_refused"][lang].split("{")[0]) and "Ulysses" in line
    assert TEXTS["choose.ulysses_refused"][lang].format(heads=2, p=4, allowed="1, 2", most=2) in said(at)
    assert not at.radio(key="context_parallel.guess").disabled


record_store = class_store("context parallel key")


def test_with_a_class_code_the_guess_is_recorded_before_the_answer_shows(record_store):
    at = open_lab("context_parallel", **small(2))
    at.text_input(key="context_parallel.student").set_value("Ada")
    at.text_input(key="context_parallel.class_code").set_value("ring-class").run()
    at.radio(key="context_parallel.guess").set_value(cp.FEWER).run()
    button(at, "context_parallel.measure").click().run()
    assert_clean(at)
    kept = classroom.read_class("ring-class", record_store).predictions
    assert kept[["sheet", "step", "attempt", "after_answer"]].values.tolist() == [
        ["context_parallel", "ring_bytes", 1, False]]
    assert kept[["prediction", "answer", "result"]].values.tolist() == [[cp.FEWER, cp.SAME, False]]


@pytest.mark.parametrize("runtime", [1, 3, 8])
def test_each_worksheet_step_opens_the_lab_on_its_settings(runtime):
    for step_id, query in worksheet_queries("12_context_parallel", runtime):
        at = open_lab("context_parallel", **query)
        assert_clean(at)
        assert not at.warning or all("Ulysses" in w.value for w in at.warning), step_id  # no setting ignored
        assert {k: at.query_params.get(k) for k in query} == query, step_id
