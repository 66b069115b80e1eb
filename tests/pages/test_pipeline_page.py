"""The pipeline lab in English and 中文 at the page's own D = 1, 2, 4 and 8: no exception and no error box, the
schedule drawn cell by cell as `schedule_table` has it, the bubble beside (P − 1)/(M + P − 1), data parallelism
on a second axis only where D ≥ 2P (at D = 2 and 3 the page says what it needs), and the cores-against-stages
note from this runtime. At D = 4, P = 2 the two pipelines side by side are trained: each mesh axis's bytes
per step as the compiled program sends them, against the ring's 2(X − 1)/X × the stage's bytes worked out by
hand, the final loss against the unsplit model's on one device, and the scaling sentence from the run's
slots and collectives. One session predicts,
then measures at P = 2 (the peak bytes of both compiled schedules against their memory_analysis, the step time
against M and its fit); one at P = 4 on too few cores measures the memory alone. Settings that do not fit
get an error box that says which. A runtime of one device and of three, each in a child process of its own:
tests/system/test_mesh_2d_and_pipeline_devices.py."""

import numpy as np
import pytest
from conftest import assert_clean, open_lab
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from labs.texts import table as text_table
from pmap_core.concepts import pipeline
from pmap_core.runtime import describe_runtime
from pmap_core.train import pipeline as train_pipeline
from pmap_core.train import programs
from pmap_core.train.footprint import compiled_memory, peak_bytes

TEXTS = text_table("pipeline")

SMALL = {"devices": 2, "microbatches": 4, "rows": 4, "hidden": 16, "schedule": "1f1b"}


def frames_of(at):
    """Every Altair chart's datasets, as pandas frames."""
    return [convert_arrow_bytes_to_pandas_df(d.data.data) for c in at.get("vega_lite_chart") for d in c.proto.datasets]


def texts_of(at) -> str:
    return " ".join(m.value for m in [*at.markdown, *at.info, *at.caption, *at.warning, *at.success])


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", [1, 2, 3, 8])
def test_the_page_draws_the_schedule_and_its_bubble_at_each_d(devices, lang):
    at = open_lab("pipeline", lang=lang, devices=devices)
    assert_clean(at)
    stages, micro = min(4, devices), 8
    assert at.slider(key="pipeline.stages").value == stages
    assert at.slider(key="pipeline.layers").value == max(2, 2 * stages)
    # The timeline: one cell per device and slot, as the table the compiled step follows has it.
    table = train_pipeline.schedule_table(stages, micro, "gpipe")
    timeline = next(f for f in frames_of(at) if {"slot", "device", "kind", "label"} <= set(f.columns))
    assert len(timeline) == stages * len(table) == stages * 2 * (micro + stages - 1)
    for _, cell in timeline.iterrows():
        assert cell["label"] == ("" if (slot := table[cell["slot"]][cell["device"]]).kind == train_pipeline.IDLE
                                 else str(slot))
    kinds = {TEXTS[f"kind.{k}"][lang] for k in ("forward", "backward", "idle")}
    assert set(timeline["kind"]) <= kinds and len(set(timeline["kind"])) == (3 if stages > 1 else 2)
    rows = at.dataframe[0].value
    assert list(rows["device"]) == list(range(stages)) and rows.shape[1] == 1 + len(table)
    # The bubble, counted, beside the formula and the Playbook's ratio.
    bubble = (stages - 1) / (micro + stages - 1)
    assert metric(at, TEXTS["metric.bubble"][lang]) == f"{bubble:.4f}"
    assert metric(at, TEXTS["metric.formula"][lang]) == f"{bubble:.4f}"
    assert metric(at, TEXTS["metric.playbook"][lang]) == f"{(stages - 1) / micro:.4f}"
    said = texts_of(at)
    # Micro-batches kept: inputs held from arrival to backward, the interview's and sheet 10's meaning;
    # device 0 keeps none (it recomputes from its rows of the batch).
    kept = train_pipeline.held(table, "activations")
    assert kept == [0] + [micro] * (stages - 1)
    assert metric(at, TEXTS["metric.kept"][lang]) == str(max(kept))
    assert (", ".join(map(str, kept)) + (". Device 0 keeps none" if stages > 1 else ". With one stage")
            if lang == "en" else ", ".join(map(str, kept))) in said
    # In lockstep a slot lasts its slowest work: the counts on the page are the table's.
    lockstep = train_pipeline.slot_counts(table)
    assert (f"{lockstep.backward_slots} of the {len(table)} slots hold a backward and {lockstep.forward_slots} "
            "only forwards" if lang == "en"
            else f"{len(table)} 个时间槽中有 {lockstep.backward_slots} 个含有反向") in said
    if devices == 1:
        assert ("one stage holds every layer" if lang == "en" else "一个阶段持有全部层") in said
    if devices >= 2 * stages:  # D = 8, P = 4: two pipelines side by side
        assert ("holds 2 pipelines of 4 stages" if lang == "en" else "并排放下 2 条 4 个阶段的流水线") in said
    else:
        assert (f"a second pipeline of P = {stages} stage(s) needs {2 * stages} devices" if lang == "en"
                else f"第二条 P = {stages} 个阶段的流水线需要 {2 * stages} 台设备") in said
    runtime = describe_runtime()
    if pipeline.shows_bubble_in_time(stages, runtime.physical_cores, runtime.simulated):
        assert not at.warning
    else:  # fewer cores than stages: the page says so, with the core count
        (warning,) = at.warning
        assert (f"share {runtime.physical_cores} CPU core(s), fewer than the {stages} stages" if lang == "en"
                else f"共享 {runtime.physical_cores} 个 CPU 核心，少于 {stages} 个阶段") in warning.value
    assert at.button(key="pipeline.measure").disabled  # a prediction first


@pytest.mark.parametrize("query, says", [
    ({"devices": 2, "stages": 4}, "4 stages need 4 devices (one stage per device), and D is 2"),
    ({"devices": 4, "stages": 4, "layers": 6}, "6 layers do not split evenly into 4 stages"),
    ({"devices": 4, "stages": 4, "microbatches": 3, "rows": 6},
     "The global batch M·b = 18 does not split evenly over the 4 devices (the compiled step takes it split over "
     "them); try b = 8."),
    ({"devices": 8, "stages": 8, "layers": 16, "microbatches": 64, "rows": 1024, "hidden": 1024},
     "over this page's limit of 1,000,000,000"),
])
def test_settings_that_do_not_fit_say_which(query, says):
    at = open_lab("pipeline", **query)
    assert not at.exception
    assert any(says in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="pipeline.measure").disabled


def test_a_global_batch_that_splits_over_the_stages_is_not_refused():
    at = open_lab("pipeline", devices=4, stages=4, microbatches=2, rows=2)  # M·b = 4 rows on 4 devices: it trains
    assert_clean(at)
    assert not at.error
    assert "M = 2 micro-batches" in texts_of(at)


def test_a_link_past_the_bounds_is_refused_with_a_warning():
    at = open_lab("pipeline", devices=4, stages=99, microbatches=1000)
    assert_clean(at)
    assert at.slider(key="pipeline.stages").value == 4 and at.slider(key="pipeline.microbatches").value == 8
    assert len([w for w in at.warning if "99" in w.value or "1000" in w.value]) == 2


def _reference_peak(settings: pipeline.Settings, schedule: str) -> int:
    """arguments + outputs − aliased + temporaries, read here from the compiled program's memory_analysis."""
    config = settings.config(schedule=schedule, steps=1)
    stats = programs.build(config.program_spec(1)).compiled.memory_analysis()
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
            + stats.temp_size_in_bytes)


@pytest.fixture(scope="module")
def page():
    at = open_lab("pipeline", **SMALL)
    assert_clean(at)
    at.radio(key="pipeline.guess").set_value("1f1b").run()
    assert not at.button(key="pipeline.measure").disabled
    at.button(key="pipeline.measure").click().run()
    assert_clean(at)
    return at


def test_the_peak_bytes_are_the_compiled_programs_own(page):
    measured = page.session_state["pipeline.last"]
    settings = measured.settings
    assert (settings.stages, settings.microbatches, settings.rows, settings.hidden) == (2, 4, 4, 16)
    shown = next(d.value for d in page.dataframe if "peak_bytes" in d.value)
    assert list(shown["schedule"]) == list(train_pipeline.SCHEDULES)
    for _, row in shown.iterrows():
        assert row["peak_bytes"] == _reference_peak(settings, row["schedule"])
    # The stash the model counts: GPipe keeps all M micro-batches, 1F1B at most P.
    assert list(shown["kept"]) == [4, 2]
    assert list(shown["stash_model_bytes"]) == [4 * 4 * 16 * 4, 2 * 4 * 16 * 4]
    bars = next(f for f in frames_of(page) if "peak_bytes" in f)
    assert sorted(bars["peak_bytes"]) == sorted(shown["peak_bytes"])
    verdict = pipeline.memory_verdict(measured.memory)
    said = texts_of(page)
    answer = {"gpipe": "GPipe", "1f1b": "1F1B", "same": "the same"}[verdict]
    assert f"You predicted 1F1B; on this machine: {answer}." in said
    assert ("Your prediction was right." in said) == (verdict == "1f1b")
    peak_config = settings.config(steps=1)
    assert peak_bytes(compiled_memory(programs.build(peak_config.program_spec(1)).compiled)) == \
        shown["peak_bytes"][train_pipeline.SCHEDULES.index(settings.schedule)]


def test_step_time_against_m_is_fitted_to_the_lockstep_model(page):
    fit = page.session_state["pipeline.last"].fit
    assert fit is not None  # P = 2 on this runtime: the machine can show the bubble
    table = next(d.value for d in page.dataframe if "step_time_ms" in d.value)
    assert list(table["microbatches"]) == [1, 2, 4]
    assert list(table["global_batch"]) == [4, 8, 16] and list(table["slots"]) == [4, 6, 10]
    # The fit, again: least squares of T = n_F·t_f + n_B·t_b over what the table shows, the slots counted
    # from 1F1B's tables (P = 2: n_F = 2, n_B = 2M).
    counts = np.array([[2, 2], [2, 4], [2, 8]], float)
    (t_f, t_b), *_ = np.linalg.lstsq(counts, np.array(table["step_time_ms"]), rcond=None)
    said = texts_of(page)
    if fit.separable:
        assert (fit.t_forward_s * 1e3, fit.t_backward_s * 1e3) == (pytest.approx(t_f), pytest.approx(t_b))
        np.testing.assert_allclose(table["fit_ms"], counts @ [t_f, t_b])
        gpipe, one = (fit.lockstep_s(4, s) * 1e3 for s in ("gpipe", "1f1b"))
        assert gpipe == pytest.approx(5 * (t_f + t_b)) and one == pytest.approx(2 * t_f + 8 * t_b)
        assert (f"t_f = {t_f:.4g} ms, t_b = {t_b:.4g} ms" in said and f"GPipe step takes {gpipe:.4g} ms and its "
                f"1F1B step {one:.4g} ms, {one / gpipe:.2f}× GPipe's" in said)
    else:  # noise made one of them negative: only the sum is fitted, and the page says so
        assert f"t_f + t_b = {fit.t_pair_s * 1e3:.4g} ms" in said
    assert f"At M = 4 the table has 2 forward slots and 8 backward ones: {fit.fitted_s(4) * 1e3:.4g} ms" in said or \
        f"At M = 4: 2 forward slots, 8 backward ones, {fit.fitted_s(4) * 1e3:.4g} ms" in said
    # The papers' asynchronous figure is apart, labelled, from the same fitted times.
    assert (f"(M + P − 1)(t_f + t_b) (GPipe §2.3; PipeDream-Flush): {5 * fit.t_pair_s * 1e3:.4g} ms at M = 4 "
            f"with the fitted times, against this program's {fit.fitted_s(4) * 1e3:.4g} ms in lockstep") in said
    line = next(f for f in frames_of(page) if "step_time_ms" in f and "series" in f)
    assert len(line) == 6 and set(line["series"]) == {"measured", "lockstep model n_F·t_f + n_B·t_b"}


def test_the_chinese_page_shows_the_same_measurement(page):
    page.session_state["lang"] = "zh"
    page.run()
    assert_clean(page)
    fit = page.session_state["pipeline.last"].fit
    said = texts_of(page)
    shown = f"t_f = {fit.t_forward_s * 1e3:.4g} ms" if fit.separable else f"t_f + t_b = {fit.t_pair_s * 1e3:.4g} ms"
    assert shown in said and "你的预测是 1F1B" in said
    page.session_state["lang"] = "en"


def test_too_few_cores_measure_the_memory_and_say_why_not_the_time():
    runtime = describe_runtime()
    stages = runtime.physical_cores + 1
    if not runtime.simulated or stages > runtime.device_count:
        pytest.skip(f"needs simulated devices and more than {runtime.physical_cores} of them")
    at = open_lab("pipeline", devices=stages, stages=stages, layers=stages, microbatches=2, rows=stages, hidden=8)
    assert_clean(at)
    at.radio(key="pipeline.guess").set_value("same").run()
    at.button(key="pipeline.measure").click().run()
    assert_clean(at)
    measured = at.session_state["pipeline.last"]
    assert measured.fit is None and len(measured.memory) == 2
    assert f"Step time not measured: {runtime.physical_cores} CPU core(s) for {stages} stages" in texts_of(at)


# --- data parallelism beside the pipeline, trained ------------------------------------------------------

DATA = {"devices": 4, "stages": 2, "layers": 4, "microbatches": 4, "rows": 4, "hidden": 16}


@pytest.fixture(scope="module")
def data_page():
    at = open_lab("pipeline", **DATA)
    assert_clean(at)
    assert TEXTS["data.nothing_yet"]["en"] in texts_of(at)
    at.button(key="pipeline.train_data").click().run()
    assert_clean(at)
    return at


def _unsplit_loss(batch: int) -> float:
    """The reference: the same model, batch and initial parameters, unsplit on one device, as many steps."""
    from pmap_core.train.config import TrainConfig
    from pmap_core.train.loop import train
    from pmap_core.train.plan import validate

    return train(validate(TrainConfig(model="mlp", impl="jit", devices=1, layers=4, hidden=16, features=8,
                                      global_batch=batch, steps=pipeline.STEPS, chunk=pipeline.STEPS)),
                 measure_scaling=False).losses[-1]


def test_d4_p2_trains_two_pipelines_and_shows_each_axis_bytes_beside_the_formula(data_page):
    devices, _settings, run = data_page.session_state["pipeline.data_last"]
    assert devices == 4 and (run.replicas, run.stages, run.global_batch) == (2, 2, 2 * 4 * 4)
    # By hand: stage 0 holds w1, b1, w2, b2 (8·16 + 16 + 16·16 + 16 = 416 floats), the larger stage.
    stage_bytes = 4 * (8 * 16 + 16 + 16 * 16 + 16)
    ring = 2 * (2 - 1) / 2
    data_bytes, permute_bytes = ring * (stage_bytes + 4), 2 * 2 * (4 + 2 - 1) * 4 * 16 * 4
    assert metric(data_page, TEXTS["metric.data_bytes"]["en"]) == f"{data_bytes:,.0f}"
    assert metric(data_page, TEXTS["metric.data_formula"]["en"]) == f"{data_bytes:,.0f}"
    assert metric(data_page, TEXTS["metric.permute_bytes"]["en"]) == f"{permute_bytes:,.0f}"
    shown = next(d.value for d in data_page.dataframe if "measured_bytes" in d.value)
    assert list(shown["measured_bytes"]) == pytest.approx([data_bytes, permute_bytes, 4.0])
    assert list(shown["formula_bytes"]) == pytest.approx(list(shown["measured_bytes"]))
    assert list(shown["per_step"]) == [1, 2 * 2 * (4 + 2 - 1), 1]
    reference = _unsplit_loss(run.global_batch)
    assert run.pipeline_loss == pytest.approx(reference, rel=1e-5)
    assert run.data_parallel_loss == pytest.approx(reference, rel=1e-5)
    said = texts_of(data_page)
    assert f"{ring * stage_bytes:,.0f}, and the loss the same all-reduce carries {ring * 4:,.0f}" in said
    assert "carrying f32[416], f32[]" in said and "Every measured figure is the formula's, to the byte." in said
    assert f"{run.pipeline_loss:.8g} for the 2 pipelines, {run.data_parallel_loss:.8g} for data parallelism" in said
    assert f"Relative gap {run.loss_gap:.2e}, within 1e-05" in said
    # The scaling ratio, from what ran: 2(M + P − 1) slots counted from the table, the collectives read from HLO.
    assert f"S = {run.scaling_ratio:.3g} on 4 devices" in said
    assert "a step has 10 slots (2(M + P − 1)); the compiled step runs 20 collective-permutes per step and 2" in said
    assert f"22 collectives, {run.step_s / 22 * 1e6:.3g} µs of the step per collective" in said
    # What the step pays: the recomputed forward and, in lockstep, the slots that last a backward (GPipe, M = 4,
    # P = 2: 5 of 10), counted from the table.
    assert ("a forward recomputed in every backward (each stage runs 2 × 4 forwards where the unsplit model runs "
            "4); in lockstep each slot's slowest work (5 of the 10 slots last a backward)") in said
    runtime = describe_runtime()
    if runtime.simulated:
        assert f"rendezvous of the 4 device threads on {runtime.physical_cores} CPU core(s)" in said
    times = run.data_parallel_scaling_ratio / run.scaling_ratio
    assert (f"S is 1/{times:.3g} of data parallelism's" in said) == (times > 1)


def test_the_chinese_page_shows_the_same_data_axis_run(data_page):
    data_page.session_state["lang"] = "zh"
    data_page.run()
    assert_clean(data_page)
    run = data_page.session_state["pipeline.data_last"][2]
    said = texts_of(data_page)
    assert "携带 f32[416], f32[]：每台设备每步发送 1,668 字节" in said
    assert "每个时间槽 2 次" in said and "= 5,120" in said
    assert f"相对差 {run.loss_gap:.2e}，在 1e-05 以内" in said
    assert f"在 4 台设备上 S = {run.scaling_ratio:.3g}" in said
    data_page.session_state["lang"] = "en"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", [2, 3])
def test_below_two_pipelines_the_page_says_what_a_data_axis_needs(devices, lang):
    at = open_lab("pipeline", lang=lang, devices=devices)
    assert_clean(at)
    said = texts_of(at)
    needs = {"en": f"a second pipeline of P = {devices} stage(s) needs {2 * devices} devices, and D is {devices}",
             "zh": f"第二条 P = {devices} 个阶段的流水线需要 {2 * devices} 台设备，而 D 为 {devices}"}
    assert needs[lang] in said
    assert not [b for b in at.button if b.key == "pipeline.train_data"]
