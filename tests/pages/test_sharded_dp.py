"""The sharded data parallel lab (ZeRO / FSDP) in English and 中文, the applications calculator's ZeRO stages,
and the ZeRO interview questions against independent references.

One AppTest session trains (zero3, D = 2, K = 2, float32 beside bfloat16) and measures every strategy at
D = 1, 2 in both precisions with a tiny MLP; the tests after it read what it left. Then the page at D = 1
and 8, each ZeRO question on the interview page, and the page at D = 3, where every sentence with a
number is checked against runs recomputed here.
"""

import dataclasses
import json
import re

import jax
import numpy as np
import pytest
from conftest import APP, SESSION_TRACKING_URI, assert_clean, open_lab
from mlflow.tracking import MlflowClient
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from labs.texts import table as text_table
from pmap_core.concepts import sharded_dp as zero_compare
from pmap_core.costs import analytic
from pmap_core.practice.quiz import registry as quiz
from pmap_core.practice.quiz import zero as quiz_zero
from pmap_core.train import hsdp
from tests.apptest_support import give_prediction

COMMON_TEXTS, QUIZ_TEXTS, PAGE_TEXTS = text_table("common"), text_table("interview"), text_table("sharded_dp")

TINY = {"devices": 2, "batch": 16, "steps": 4, "hidden": 8, "features": 4, "accum": 2, "measure_max": 2,
        "compare": "true", "strategy": "zero3"}
N = jax.local_device_count()


def frames_of(at):
    """Every Altair chart's datasets, as pandas frames."""
    return [convert_arrow_bytes_to_pandas_df(d.data.data) for c in at.get("vega_lite_chart") for d in c.proto.datasets]


@pytest.fixture(scope="module")
def page():
    at = open_lab("sharded_dp", **TINY)
    assert_clean(at)
    assert any("Press Train" in i.value for i in at.info)
    at.button(key="sharded_dp.train").click().run()
    assert_clean(at)
    at.button(key="sharded_dp.measure").click().run()
    assert_clean(at)
    return at


def test_train_runs_both_gradient_dtypes_and_tracks_them(page):
    runs = page.session_state["sharded_dp.last_run"]
    assert [r.result.config.grad_dtype for r in runs] == ["float32", "bfloat16"]
    client = MlflowClient(SESSION_TRACKING_URI)
    for tracked in runs:
        cfg, f = tracked.result.config, tracked.result.footprint
        assert (cfg.strategy, cfg.devices, cfg.accum_steps, cfg.optimizer, cfg.impl) == ("zero3", 2, 2, "adam", "jit")
        assert len(tracked.result.losses) == 4
        assert any(tracked.run_id in c.value for c in page.code)  # plain text, never markdown
        stored = client.get_run(tracked.run_id)
        assert stored.info.status == "FINISHED" and stored.data.params["strategy"] == "zero3"
        assert stored.data.metrics["param_bytes_per_device"] == f.param_bytes_per_device
        assert stored.data.metrics["comm_bytes_per_step"] == pytest.approx(f.comm_bytes_per_step)
    losses = next(frame for frame in frames_of(page) if "grad_dtype" in frame)
    for tracked in runs:
        mine = losses[losses["grad_dtype"] == tracked.result.config.grad_dtype]["loss"]
        np.testing.assert_allclose(mine, tracked.result.losses)
    # The first table: the trained run's footprint beside the model.
    f = runs[0].result.footprint
    table = page.dataframe[0].value
    assert list(table["measured"]) == [f.param_bytes_per_device, f.grad_bytes_per_device, f.opt_bytes_per_device,
                                       pytest.approx(f.comm_bytes_per_step)]
    assert table["model"].iloc[0] == pytest.approx(f.model_memory.params)


def test_bfloat16_section_says_what_this_backend_did(page):
    f32, bf16 = (r.result.footprint for r in page.session_state["sharded_dp.last_run"])
    text = " ".join(m.value for m in page.markdown)
    ratio = bf16.emitted_grad_comm_bytes_per_step / f32.emitted_grad_comm_bytes_per_step
    assert f"{ratio:.2f}× the bytes as emitted" in text
    assert ratio < 0.6  # the gradients are half the bytes; the loss's all-reduce stays float32
    widened = bf16.grad_comm_bytes_per_step > 1.5 * bf16.emitted_grad_comm_bytes_per_step
    shown = " ".join(i.value for i in page.info)
    assert ("widens the bfloat16 collective" in shown) == widened
    assert ("compiled collective stays in bfloat16" in shown) == (not widened)
    assert "K = 2: each device runs 2 micro-batches of 4 samples" in text


def test_measured_charts_hold_the_runs_footprints(page):
    footprints = page.session_state["sharded_dp.footprints"]
    # Both precisions are measured (the memory chart shows float32 beside ZeRO's mixed precision), the
    # chosen one first.
    assert [f.precision for f in footprints] == ["float32"] * 8 + ["mixed"] * 8
    assert sorted((f.precision, f.strategy, f.devices) for f in footprints) == sorted(
        (p, s, d) for p in ("float32", "mixed") for s in ("dp", "zero1", "zero2", "zero3") for d in (1, 2))
    frames = frames_of(page)
    memory = next(frame for frame in frames if "kind" in frame)
    expected = zero_compare.memory_rows(footprints)
    assert memory[["precision", "strategy", "D", "kind", "measured", "model"]].to_dict("records") == expected
    comm = next(frame for frame in frames if "source" in frame)
    float32 = [f for f in footprints if f.precision == "float32"]  # bytes sent: the chosen precision's
    for row in zero_compare.comm_rows(float32):
        for source in ("measured", "model"):
            hit = comm[(comm["strategy"] == row["strategy"]) & (comm["D"] == row["D"]) & (comm["source"] == source)]
            assert hit["bytes"].tolist() == [pytest.approx(row[source])]
    # A different run of the same settings: the trained zero3 run at D = 2 held and sent what the short one did.
    trained = page.session_state["sharded_dp.last_run"][0].result.footprint
    short = next(f for f in footprints if (f.strategy, f.devices) == ("zero3", 2))
    assert zero_compare.held(short) == zero_compare.held(trained)
    assert short.comm_bytes_per_step == pytest.approx(trained.comm_bytes_per_step)
    # D = 1: sharding changes nothing, and the page says so, in each precision.
    for precision in ("float32", "mixed"):
        ones = {zero_compare.total_bytes(f) for f in footprints if f.devices == 1 and f.precision == precision}
        assert len(ones) == 1
    assert sum("every strategy held the same" in c.value for c in page.caption) == 2


def test_largest_model_table_is_the_budget_over_measured_bytes(page):
    footprints = page.session_state["sharded_dp.footprints"]
    (table,) = [frame.value for frame in page.dataframe if "largest_model_b" in frame.value.columns]
    assert list(table["strategy"]) == ["dp", "zero1", "zero2", "zero3"]
    for _, row in table.iterrows():
        f = next(x for x in footprints if (x.strategy, x.devices) == (row["strategy"], 2))
        assert row["bytes_per_param"] == pytest.approx(zero_compare.total_bytes(f) / f.param_count)
        assert row["largest_measured_b"] == pytest.approx(80e9 / row["bytes_per_param"] / 1e9)
        assert row["largest_model_b"] == pytest.approx(analytic.largest_model_params(80e9, 2, row["strategy"]) / 1e9)


def test_the_chinese_page_reuses_the_measurement(page):
    # A radio's labels read the language when AppTest formats them outside a run, so no click in 中文:
    # the session starts with the English session's measured settings (a cache hit, no new runs).
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = "zh"
    for name, value in TINY.items():
        at.query_params[name] = str(value)
    at.session_state["sharded_dp.measured"] = page.session_state["sharded_dp.measured"]
    at.run()
    at.switch_page("labs/sharded_dp.py")
    at.run()
    assert_clean(at)
    assert at.title[0].value == "分片数据并行：ZeRO / FSDP"
    specs = [json.dumps(json.loads(c.proto.spec), ensure_ascii=False) for c in at.get("vega_lite_chart")]
    assert any("每台设备按类别的字节数" in spec for spec in specs)
    assert at.session_state["sharded_dp.footprints"] == page.session_state["sharded_dp.footprints"]


def test_bad_links_and_settings_are_explained():
    at = open_lab("sharded_dp", strategy="zero9", accum=0)
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    assert "`strategy`" in warned and "`accum`" in warned
    at = open_lab("sharded_dp", devices=2, batch=18, accum=2)
    assert not at.exception
    assert any("micro-batches of equal size" in e.value and "16" in e.value for e in at.error)
    assert at.button(key="sharded_dp.train").disabled and at.button(key="sharded_dp.measure").disabled


def test_applications_calculator_shards_with_the_zero_formula():
    at = open_lab("applications", model="llama2_7b", zero="zero3", max_devices=8)
    assert_clean(at)
    memory = next(frame for frame in frames_of(at) if "GB" in frame)
    # bf16 mixed precision with Adam: 2 + 2 bytes, then 8 of moments + 4 of master weights, all over D = 8.
    model = analytic.zero_memory_per_device(6.7e9, 8, "zero3", 2.0, 2.0, 12.0)
    assert memory["GB"].sum() == pytest.approx(model.total / 1e9)
    assert model.total / 6.7e9 == pytest.approx(16 / 8)


# --- the interview questions ---------------------------------------------------------------

def references(n: int) -> dict:
    """By hand, for n devices: Adam, 16 bytes per parameter of which the stage shards a part."""
    return {
        "zero1_memory_gb": 4 + 4 + 8 / n,  # float32: 4 + 4 + 8
        "zero2_memory_gb": 4 + 12 / n,
        "zero3_memory_gb": 16 / n,
        "mixed_zero1_memory_gb": 2 + 2 + 12 / n,  # ZeRO §3's mixed precision: 2 + 2 + 12
        "scatter_gather_vs_all_reduce": quiz_zero.SAME_BOTH,  # ring: (D−1)/D·S twice = 2(D−1)/D·S
        # ZeRO §7.2.2: each layer gathered for the forward and again for the backward, then reduce-scattered:
        # 3Ψ to 2Ψ. One device sends 0 bytes.
        "fsdp_vs_dp_bytes": quiz_zero.MORE if n > 1 else quiz_zero.NOTHING,
        # dp's all-reduce stays after the micro-batch loop; on one device it is in the program and sends 0 bytes.
        "accumulation_collectives": quiz_zero.ONCE_PER_STEP if n > 1 else quiz_zero.NEVER,
        "zero3_layer_gathers": quiz_zero.TWICE if n > 1 else quiz_zero.NOT_GATHERED,
        "padded_mean": quiz_zero.PSUM_SUMS if n > 1 else quiz_zero.BOTH,
    }


REFERENCES = references(N)


def test_at_least_five_questions_with_texts_in_both_languages():
    assert len(quiz_zero.QUESTIONS) >= 5
    for question in quiz_zero.QUESTIONS:
        assert isinstance(question, quiz.Question) and question.id in REFERENCES
        for key in (f"w.question.{question.id}", f"q.{question.id}.text", f"q.{question.id}.explain"):
            assert QUIZ_TEXTS[key]["en"] and QUIZ_TEXTS[key]["zh"], key


@pytest.mark.parametrize("question", quiz_zero.QUESTIONS, ids=lambda q: q.id)
def test_computed_answer_matches_the_reference(question):
    answer = question.program()
    if question.kind == quiz.NUMBER:
        assert answer == pytest.approx(REFERENCES[question.id])
    else:
        assert answer == REFERENCES[question.id] and answer in question.options(N)


def test_memory_formula_matches_the_measured_shards(page):
    """The quiz's bytes per parameter (costs.analytic) against the lab's measured runs at D = 1 and 2, in
    both precisions (each layer is padded with zeros to a multiple of D, and Adam's step count is held
    whole, so measurement sits a few per cent above on this tiny model)."""
    by_hand = {"float32": (4.0, 4.0, 8.0), "mixed": (2.0, 2.0, 12.0)}  # ZeRO §3: 2 + 2 + 12 = 16
    for f in page.session_state["sharded_dp.footprints"]:
        model = analytic.zero_memory_per_device(1.0, f.devices, f.strategy, *by_hand[f.precision]).total
        assert zero_compare.total_bytes(f) / f.param_count == pytest.approx(model, rel=0.1)


def test_the_zero_texts_say_device_memory_not_video_memory():
    """The lab's devices are CPU devices here: 设备内存, the glossary's term, never 显存."""
    for table in (PAGE_TEXTS, QUIZ_TEXTS):
        for key, entry in table.items():
            assert "显存" not in entry["zh"], key


def test_padded_mean_against_numpy():
    batch, per = 4 * N + 1, -(-(4 * N + 1) // N)
    padded = np.zeros(N * per)
    padded[:batch] = np.arange(1, batch + 1)
    mean_of_means = padded.reshape(N, per).mean(axis=1).mean()
    assert (mean_of_means == (batch + 1) / 2) == (quiz_zero.padded_mean() == quiz_zero.BOTH)


# --- the page at D = 1, 3 and 8, and every number it states at D = 3 -----------------------------------


def train_and_measure(**settings):
    at = open_lab("sharded_dp", **settings)
    assert_clean(at)
    at.button(key="sharded_dp.train").click().run()
    assert_clean(at)
    at.button(key="sharded_dp.measure").click().run()
    assert_clean(at)
    return at


def shown_texts(at) -> list[str]:
    return [e.value for kind in ("subheader", "markdown", "caption", "info", "warning", "success")
            for e in getattr(at, kind)]


def test_one_device_says_nothing_is_sharded_or_sent():
    at = train_and_measure(devices=1, batch=8, steps=2, hidden=8, features=4, measure_max=1)
    text = " ".join(shown_texts(at))
    assert "D = 1: one device, so nothing is sharded and nothing is sent" in text
    assert "D = 1: one device, so nothing is sharded or sent" in text
    assert "At D = 1 (one device) nothing is sharded: every strategy held" in text
    # What no run at D = 1 did: send bytes, gather a layer, pad a buffer, run a micro-batch loop.
    for absent in ("What a step sent per device", "ZeRO-3 here", "Padding:", "Against dp's", "lax.scan"):
        assert absent not in text, absent


def test_eight_devices_in_mixed_precision():
    at = train_and_measure(devices=8, batch=16, steps=2, hidden=8, features=4, measure_max=1, precision="mixed",
                           strategy="zero2")
    text = " ".join(shown_texts(at))
    run = at.session_state["sharded_dp.last_run"][0].result
    assert (run.config.precision, run.config.grad_dtype, run.config.devices) == ("mixed", "bfloat16", 8)
    assert "Mixed precision computes and sends bfloat16 gradients" in text
    assert "Peak at D = 8: ZeRO-3" in text and "Against dp's" in text
    # Every precision at every measured D: the memory chart's rows.
    assert {(f.precision, f.devices) for f in at.session_state["sharded_dp.footprints"]} == {
        (p, d) for p in ("float32", "mixed") for d in (1, 8)}
    if run.footprint.comm_bytes_per_step > 1.5 * run.footprint.emitted_comm_bytes_per_step:  # XLA:CPU widens
        assert "This backend compiled these collectives as f32 where JAX emitted bf16" in text


@pytest.mark.parametrize("question", [q.id for q in quiz_zero.QUESTIONS])
def test_each_zero_question_is_answered_and_explained_on_the_interview_page(question):
    at = give_prediction(open_lab("interview", question=question), f"interview.{question}.guess")
    at.button(key="interview.check").click().run()
    assert_clean(at)
    explain = QUIZ_TEXTS[f"q.{question}.explain"]["en"].split("{")[0]
    assert any(m.value.startswith(explain) for m in at.markdown), question


D3 = {"devices": 3, "batch": 12, "steps": 4, "hidden": 8, "features": 4, "accum": 2, "measure_max": 1,
      "compare": "true", "strategy": "zero3"}
PSI = 4 * 8 + 8 + 8 + 1  # the MLP's w1, b1, w2, b2 for 4 inputs and 8 hidden


@pytest.fixture(scope="module")
def page3():
    return train_and_measure(**D3)


def rerun(**changes):
    """The page's run at D = 3, recomputed here through pmap_core (as the page's settings define it)."""
    from pmap_core.train import config as train_config
    from pmap_core.train import loop
    from pmap_core.train import plan as train_plan

    config = train_config.TrainConfig(model="mlp", devices=3, global_batch=12, learning_rate=0.01, steps=4,
                                      hidden=8, features=4, chunk=4, impl="jit", optimizer="adam", strategy="zero3",
                                      accum_steps=2)
    return loop.train(train_plan.validate(dataclasses.replace(config, **changes)), measure_scaling=False)


def en(key: str, **values) -> str:
    return PAGE_TEXTS[key]["en"].format(**values)


def as_pattern(template: str) -> re.Pattern:
    """A text of another table (the hardware note, the share panel) with any value in its placeholders."""
    parts = re.split(r"\{[^}]*\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts), re.DOTALL)


def expected_d3_sentences() -> dict[str, str]:
    """Every sentence with a figure that the page at D = 3 should show, from runs recomputed here."""
    from pmap_core.train import footprint as fp
    from pmap_core.train import programs

    trained, bf16 = rerun(), rerun(grad_dtype="bfloat16")
    f, b = trained.footprint, bf16.footprint
    f32_label, bf16_label = en("run.float32", dtype="float32"), en("run.float32", dtype="bfloat16")
    out = {
        "per_device.accum": en("per_device.accum", batch=12, devices=3, k=2, micro=2),
        "result.heading": en("result.heading", strategy="ZeRO-3 (FSDP)", devices=3, psi=PSI, accum=2, run=f32_label),
        "tracking.where.f32": en("tracking.where", dtype=f32_label),
        "tracking.where.bf16": en("tracking.where", dtype=bf16_label),
        "compare.losses": en("compare.losses", steps=4, first=trained.final_loss, first_run=f32_label,
                             second=bf16.final_loss, second_run=bf16_label,
                             diff=abs(bf16.final_loss - trained.final_loss) / abs(trained.final_loss)),
    }
    # Padding: layer 1 holds 40 values, padded to 42 (3 × 14), layer 2 holds 9: 2 zeros of 4 bytes in one row.
    assert f.padding_bytes_per_device == 8
    out["held.padding"] = en("held.padding", padding=8, devices=3)
    m = f.compiled_memory
    outputs = m.get("output_size_in_bytes", 0) - m.get("alias_size_in_bytes", 0)
    assert f.peak_bytes_per_device == m["argument_size_in_bytes"] + outputs + m["temp_size_in_bytes"]
    out["held.peak"] = en("held.peak", peak=f.peak_bytes_per_device, args=m["argument_size_in_bytes"],
                          outputs=outputs, temps=m["temp_size_in_bytes"])
    order = ("all-reduce", "reduce-scatter", "all-gather")
    parts = " + ".join(f"{k} {f.comm_by_kind[k]:,.0f}" for k in order if k in f.comm_by_kind)
    model = 2 * PSI * (4 + 2 * 4) * 2 / 3  # K Ψ (g + 2p) (D−1)/D, by hand
    assert f.model_comm_bytes_per_step == pytest.approx(model)
    out["sent.line"] = en("sent.line", parts=parts, total=f.comm_bytes_per_step, model=model,
                          formula=zero_compare.COMM_FORMULAS["zero3"], source=zero_compare.SOURCES["zero3"])
    # ZeRO-3's gathers, counted in the compiled HLO: instructions and values per step.
    program = programs.build(trained.config.program_spec(4))
    gathers = [r for r in fp.collective_runs(program.compiled.as_text(), (4, 2)) if r.collective.kind == "all-gather"]
    instructions = sum(r.runs_per_call for r in gathers) / 4
    values = sum(int(np.prod([int(d) for d in s.split("[")[1].rstrip("]").split(",") if d])) * r.runs_per_call
                 for r in gathers for s in r.collective.shapes) / 4
    padded = 42 + 9
    assert (instructions, values / padded) == (2 * 2 * 2, 2 * 2)  # 2 layers × (forward, backward) × K = 2
    out["sent.gathers"] = en("sent.gathers", instructions=instructions, layers=2, k=2, times=values / padded,
                             padded=padded)
    out["accum.measured"] = en("accum.measured", k=2, micro=2, per=4)
    out["accum.in_loop"] = en("accum.in_loop", reductions=f.reductions_per_step)
    assert f.grad_bytes_per_device / (PSI * 4) < 1.1 / 3  # a shard
    out["accum.holds.shard"] = en("accum.holds.shard", grad=f.grad_bytes_per_device,
                                  ratio=f.grad_bytes_per_device / (PSI * 4), psi=PSI, whole=PSI * 4)
    out["accum.explain"] = en("accum.explain", batch=12, devices=3, k=2, micro=2)
    out["bf16.measured"] = en("bf16.measured", emitted=b.emitted_grad_comm_bytes_per_step,
                              compiled=b.grad_comm_bytes_per_step, dtypes=", ".join(b.comm_dtypes))
    out["bf16.against"] = en("bf16.against",
                             emitted=b.emitted_grad_comm_bytes_per_step / f.emitted_grad_comm_bytes_per_step,
                             compiled=b.grad_comm_bytes_per_step / f.grad_comm_bytes_per_step)
    # The measurement: every strategy at D = 1 and 3 (the ladder up to 1, and the chosen D), both precisions.
    points = {(p, s, d): rerun(precision=p, grad_dtype="bfloat16" if p == "mixed" else "float32", strategy=s,
                               devices=d, steps=2, chunk=2).footprint
              for p in ("float32", "mixed") for s in ("dp", "zero1", "zero2", "zero3") for d in (1, 3)}

    def per_param(p, s, d):
        x = points[p, s, d]
        return (x.param_bytes_per_device + x.grad_bytes_per_device + x.opt_bytes_per_device) / PSI

    out["all.settings"] = en("all.settings", psi=PSI, hidden=8, features=4, optimizer="adam", batch=12, k=2,
                             run=f32_label, counts="1, 3")
    for p, name in (("float32", "float32"), ("mixed", PAGE_TEXTS["w.precision.mixed"]["en"])):
        (total,) = {per_param(p, s, 1) * PSI for s in ("dp", "zero1", "zero2", "zero3")}
        out[f"all.one_device.{p}"] = en("all.one_device", total=total, precision=name)
    out["bpp.heading"] = en("bpp.heading", devices=3)
    out["bpp.measured"] = en("bpp.measured", devices=3, optimizer="adam", f32=per_param("float32", "zero1", 3),
                             f32_dp=per_param("float32", "dp", 3),
                             f32_x=per_param("float32", "dp", 3) / per_param("float32", "zero1", 3),
                             mixed=per_param("mixed", "zero1", 3), mixed_dp=per_param("mixed", "dp", 3),
                             mixed_x=per_param("mixed", "dp", 3) / per_param("mixed", "zero1", 3))
    out["strategies.heading"] = en("strategies.heading", devices=3, run=f32_label)
    dp = points["float32", "dp", 3]
    out["strategies.sent"] = en("strategies.sent", devices=3, dp=dp.comm_bytes_per_step,
                                **{s: points["float32", s, 3].comm_bytes_per_step / dp.comm_bytes_per_step
                                   for s in ("zero1", "zero2", "zero3")})
    zero3 = points["float32", "zero3", 3]
    out["strategies.peak"] = en("strategies.peak", devices=3, zero3=zero3.peak_bytes_per_device,
                                dp=dp.peak_bytes_per_device,
                                ratio=zero3.peak_bytes_per_device / dp.peak_bytes_per_device)
    # The largest gap between measurement and formula, first in the page's order (strategy, then D).
    gaps = [(x, name, r) for s in ("dp", "zero1", "zero2", "zero3") for d in (1, 3)
            for x in [points["float32", s, d]] for name, r in x.ratios().items() if r is not None]
    worst = max(gaps, key=lambda g: abs(g[2] - 1))
    out["all.worst"] = en("all.worst", strategy=worst[0].strategy, devices=worst[0].devices,
                          figure=PAGE_TEXTS[f"ratio.{worst[1]}"]["en"], ratio=worst[2])
    out["fit.heading"] = en("fit.heading", budget=80.0, devices=3, run=f32_label)
    config = trained.config  # the HSDP section: every replica x data split of D = 3, from the formulas
    flat, hybrid = hsdp.hsdp_layouts(3, config.strategy, config.precision, config.optimizer, config.grad_dtype)
    out["hsdp.intro"] = en("hsdp.intro", devices=3, strategy=config.strategy, run=f32_label)
    out["hsdp.when"] = en("hsdp.when", flat=flat.data_sent, replicas=hybrid.replicas, replica=hybrid.replica_sent,
                          data=hybrid.data_sent, held=hybrid.held, flat_held=flat.held)
    return out


def test_every_number_the_page_states_at_three_devices_is_what_ran(page3):
    expected = expected_d3_sentences()
    constants = {t["en"] for t in PAGE_TEXTS.values() if "{" not in t["en"]}  # formulas and sources, no measurement
    others = [as_pattern(t["en"]) for t in COMMON_TEXTS.values()]  # the hardware note, the share panel
    shown = shown_texts(page3)
    with_numbers = [t for t in shown if re.search(r"\d", t)]
    unexplained = [t for t in with_numbers if t not in expected.values() and t not in constants
                   and not any(p.fullmatch(t) for p in others)]
    assert not unexplained, unexplained
    missing = {key: text for key, text in expected.items() if text not in shown}
    assert not missing, missing
    # The two tables at D = 3, against the same runs.
    table = next(d.value for d in page3.dataframe if "formula_bytes" in d.value)
    assert list(table["formula_bytes"]) == pytest.approx([16, 8 + 8 / 3, 4 + 12 / 3, 16 / 3, 16, 4 + 12 / 3,
                                                          2 + 14 / 3, 16 / 3])  # ZeRO §5 in float32, then mixed
    strategies = next(d.value for d in page3.dataframe if "hlo" in d.value)
    assert list(strategies["strategy"]) == ["dp", "zero1", "zero2", "zero3"]
    # 2Ψg, Ψ(g + p), Ψ(Kg + p), KΨ(g + 2p), each × (D−1)/D
    by_hand = [2 * PSI * 4, PSI * 8, PSI * (2 * 4 + 4), 2 * PSI * 12]
    assert list(strategies["model_sent"]) == pytest.approx([b * 2 / 3 for b in by_hand])


def test_the_hsdp_section_gives_each_split_of_d_what_a_device_holds_and_sends():
    """D = 3 (odd: one group of 3, or 3 replicas of one device) in Chinese, float32 Adam, zero3: per parameter a
    device holds 16/X bytes and sends 12(X−1)/X within its group and 2(R−1)/R·4/X over the replicas."""
    at = open_lab("sharded_dp", lang="zh", devices=3, batch=12, strategy="zero3", optimizer="adam")
    assert_clean(at)
    (table,) = [d.value for d in at.dataframe if "replica_sent" in d.value.columns]
    expected = [(r, 3 // r, 16 / (3 // r), 12 * (3 // r - 1) / (3 // r), 2 * (r - 1) / r * 4 / (3 // r))
                for r in (1, 3)]
    np.testing.assert_allclose(table[["replicas", "data", "held", "data_sent", "replica_sent"]].to_numpy(),
                               expected)
    said = " ".join(m.value for m in at.markdown)
    assert PAGE_TEXTS["hsdp.heading"]["zh"] in [h.value for h in at.subheader]
    assert "8 字节" in said and "R = 3" in said
    one = open_lab("sharded_dp", devices=1, batch=16)
    assert_clean(one)
    assert PAGE_TEXTS["hsdp.one_device"]["en"] in [i.value for i in one.info]
