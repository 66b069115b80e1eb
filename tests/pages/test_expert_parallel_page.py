"""The Expert parallelism lab in English and 中文 at D = 1, 2, 3, 6, 7 and 8: the expert axis it picks divides D and E
(or it says why none above 1 does), the critical batch is the Scaling Book's dense threshold × E/k from the page's own
E and k, the slots at c = 1 are set against a perfectly balanced router's loads (⌊k·T/E⌋ or ⌈k·T/E⌉); nothing
measured (no heatmap, no drops, no bytes, no formula) before the prediction, the Measure button waiting for it; after
it, the heatmap's counts, the drops per capacity factor (a perfectly balanced router's beside them) and the bytes are
`concepts.experts`'s; with a class code the guess is recorded before the answer shows. Bad input (the expert axis not
dividing E, top-k above E, a batch that does not split) gives one line, never a traceback."""

import pytest
from conftest import assert_clean, button, frame_with, open_lab, said, worksheet_queries

from labs.texts import table as text_table
from pmap_core.concepts import experts as ce
from pmap_core.tracking import classroom
from tests.apptest_support import class_store

TEXTS = text_table("expert_parallel")
COMMON = text_table("common")


def has_frame(at, column: str) -> bool:
    return any(column in d.value.columns for d in at.dataframe)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", [1, 2, 3, 6, 7, 8])
def test_the_page_opens_on_every_device_count_and_reveals_nothing_before_the_guess(devices, lang):
    at = open_lab("expert_parallel", lang=lang, devices=devices)
    assert_clean(at)
    e, b = ce.default_experts(devices), ce.default_batch(devices)
    y = ce.expert_axis(devices, e)
    assert (at.number_input(key="expert_parallel.experts").value, at.number_input(key="expert_parallel.batch").value,
            at.number_input(key="expert_parallel.expert").value) == (e, b, y)
    assert e % y == 0 and devices % y == 0 and y == devices  # the first E splits over every device
    text = said(at)
    assert TEXTS["mesh"][lang].format(d=devices, y=y, x=devices // y, e=e, per=e // y, rows=b // devices, b=b,
                                      t=ce.PAGE_SEQ_LEN) in text
    assert (TEXTS["one_device"][lang] in text) == (devices == 1)
    moe = ce.critical_batch(e, 2)
    assert moe == ce.DENSE_CRITICAL_TOKENS * e / 2
    assert TEXTS["critical.arithmetic"][lang].format(dense=ce.DENSE_CRITICAL_TOKENS, e=e, k=2, ratio=e / 2, moe=moe,
                                                     d=devices, total=moe * devices,
                                                     sequences=-(-int(moe * devices) // ce.PAGE_SEQ_LEN),
                                                     t=ce.PAGE_SEQ_LEN) in text
    # The slots at c = 1 beside a perfectly balanced router's loads: k·T/E = 32/E is whole only for E = 4 and 8.
    t, c1 = ce.PAGE_SEQ_LEN, ce.capacity(1, ce.PAGE_SEQ_LEN, 2, e)
    if (2 * t) % e == 0:
        assert c1 == 2 * t // e and TEXTS["predict.slots_even"][lang].format(c1=c1, k=2, t=t, e=e) in text
    else:
        low, high = 2 * t // e, 2 * t % e
        assert c1 == low + 1 and TEXTS["predict.slots_uneven"][lang].format(
            c1=c1, k=2, t=t, e=e, even=2 * t / e, high=high, most=low + 1, low_count=e - high, low=low,
            slots=e * c1, empty=e * c1 - 2 * t) in text
    assert ((2 * t) % e == 0) == (devices in (1, 2, 8))
    # Nothing measured before the guess.
    assert not at.dataframe and not at.latex and not at.get("arrow_vega_lite_chart")
    assert TEXTS["measure.drops"][lang].split("{")[0] not in text
    assert TEXTS["predict.first"][lang] in text and TEXTS["nothing_yet"][lang] in text
    assert button(at, "expert_parallel.measure").disabled and not at.radio(key="expert_parallel.guess").disabled


def test_an_expert_count_no_axis_above_one_divides_says_why():
    at = open_lab("expert_parallel", devices=3, experts=4, batch=6)
    assert_clean(at)
    assert at.number_input(key="expert_parallel.expert").value == 1
    assert TEXTS["no_expert_axis"]["en"].format(d=3, e=4, pick=1) in said(at)


@pytest.mark.parametrize(("devices", "lang", "guess"), [(2, "en", ce.UNDER_HALF), (1, "zh", ce.NONE),
                                                        (3, "en", ce.OVER_HALF), (6, "zh", ce.UNDER_QUARTER),
                                                        (7, "en", ce.UNDER_HALF)])
def test_a_guess_then_measure_shows_the_cores_figures(devices, lang, guess):
    e, b = ce.default_experts(devices), ce.default_batch(devices)
    at = open_lab("expert_parallel", lang=lang, devices=devices)
    at.radio(key="expert_parallel.guess").set_value(guess).run()
    assert not button(at, "expert_parallel.measure").disabled
    button(at, "expert_parallel.measure").click().run()
    assert_clean(at)
    settings = ce.check_settings(b, e, 2, 1.25, devices)
    measurement = ce.measured(settings)
    answer = ce.answer(measurement)
    labels = {band: TEXTS[f"answer.{band.replace(' ', '_').replace('%', '')}"][lang] for band in ce.BANDS}
    text = said(at)
    assert TEXTS["outcome"][lang].format(guess=labels[guess], answer=labels[answer]) in text
    assert at.latex  # the formula comes with the answer
    # The drops per capacity factor, counted and predicted, are the core's.
    drops = frame_with(at, "from_mean_load")
    assert list(drops["capacity_factor"]) == list(ce.factors_for(1.25)) == [0.5, 1.0, 1.25, 2.0, 4.0]
    assert list(drops["measured"]) == [row.measured for row in measurement.drops]
    assert list(drops["predicted"]) == [row.predicted for row in measurement.drops]
    assert list(drops["capacity"]) == [row.capacity for row in measurement.drops]
    one = ce.dropped_at(measurement.drops, 1.0)
    assert one.measured == pytest.approx(one.predicted) and one.measured > 0 and answer != ce.NONE
    # A perfectly balanced router's drops: C = ⌈c·k·T/E⌉ against loads ⌊k·T/E⌋ or ⌈k·T/E⌉ (`balanced_dropped`).
    assert list(drops["balanced"]) == [ce.balanced_dropped(c, ce.PAGE_SEQ_LEN, 2, e) for c in drops["capacity_factor"]]
    mine = ce.dropped_at(measurement.drops, 1.25)
    assert " ".join((
        TEXTS["measure.drops"][lang].format(c1=one.capacity, measured=one.measured, predicted=one.predicted,
                                            mean=one.from_mean_load, balanced=0.0, choices=b * ce.PAGE_SEQ_LEN * 2),
        TEXTS["measure.drops.over"][lang].format(c1=one.capacity),
        TEXTS["measure.drops.yours"][lang].format(c=1.25, cap=mine.capacity, mine=mine.measured,
                                                  balanced=mine.balanced))) in text
    assert answer == ce.drop_band(ce.dropped_fraction(e, 2, b))  # the worksheet's function agrees
    # The heatmaps' counts: block 0's choices per device and expert, routed and kept.
    cells = frame_with(at, "routed")
    tokens = measurement.tokens
    assert list(cells["routed"]) == [int(v) for v in tokens.routed.ravel()]
    assert list(cells["kept"]) == [int(v) for v in tokens.kept.ravel()]
    assert list(cells["holder"]) == [tokens.holder[e_] for _ in range(devices) for e_ in range(e)]
    assert tokens.routed.sum() == b * ce.PAGE_SEQ_LEN * 2  # every token chooses k = 2 experts
    # The bytes, HLO beside formula.
    kinds = frame_with(at, "hlo_bytes")
    step = measurement.step
    assert dict(zip(kinds["collective"], kinds["hlo_bytes"], strict=True)) == {
        k: step.comm_by_kind.get(k, 0.0) for k in set(step.comm_by_kind) | set(step.formula_by_kind)}
    assert step.all_to_all_hlo == pytest.approx(step.all_to_all_formula)
    if devices == 1:
        assert step.all_to_all_hlo == 0 and measurement.versus is None
        assert TEXTS["bytes.versus_none"][lang] in text
    else:
        assert step.all_to_all_hlo > 0 and measurement.versus.ratio == pytest.approx(1 / devices)
        v = measurement.versus
        assert TEXTS["bytes.versus"][lang].format(array=v.array_bytes, y=devices, a2a=v.all_to_all_hlo,
                                                  a2a_formula=v.all_to_all_formula, ag=v.all_gather_hlo,
                                                  ag_formula=v.all_gather_formula, ratio=v.ratio) in text
    assert TEXTS["time.why_not"][lang].format(e=e) in text
    # Other settings: the figures of the last ones are not shown as these ones'.
    at.number_input(key="expert_parallel.top_k").set_value(1).run()
    assert_clean(at)
    assert TEXTS["measure.stale"][lang] in said(at) and not has_frame(at, "hlo_bytes")



def test_where_no_expert_is_chosen_past_its_slots_the_page_says_every_choice_finds_one():
    """k = E = 2 at D = 1: every token chooses both experts, T = 16 times each a sequence, and C = 16 at c = 1."""
    at = open_lab("expert_parallel", devices=1, experts=2, top_k=2)
    at.radio(key="expert_parallel.guess").set_value(ce.NONE).run()
    button(at, "expert_parallel.measure").click().run()
    assert_clean(at)
    text = said(at)
    assert TEXTS["predict.slots_even"]["en"].format(c1=16, k=2, t=16, e=2) in text
    assert TEXTS["measure.drops.none"]["en"].format(c1=16) in text
    assert TEXTS["measure.drops.over"]["en"].split("{")[0] not in text


@pytest.mark.parametrize(("query", "code"), [
    ({"devices": 4, "experts": 6, "expert": 4}, "experts_not_divisible"),
    ({"devices": 4, "experts": 4, "top_k": 5}, "top_k_above_experts"),
    ({"devices": 4, "experts": 8, "expert": 3}, "mesh_not_divisible"),
    ({"devices": 3, "batch": 4}, "batch_not_divisible"),
])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_settings_give_one_error_line_and_nothing_runs(query, code, lang):
    at = open_lab("expert_parallel", lang=lang, **query)
    assert not at.exception
    assert len(at.error) == 1
    assert at.radio(key="expert_parallel.guess").disabled and button(at, "expert_parallel.measure").disabled
    key = f"error.{code}"
    first_words = (TEXTS.get(key) or COMMON[key])[lang].split("{")[0]
    assert at.error[0].value.startswith(first_words), at.error[0].value


record_store = class_store("expert parallelism key")


def test_with_a_class_code_the_guess_is_recorded_before_the_answer_shows(record_store):
    at = open_lab("expert_parallel", devices=2)
    at.text_input(key="expert_parallel.student").set_value("Ada")
    at.text_input(key="expert_parallel.class_code").set_value("moe-class").run()
    at.radio(key="expert_parallel.guess").set_value(ce.NONE).run()
    button(at, "expert_parallel.measure").click().run()
    assert_clean(at)
    kept = classroom.read_class("moe-class", record_store).predictions
    assert kept[["sheet", "step", "attempt", "after_answer"]].values.tolist() == [
        ["expert_parallel", "dropped_c1", 1, False]]
    answer = ce.answer(ce.measured(ce.check_settings(ce.default_batch(2), ce.default_experts(2), 2, 1.25, 2)))
    assert kept[["prediction", "answer", "result"]].values.tolist() == [[ce.NONE, answer, False]]


@pytest.mark.parametrize("runtime", [1, 3, 8])
def test_each_worksheet_step_opens_the_lab_on_its_settings(runtime):
    for step_id, query in worksheet_queries("13_expert_parallel", runtime):
        at = open_lab("expert_parallel", **query)
        assert_clean(at)
        assert not at.warning, step_id  # no setting ignored
        assert {k: at.query_params.get(k) for k in query} == query, step_id
