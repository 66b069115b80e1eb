"""The activation-memory lab in English and 中文 at D = 1 and 3: the formula's term table with the learner's numbers
and Korthikanti et al.'s Table 2 at t = D, nothing that ran shown (and both buttons waiting) before the prediction;
after it, the Measure click's figures are the core's (`concepts.activation_memory`: JAX's saved residuals, the
compiler-reported temporaries, peak and FLOPs per policy), what none saves beyond the formula is said where it is (at
D = 1, 3, 6 and 7: outside the blocks, and inside them by part), and the Sweep's fits are `sweep`'s; with a class code
the guess is recorded, as a first attempt made before the answer, with the computed answer. A link value out
of range falls back to the default with a warning; heads that do not divide d_model get an error box."""

import pytest
from conftest import assert_clean, button, frame_with, open_lab, said

from labs.texts import table as text_table
from pmap_core.concepts import activation_memory as am
from pmap_core.concepts import sequence_parallel as seqpar
from pmap_core.tracking import classroom
from tests.apptest_support import class_store

TEXTS = text_table("activation_memory")
SMALL = {"batch": 2, "seq_len": 8, "d_model": 16, "heads": 2, "layers": 1}  # a compile of a second or two



@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", [1, 3])
def test_the_page_predicts_with_the_formula_and_reveals_nothing_before_the_guess(devices, lang):
    at = open_lab("activation_memory", lang=lang, devices=devices)
    assert_clean(at)
    s, b, h, a = 32, 8, 32, 4
    lab, paper = am.predict("lab", s, b, h, a, devices), am.predict("paper", s, b, h, a, devices)
    terms = frame_with(at, "lab_per_unit")
    assert len(terms) == len(am.TERMS)
    assert list(terms["lab_bytes"]) == [bytes_ for _, bytes_ in lab.terms]
    assert f"{paper.total:,}" in said(at) and f"{lab.total:,}" in said(at)
    variants = frame_with(at, "variant")
    assert list(variants["paper_bytes"]) == pytest.approx(list(paper.variants.values()))
    assert TEXTS["table2.heading"][lang].format(t=devices) in [h.value for h in at.subheader]
    one = TEXTS["table2.one_device"][lang]
    uneven = TEXTS["table2.uneven"][lang].format(a=a, t=devices)
    assert (one in said(at)) == (devices == 1) and (uneven in said(at)) == (devices == 3)
    # Nothing ran: no measured table, the buttons wait for the prediction.
    assert button(at, "activation_memory.measure").disabled and button(at, "activation_memory.sweep").disabled
    assert not any("residual_bytes" in d.value.columns for d in at.dataframe)
    assert not at.get("vega_lite_chart")
    assert TEXTS["predict.first"][lang] in said(at)


def test_a_guess_then_measure_shows_the_cores_figures_then_the_sweep_its_fits():
    at = open_lab("activation_memory", **SMALL)
    assert_clean(at)
    at.radio(key="activation_memory.guess").set_value("none").run()
    assert not button(at, "activation_memory.measure").disabled
    assert button(at, "activation_memory.sweep").disabled  # the sweep follows a measurement
    button(at, "activation_memory.measure").click().run()
    assert_clean(at)
    settings = am.check_settings(**SMALL)
    measured = am.measure(settings)
    rows = frame_with(at, "residual_bytes")
    assert list(rows["residual_bytes"]) == [p.residual_bytes for p in measured.policies]
    assert list(rows["formula_bytes"]) == [am.policy_formula(p.remat, settings) for p in measured.policies]
    assert list(rows["temp_bytes"]) == [p.temp for p in measured.policies]
    assert list(rows["peak_bytes"]) == [p.peak for p in measured.policies]
    assert list(rows["flops"]) == [p.flops for p in measured.policies]
    text = said(at)
    fewest = TEXTS[f"policy.{measured.fewest}"]["en"]
    assert TEXTS["outcome"]["en"].format(guess=TEXTS["policy.none"]["en"], answer=fewest) in text
    assert f"full {measured.of('full').residual_bytes:,}" in text
    assert "measured" not in " ".join(m.value for m in at.markdown if "peak" in m.value)
    # Each sentence is the one that fits what ran: the peak full remat saves (or not), its extra FLOPs.
    none, full = measured.of("none"), measured.of("full")
    saved = none.peak - full.peak
    assert TEXTS["measure.peak.saved" if saved > 0 else "measure.peak.not_saved"]["en"].format(saved=abs(saved)) in text
    extra = full.flops - none.flops
    modelled = am.recomputed_flops(settings.dims, settings.layers, settings.batch, "full")
    key = ("measure.flops_none" if extra <= 0 else "measure.flops" if abs(extra - modelled) <= 0.1 * modelled
           else "measure.flops_off_model")
    assert TEXTS[key]["en"].format(extra=extra, none=none.flops, full=full.flops, forward=measured.forward_flops,
                                   share=measured.recomputed_share, modelled=modelled,
                                   selective_extra=measured.of("selective").flops - none.flops) in text
    # The residual table of the link's policy (selective by default): JAX's own list.
    residuals = frame_with(at, "dtype")
    assert list(residuals["bytes"]) == [r.bytes for r in measured.of("selective").residuals]
    assert at.get("vega_lite_chart")

    button(at, "activation_memory.sweep").click().run()
    assert_clean(at)
    fits = frame_with(at, "c2")
    for row, sweep in zip(fits.itertuples(), am.sweep_policies(settings), strict=True):
        assert (row.c0, row.c1, row.c2) == pytest.approx(sweep.residual_fit, abs=1e-6)
        linear, quadratic = am.policy_coefficients(sweep.remat, 2, 16, 2)
        assert (row.formula_linear, row.formula_quadratic) == (linear, quadratic)
    none_c2 = fits["c2"][0]
    assert none_c2 == pytest.approx(am.policy_coefficients("none", 2, 16, 2)[1], rel=1e-6)
    assert TEXTS["sweep.selective_gone"]["en"].format(c2=fits["c2"][1], none=none_c2) in said(at)

    # Other settings: the figures of the last ones are not shown as these ones'.
    at.number_input(key="activation_memory.batch").set_value(3).run()
    assert_clean(at)
    assert TEXTS["measure.stale"]["en"] in said(at)
    assert not any("residual_bytes" in d.value.columns for d in at.dataframe)


@pytest.mark.parametrize(("devices", "lang", "sizes"), [
    (1, "en", SMALL), (3, "zh", SMALL), (6, "en", {}), (7, "zh", SMALL),
    (1, "en", {**SMALL, "d_model": 1, "heads": 1}),  # a LayerNorm over one value: each of its values is a row's
])
def test_nones_bytes_beyond_the_formula_are_said_where_they_are(devices, lang, sizes):
    """At the page's defaults JAX saves 282,520 bytes beyond the formula under none: 232,832 outside the blocks (as
    under selective and full), 49,688 inside them. The sentence is the one the measured parts call for."""
    at = open_lab("activation_memory", lang=lang, devices=devices, **sizes)
    at.radio(key="activation_memory.guess").set_value("full").run()
    button(at, "activation_memory.measure").click().run()
    assert_clean(at)
    settings = am.check_settings(**{"batch": 8, "seq_len": 32, "d_model": 32, "heads": 4, "layers": 2, **sizes})
    measured = am.measure(settings)
    beyond, formula = measured.beyond_formula, measured.of("none").formula_bytes
    if not sizes:
        assert (beyond.total, beyond.outside, beyond.inside) == (282_520, 232_832, 49_688)
    assert beyond.total > beyond.outside > 0 and beyond.inside > 0
    if sizes.get("d_model") == 1:
        assert beyond.other < 0
        inside = TEXTS["measure.inside_whole"][lang].format(inside=beyond.inside)
    else:
        assert beyond.other >= 0
        inside = TEXTS["measure.inside"][lang].format(inside=beyond.inside, per_row=beyond.per_row,
                                                      other=beyond.other)
    outside = TEXTS["measure.outside"][lang].format(total=beyond.total, outside=beyond.outside, formula=formula,
                                                    layers=settings.layers)
    assert f"{outside} {inside}" in said(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_out_of_range_link_value_falls_back_with_a_warning(lang):
    at = open_lab("activation_memory", lang=lang, seq_len=4096, heads="x")
    assert_clean(at)
    assert at.number_input(key="activation_memory.seq_len").value == 32
    assert at.number_input(key="activation_memory.heads").value == 4
    assert len(at.warning) == 2


def test_heads_that_do_not_divide_d_model_get_an_error_and_nothing_runs():
    at = open_lab("activation_memory", d_model=30, heads=4)
    assert not at.exception
    assert [e.value for e in at.error] and "d_model" in at.error[0].value
    assert at.radio(key="activation_memory.guess").disabled
    assert button(at, "activation_memory.measure").disabled


record_store = class_store("activation memory key")


def test_with_a_class_code_the_guess_is_recorded_before_the_answer_shows(record_store):
    at = open_lab("activation_memory", **SMALL)
    at.text_input(key="activation_memory.student").set_value("Ada")
    at.text_input(key="activation_memory.class_code").set_value("remat-class").run()
    at.radio(key="activation_memory.guess").set_value("selective").run()
    button(at, "activation_memory.measure").click().run()
    assert_clean(at)
    fewest = am.measure(am.check_settings(**SMALL)).fewest
    kept = classroom.read_class("remat-class", record_store).predictions
    assert kept[["sheet", "step", "attempt", "after_answer"]].values.tolist() == [
        ["activation_memory", "fewest_bytes", 1, False]]
    assert kept[["prediction", "answer", "result"]].values.tolist() == [["selective", fewest, fewest == "selective"]]


@pytest.mark.parametrize(("devices", "lang"), [(2, "en"), (2, "zh"), (4, "en")])
def test_the_comparison_of_splits_shows_the_cores_figures_and_the_sentence_that_fits(devices, lang):
    """Section 4 on a 1 × t mesh: each split's bytes by kind and residuals are `compare_splits`' own, and each
    sentence is the one the figures choose (bytes equal within 2%, the parameters' gradients, the second gather,
    activations ÷t)."""
    small = {**SMALL, "heads": 4, "seq_len": 8}
    at = open_lab("activation_memory", lang=lang, devices=devices, **small)
    assert button(at, "activation_memory.split").disabled  # it follows a measurement
    at.radio(key="activation_memory.guess").set_value("full").run()
    button(at, "activation_memory.measure").click().run()
    button(at, "activation_memory.split").click().run()
    assert_clean(at)
    compared = seqpar.compare_splits(am.check_settings(**small), devices)
    rows = frame_with(at, "comm_vs_tensor")
    steps = [compared.one_device, *compared.splits]
    assert list(rows["comm_bytes"]) == pytest.approx([s.comm_bytes for s in steps])
    assert list(rows["residual_bytes"]) == [s.residual_bytes for s in steps]
    assert list(rows["reduce_scatter"]) == pytest.approx([s.comm_by_kind.get("reduce-scatter", 0) for s in steps])
    tp, keep, on = (compared.of(name) for name in ("off", "keep", "on"))
    ratio, whole = keep.comm_bytes / tp.comm_bytes, compared.one_device.residual_bytes
    text = said(at)
    assert TEXTS["split.bytes_equal" if abs(ratio - 1) <= 0.02 else "split.bytes_differ"][lang].format(
        keep=keep.comm_bytes, tp=tp.comm_bytes, ratio=ratio) in text
    summed = compared.parameter_gradients
    assert summed > 0 and keep.comm_bytes - tp.comm_bytes == pytest.approx(summed, rel=1e-9)
    assert TEXTS["split.parameter_gradients"][lang].format(
        extra=keep.comm_bytes - tp.comm_bytes, formula=summed, t=devices, layers=1,
        activations=keep.comm_bytes - summed, share=summed / keep.comm_bytes) in text
    assert TEXTS["split.regather"][lang].format(extra=on.comm_bytes - keep.comm_bytes, formula=compared.regathered,
                                                t=devices, layers=1) in text
    share = on.residual_bytes / whole
    key = "split.divided" if abs(share * devices - 1) <= 0.1 else "split.not_divided"
    assert TEXTS[key][lang].format(on=on.residual_bytes, whole=whole, share=share, inverse=1 / devices, t=devices,
                                   tp=tp.residual_bytes, tp_share=tp.residual_bytes / whole, keep=keep.residual_bytes,
                                   keep_share=keep.residual_bytes / whole) in text
    assert keep.residual_bytes - on.residual_bytes == compared.regathered
    assert TEXTS["split.kept_inputs"][lang].format(extra=keep.residual_bytes - on.residual_bytes,
                                                   formula=compared.regathered, t=devices, layers=1) in text
    keep_share = keep.residual_bytes / whole
    key = ("split.keep_short" if abs(keep_share * devices - 1) > 0.1 else
           "split.keep_both" if abs(ratio - 1) <= 0.02 else "split.keep_divided_bytes_differ")
    assert TEXTS[key][lang].format(input_share=compared.gathered_inputs / whole, keep_share=keep_share,
                                   inverse=1 / devices, ratio=ratio) in text


@pytest.mark.parametrize("devices", [1, 3])
def test_a_model_axis_that_cannot_split_says_so_in_one_line(devices):
    at = open_lab("activation_memory", devices=devices, **SMALL)
    at.radio(key="activation_memory.guess").set_value("full").run()
    button(at, "activation_memory.measure").click().run()
    if devices == 1:
        assert button(at, "activation_memory.split").disabled
        assert TEXTS["split.one_device"]["en"] in said(at)
        return
    button(at, "activation_memory.split").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "heads (2)" in at.error[0].value
