"""The Plan a run page in English and 中文. With the lab's transformer at D = 1, 3, 6, 7 and 8: no exception, the
ranking is the planner's (`search.plan`), the charts draw the first plans' memory and step by part with the hardware's
memory as a rule, and the verdict's sentences are the ones the figures call for, checked against the step's parts read
here: at D = 1 the only layout, no runner-up, nothing beside compute; at D = 3 and 7 the only layout, bounded by its
data axis; at D = 6 and 8 a runner-up and what separates them. A published model opens on Llama 3 405B's run; every
published run is predicted twice beside what its paper reported, each row with its source. Bad input gives one error
line. With "predict first" the ranking waits for a checked prediction, which a class records before the answer shows.
The check compiles the top plans here and shows each one's figures beside the compiler's and its `train` command; each
worksheet step opens the page on its settings. The page answers before anything is compiled: its planning runs in the
background (the first run says so, and the page shows the ranking once it is done), and only the check compiles."""

import shlex
import threading

import jax.monitoring
import pandas as pd
import pytest
from conftest import assert_clean, button, frame_with, open_lab, said, worksheet_queries
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from labs.texts import table as text_table
from labs.ui.visitor import literal
from pmap_core.concepts.planner import (
    HARDWARE,
    MODELS,
    PUBLISHED,
    Workload,
    check,
    plan,
    search,
    step_parts,
)
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import DEFAULT_ASSUMPTIONS, predict
from pmap_core.concepts.planner.presets import MODEL_KEYS, PRESETS
from pmap_core.tracking import classroom
from pmap_core.train import transformer
from pmap_core.train.config import default_batch
from pmap_core.train.mesh import AXES
from tests.apptest_support import class_store
from tests.apptest_support import until_done as planned

TEXTS = text_table("plan")
COMMON = text_table("common")
LAB_DIMS = transformer.Dims(32, 4, 32, 32)  # the page's lab transformer starts at TrainConfig's sizes


def open_plan(lang: str = "en", **query):
    """The page once its planning, started in the background by its first run, shows."""
    return planned(open_lab("plan", lang=lang, **query))


def frames_of(at):
    """Every Altair chart's datasets, as pandas frames."""
    return [convert_arrow_bytes_to_pandas_df(d.data.data) for c in at.get("vega_lite_chart") for d in c.proto.datasets]


def lab_result(devices: int) -> search.PlanResult:
    model = check.lab_model(LAB_DIMS, 2)
    return plan(model, HARDWARE["h100"], devices, Workload(default_batch(devices), 32, "float32"), DEFAULT_ASSUMPTIONS)


def level(lang: str, comm) -> str:
    return TEXTS[f"level.{comm.level}"][lang]


@pytest.mark.parametrize(("devices", "lang"), [(1, "en"), (1, "zh"), (3, "zh"), (6, "en"), (7, "en"), (8, "zh")])
def test_the_lab_transformer_is_ranked_and_the_verdict_is_what_the_figures_say(devices, lang):
    at = open_plan(lang=lang, model="lab", devices=devices)
    assert_clean(at)
    assert at.number_input(key="plan.devices").value == devices
    result = lab_result(devices)
    table = frame_with(at, "mfu_pct")
    assert list(table["layout"]) == [pv.layout_key(p.layout).replace(",", " × ") for p in result.plans[:10]]
    assert list(table["step_s"]) == [p.prediction.step_s for p in result.plans[:10]]
    text = said(at)
    first = result.plans[0].prediction
    assert TEXTS["verdict.first"][lang].format(layout=first.layout.label(), step=first.step_s, mfu=first.mfu,
                                               memory=first.memory.total / 1e9, budget=80) in text
    parts = step_parts(first, DEFAULT_ASSUMPTIONS.overlap)
    beside = {name: s for name, s in parts.items() if name != search.COMPUTE and s > 0}
    single = TEXTS["verdict.single"][lang].format(d=devices)
    assert not result.unfit  # every layout tried fits: no sentence of layouts that do not
    if devices == 1:  # one layout, no communication, no bubble
        assert len(result.plans) == 1 and not result.unfit and not first.comm and not beside
        assert single in text
        assert TEXTS["bound.nothing"][lang].format(compute=first.compute_s) in text
    elif devices in (3, 7):  # the lab's 2 blocks, 4 heads and 32 positions leave data parallelism alone
        assert [p.layout.data for p in result.plans] == [devices] and not result.unfit and single in text
        (axis, seconds), = beside.items()
        comm = first.comm_on(axis)
        assert axis == "data" and TEXTS["bound.axis"][lang].format(
            axis=axis, size=devices, level=level(lang, comm), link=comm.link, seconds=seconds, step=first.step_s,
            sent=comm.bytes / 1e9) in text
    else:  # a runner-up: the part of its step longer by most, as the parts read here say
        runner = result.plans[1].prediction
        assert single not in text and runner.step_s >= first.step_s
        other = step_parts(runner, DEFAULT_ASSUMPTIONS.overlap)
        name, longer = max(((n, other.get(n, 0.0) - parts.get(n, 0.0)) for n in {*parts, *other}),
                           key=lambda kv: kv[1])
        gap = {"runner": runner.layout.label(), "gap": runner.step_s - first.step_s, "part": longer}
        if name == search.COMPUTE:
            expected = TEXTS["verdict.by_compute"][lang].format(remat=runner.layout.remat,
                                                                first_remat=first.layout.remat, **gap)
        elif name == search.BUBBLE:
            expected = TEXTS["verdict.by_bubble"][lang].format(bubble=runner.bubble, first_bubble=first.bubble, **gap)
        else:
            comm = runner.comm_on(name)
            expected = TEXTS["verdict.by_axis"][lang].format(axis=name, size=comm.size, level=level(lang, comm),
                                                             link=comm.link, **gap)
        assert longer > 0 and expected in text
        (axis, seconds), = [max(beside.items(), key=lambda kv: kv[1])]
        if axis == search.BUBBLE:
            assert TEXTS["bound.bubble"][lang].split("{")[0] in text
        else:
            comm = first.comm_on(axis)
            assert TEXTS["bound.axis"][lang].format(axis=axis, size=comm.size, level=level(lang, comm),
                                                    link=comm.link, seconds=seconds, step=first.step_s,
                                                    sent=comm.bytes / 1e9) in text
    # The charts: memory by part with the hardware's memory as a rule, the step by part summing to the step.
    frames = frames_of(at)
    memory = next(f for f in frames if "gb" in f.columns and "part" in f.columns)
    assert memory.groupby("plan")["gb"].sum()["#1"] == pytest.approx(first.memory.total / 1e9)
    assert any(list(f.columns) == ["gb", "what"] and f["gb"][0] == 80 for f in frames)
    step = next(f for f in frames if "seconds" in f.columns)
    assert step.groupby("plan")["seconds"].sum()["#1"] == pytest.approx(first.step_s)


def test_a_published_model_opens_on_llama_3_405b_and_every_published_run_is_predicted_twice():
    at = open_plan()
    assert_clean(at)
    assert at.number_input(key="plan.devices").value == 16_384
    assert at.number_input(key="plan.tokens").value == 16 * 2**20
    assert frame_with(at, "mfu_pct").shape[0] == 10
    assert TEXTS["verdict.heading"]["en"] in [s.value for s in at.subheader]
    runs = frame_with(at, "as_run_variant")
    assert list(runs["run"]) == list(PUBLISHED)
    assert list(runs["source"]) == [r.source for r in PUBLISHED.values()]
    for row in runs.itertuples():
        run = PUBLISHED[row.run]
        model, hardware = MODELS[run.model], HARDWARE[run.hardware]
        best = search.evaluate_published(run, model, hardware).prediction
        as_run = search.evaluate_published(run, model, hardware, as_run=True).prediction
        assert row.reported_pct == pytest.approx(100 * run.utilisation)
        assert row.best_mfu_pct == pytest.approx(100 * best.mfu)
        assert row.as_run_mfu_pct == pytest.approx(100 * as_run.mfu)
        assert (row.best_hfu_pct == pytest.approx(100 * best.hfu)) if run.counts_recompute else row.best_hfu_pct != \
            row.best_hfu_pct  # NaN where the paper reports MFU
        if run.remat:
            assert as_run.layout.remat == run.remat
    # Validation: every run as it ran, predicted beside reported, with the errors, the fit and the identity line.
    rows = pv.validate()
    validated = frame_with(at, "predicted_pct")
    assert list(validated["run"]) == list(PUBLISHED)
    assert list(validated["predicted_pct"]) == pytest.approx([100 * r.predicted for r in rows])
    assert list(validated["error_points"]) == pytest.approx([100 * r.error for r in rows])
    text = said(at)
    assert f"{100 * pv.mean_absolute_error(rows):.1f} points over {len(rows)} runs" in text
    assert any("predicted_pct" in f and len(f) == 2 for f in frames_of(at))  # the identity line's two ends
    # The page's setting is Llama 3's 16K run: why the first plan beats its layout, priced under the imbalance too.
    gap = pv.published_gap(plan(MODELS["llama3-405b"], HARDWARE["h100"], 16_384, Workload(2048, 8192)),
                           PUBLISHED["llama3-405b-16k"])
    assert gap is not None and f"{100 * gap.points:.1f} points of" in text and gap.first.layout.label() in text


def test_another_model_starts_its_inputs_again():
    at = open_plan(model="lab", devices=3)
    # The smallest published model: its 16,384 devices are planned in a third of Llama 3 70B's time.
    planned(at.selectbox(key="plan.model").set_value("gpt-1.7b").run())
    assert_clean(at)
    assert at.number_input(key="plan.devices").value == 16_384
    assert at.selectbox(key="plan.precision").value == "mixed"


@pytest.mark.parametrize(("query", "code"), [
    ({"model": "lab", "devices": 8, "tokens": 1000}, "tokens_not_sequences"),
    ({"model": "lab", "devices": 8, "heads": 3}, "block_not_divisible"),
    ({"model": "lab", "devices": 3, "tokens": 256 * 32}, "no_layout"),
    ({"model": "llama3-8b", "devices": 64, "seq_len": 8192, "tokens": 4096}, "tokens_not_sequences"),
])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_input_gives_one_error_line_not_a_traceback(query, code, lang):
    at = open_plan(lang=lang, **query)
    assert not at.exception
    assert len(at.error) == 1
    key = f"error.{code}"
    assert at.error[0].value.startswith((TEXTS.get(key) or COMMON[key])[lang].split("{")[0]), at.error[0].value
    assert not [d for d in at.dataframe if "mfu_pct" in d.value.columns]


record_store = class_store("plan a run teacher key")


def test_predict_first_withholds_the_ranking_until_a_checked_prediction_recorded_first(record_store):
    query = {"model": "lab", "devices": 8, "predict": "true", "layout": "data=4,stage=2", "microbatches": 8,
             "virtual": 1, "zero": 0, "remat": "none", "quantity": "bubble"}
    at = open_plan(**query)
    assert_clean(at)
    assert not [d for d in at.dataframe if "mfu_pct" in d.value.columns]
    assert [i.value for i in at.info].count(TEXTS["predict.withheld"]["en"]) == 2
    assert button(at, "plan.reveal").disabled
    at.text_input(key="plan.student").set_value("Ada")
    at.text_input(key="plan.class_code").set_value("plan-class").run()
    at.number_input(key="plan.guess.bubble").set_value(0.125).run()
    button(at, "plan.reveal").click().run()
    assert_clean(at)
    assert TEXTS["outcome"]["en"].format(guess="0.125", answer="0.125", unit=TEXTS["unit.bubble"]["en"]) in said(at)
    assert frame_with(at, "mfu_pct").shape[0] == 10
    kept = classroom.read_class("plan-class", record_store).predictions
    assert kept[["sheet", "step", "attempt", "after_answer"]].values.tolist() == [["plan", "bubble", 1, False]]
    assert kept[["prediction", "answer", "result"]].values.tolist() == [["0.125", "0.125", 1.0]]  # tags: text


def test_the_check_compiles_the_top_plans_here_and_shows_their_train_commands():
    at = open_plan(model="lab", devices=8)
    button(at, "plan.check").click().run()
    assert_clean(at)
    checked = check.check_top(8, 3)
    memory = frame_with(at, "compiled_peak_bytes")
    assert list(memory["layout"]) == [c.layout.label() for c in checked]
    assert [None if pd.isna(v) else v for v in memory["compiled_peak_bytes"]] == [
        c.compiled_peak_bytes for c in checked]  # None where the compiler reports no peak
    assert list(memory["predicted_bytes"]) == [c.prediction.memory.total for c in checked]
    sent = frame_with(at, "hlo_sent")
    assert [(r.axis, r.predicted_sent, r.hlo_sent) for r in sent.itertuples()] == [
        (axis, c.predicted_bytes.get(axis, 0.0), c.hlo_bytes.get(axis, 0.0)) for c in checked
        for axis in sorted({*c.predicted_bytes, *c.hlo_bytes}, key=lambda a: AXES.index(a) if a in AXES else 9)]
    codes = [c.value for c in at.code]
    for c in checked:
        assert shlex.join(check.train_command(c.layout, 8)) in codes
    for code in {code for c in checked for code in c.reasons}:  # a code without a text shows as itself
        assert (TEXTS[f"reason.{code}"]["en"] if f"reason.{code}" in TEXTS else code) in said(at)
    at.number_input(key="plan.devices").set_value(4).run()
    assert TEXTS["check.stale"]["en"] in said(at)


def test_past_this_servers_devices_the_check_says_so():
    at = open_plan()
    assert button(at, "plan.check").disabled
    assert TEXTS["check.too_many"]["en"].split("{")[0] in said(at)


def test_each_worksheet_step_opens_the_page_on_its_settings():
    for step_id, query in worksheet_queries("14_plan", 8):  # no step runs on devices: the same at every D
        at = open_plan(**query)
        assert_clean(at)
        assert not at.warning, step_id  # no setting ignored
        assert {k: at.query_params.get(k) for k in query} == query, step_id
        assert TEXTS["predict.withheld"]["en"] in said(at), step_id


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_plan_bounded_by_memory_names_the_faster_variant_that_does_not_fit(lang):
    query = {"model": "llama3-8b", "hardware": "tpu-v5e", "devices": 16, "seq_len": 32768, "tokens": 16 * 32768}
    at = open_plan(lang=lang, **query)
    assert_clean(at)
    result = plan(MODELS["llama3-8b"], HARDWARE["tpu-v5e"], 16, Workload(16, 32768), DEFAULT_ASSUMPTIONS)
    verdict = result.verdict
    assert verdict.bound == search.MEMORY and verdict.faster_unfitting.remat == "none"
    need = predict(MODELS["llama3-8b"], verdict.faster_unfitting, Workload(16, 32768), HARDWARE["tpu-v5e"],
                   DEFAULT_ASSUMPTIONS).memory.total
    assert need > 16e9
    assert TEXTS["bound.memory"][lang].format(faster=verdict.faster_unfitting.label(), saved=verdict.bound_s,
                                              need=need / 1e9, budget=16) in said(at)


def test_where_no_layout_fits_the_page_says_so_and_lists_those_that_need_least():
    at = open_plan(model="llama3-405b", devices=64, seq_len=8192, tokens=64 * 8192)
    assert_clean(at)
    result = plan(MODELS["llama3-405b"], HARDWARE["h100"], 64, Workload(64, 8192), DEFAULT_ASSUMPTIONS)
    assert not result.plans
    least = result.unfit[0].prediction
    assert TEXTS["none_fit"]["en"].format(d=64, least=least.memory.total / 1e9, layout=least.layout.label(),
                                          budget=80) in [w.value for w in at.warning]
    unfit = frame_with(at, "mfu_pct")
    assert list(unfit["memory_gb"]) == [p.prediction.memory.total / 1e9 for p in result.unfit[:10]]
    assert TEXTS["verdict.heading"]["en"] not in [s.value for s in at.subheader]


def test_the_page_answers_before_it_plans_or_compiles_and_only_the_check_compiles():
    """Its first run ends with the settings and the ⏳ note of the planning running in the background, no JAX
    compile in it; the ranking shows once the planning is done, still with none; the check compiles."""
    compiled = []  # the compile events of this test's runs (the server's warm-up thread compiles on its own)

    def heard(name: str, seconds: float, **_) -> None:
        if name.startswith("/jax/core/compile/") and threading.current_thread().name != "pmap-lab-warm-up":
            compiled.append(name)

    jax.monitoring.register_event_duration_secs_listener(heard)
    try:
        at = open_lab("plan", model="llama3-8b", devices=128, seq_len=8192, tokens=128 * 8192)
        assert_clean(at)
        assert at.number_input(key="plan.devices").value == 128
        assert TEXTS["planning"]["en"].split("{")[0] in said(at)  # the ⏳ note, in place of the ranking
        assert not [d for d in at.dataframe if "mfu_pct" in d.value.columns]
        assert compiled == []
        planned(at)
        assert_clean(at)
        assert frame_with(at, "mfu_pct").shape[0] == 10
        assert compiled == []
        at = open_plan(model="lab", devices=3)
        button(at, "plan.check").click().run()
        assert_clean(at)
        assert frame_with(at, "compiled_peak_bytes").shape[0] >= 1 and compiled
    finally:
        jax.monitoring.unregister_event_duration_listener(heard)


def test_each_worksheet_step_opens_the_page_on_the_figure_its_answer_is():
    """The link of a step opens the page on the assumptions its question states: the figure the page reveals for
    the step's own layout is the step's answer (a step that assumes 60% of peak for every FLOP opens the page with
    that choice, not with compute timed by operation)."""
    from pmap_core.practice import worksheets

    sheet = next(s for s in worksheets.load_sheets().sheets if s.id == "14_plan").at(8)
    steps = {step.id: step for step in sheet.steps}
    for step_id, query in worksheet_queries("14_plan", 8):
        if "quantity" not in query:
            continue
        answer = worksheets.compute_answer(steps[step_id], None)
        at = open_plan(**query)
        at.number_input(key=f"plan.guess.{query['quantity']}").set_value(float(answer)).run()
        button(at, "plan.reveal").click().run()
        shown = f"{float(answer):.4g}"
        assert TEXTS["outcome"]["en"].split("{unit}")[0].format(guess=shown, answer=shown) in said(at), step_id


def preset_text(kind: str, key: str) -> str:
    return (PRESETS / kind / f"{key}.toml").read_text(encoding="utf-8")


def test_a_presets_own_toml_typed_in_plans_as_the_preset():
    """Llama 3 8B's and the H100's files typed in: the ranking is the presets' (the page starts from presets'
    files, Llama 3 405B's and the H100's)."""
    at = open_plan(model="own", hardware="own", devices=64, seq_len=8192, tokens=64 * 8192)
    assert at.text_area(key="plan.own_model").value == preset_text("models", "llama3-405b")
    assert at.text_area(key="plan.own_hardware").value == preset_text("hardware", "h100")
    planned(at.text_area(key="plan.own_model").set_value(preset_text("models", "llama3-8b")).run())
    assert_clean(at)
    result = plan(MODELS["llama3-8b"], HARDWARE["h100"], 64, Workload(64, 8192), DEFAULT_ASSUMPTIONS)
    table = frame_with(at, "mfu_pct")
    assert list(table["layout"]) == [pv.layout_key(p.layout).replace(",", " × ") for p in result.plans[:10]]
    assert list(table["step_s"]) == [p.prediction.step_s for p in result.plans[:10]]
    assert list(table["memory_gb"]) == [p.prediction.memory.total / 1e9 for p in result.plans[:10]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_wrong_key_in_a_typed_model_gives_one_error_line_naming_it_and_no_ranking(lang):
    at = open_lab("plan", lang=lang, model="own", devices=1, seq_len=8192, tokens=8192)
    at.text_area(key="plan.own_model").set_value(preset_text("models", "llama3-8b") + "width = 3\n").run()
    assert not at.exception
    assert [e.value for e in at.error] == [TEXTS["error.plan_file_key"][lang].format(
        where=TEXTS["own.model"][lang], key=literal("width"), known=", ".join(MODEL_KEYS))]
    assert not [d for d in at.dataframe if "mfu_pct" in d.value.columns]
    assert TEXTS["planning"][lang].split("{")[0] not in said(at)


def test_a_typed_model_not_toml_or_with_a_value_of_the_wrong_kind_or_too_long_gives_one_error_line():
    at = open_lab("plan", model="own", devices=1, seq_len=8192, tokens=8192)
    for text, code in (("layers = [", "plan_not_toml"), ('layers = "32"', "plan_file_value"),
                       ("x" * 5000, "plan_text_size")):
        at.text_area(key="plan.own_model").set_value(text).run()
        assert not at.exception
        assert len(at.error) == 1 and at.error[0].value.startswith(TEXTS["own.model"]["en"]), at.error[0].value
        assert TEXTS[f"error.{code}"]["en"].split("}")[1].split("{")[0] in at.error[0].value, code
        assert not [d for d in at.dataframe if "mfu_pct" in d.value.columns]


def test_markup_in_a_typed_clusters_names_shows_as_text():
    """The name and the link names of a cluster typed in show literally, in its caption and in the verdict's
    sentence on the data axis (the lab's transformer at D = 3: bounded by its data axis over the first link)."""
    name, link = "**bold** <img src=x>", "[link](http://example.com)"
    text = preset_text("hardware", "h100").replace('"NVIDIA H100 SXM"', f'"{name}"').replace('"NVLink 4"', f'"{link}"')
    at = open_plan(model="lab", devices=3, hardware="own")
    planned(at.text_area(key="plan.own_hardware").set_value(text).run())
    assert_clean(at)
    captions = [c.value for c in at.caption]
    assert TEXTS["own.name"]["en"].format(name=literal(name)) in captions
    assert any(literal(link) in c for c in captions)  # the hardware's figures, its links named
    assert literal(link) in " ".join(m.value for m in at.markdown)  # the verdict's bound by the data axis
    assert not [c for c in [*captions, *(m.value for m in at.markdown)] if f"{name}" in c.replace(literal(name), "")]
