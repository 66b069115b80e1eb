"""The sharded data parallel lab (ZeRO / FSDP) in English and 中文, the applications calculator's ZeRO stages,
and the ZeRO interview questions against independent references.

One AppTest session trains (zero3, D = 2, K = 2, float32 beside bfloat16) and measures every strategy at
D = 1, 2 with a tiny MLP; the other tests read what it left.
"""

import json

import jax
import numpy as np
import pytest
from conftest import APP, SESSION_TRACKING_URI, assert_clean, open_lab
from mlflow.tracking import MlflowClient
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from labs.texts.interview_zero import TEXTS as QUIZ_TEXTS
from pmap_core.concepts import sharded_dp as zero_compare
from pmap_core.costs import analytic
from pmap_core.practice.quiz import registry as quiz
from pmap_core.practice.quiz import zero as quiz_zero

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
    assert sorted((f.strategy, f.devices) for f in footprints) == sorted(
        (s, d) for s in ("dp", "zero1", "zero2", "zero3") for d in (1, 2))
    frames = frames_of(page)
    memory = next(frame for frame in frames if "kind" in frame)
    expected = zero_compare.memory_rows(footprints)
    assert memory[["strategy", "D", "kind", "measured", "model"]].to_dict("records") == expected
    comm = next(frame for frame in frames if "source" in frame)
    for row in zero_compare.comm_rows(footprints):
        for source in ("measured", "model"):
            hit = comm[(comm["strategy"] == row["strategy"]) & (comm["D"] == row["D"]) & (comm["source"] == source)]
            assert hit["bytes"].tolist() == [pytest.approx(row[source])]
    # A different run of the same settings: the trained zero3 run at D = 2 held and sent what the short one did.
    trained = page.session_state["sharded_dp.last_run"][0].result.footprint
    short = next(f for f in footprints if (f.strategy, f.devices) == ("zero3", 2))
    assert zero_compare.held(short) == zero_compare.held(trained)
    assert short.comm_bytes_per_step == pytest.approx(trained.comm_bytes_per_step)
    # D = 1: sharding changes nothing, and the page says so.
    ones = {zero_compare.total_bytes(f) for f in footprints if f.devices == 1}
    assert len(ones) == 1 and any("every strategy held the same" in c.value for c in page.caption)


def test_largest_model_table_is_the_budget_over_measured_bytes(page):
    footprints = page.session_state["sharded_dp.footprints"]
    table = page.dataframe[-1].value
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

REFERENCES = {  # by hand, for N devices: float32 Adam, 16 bytes per parameter of which the stage shards a part
    "zero1_memory_gb": 4 + 4 + 8 / N,
    "zero2_memory_gb": 4 + 12 / N,
    "zero3_memory_gb": 16 / N,
    "scatter_gather_vs_all_reduce": quiz_zero.SAME_BOTH,  # ring: (D−1)/D·S twice = 2(D−1)/D·S
    # ZeRO §7.2.2: each layer gathered for the forward and again for the backward, then reduce-scattered: 3Ψ to 2Ψ.
    "fsdp_vs_dp_bytes": quiz_zero.MORE if N > 1 else quiz_zero.NOTHING,
    "accumulation_collectives": quiz_zero.ONCE_PER_STEP,
    "padded_mean": quiz_zero.PSUM_SUMS if N > 1 else quiz_zero.BOTH,
}


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
    """The quiz's bytes per parameter (costmodel) against the lab's measured runs at D = 2 (biases of width 1
    stay whole, so measurement sits a few per cent above)."""
    for f in page.session_state["sharded_dp.footprints"]:
        model = analytic.zero_memory_per_device(1.0, f.devices, f.strategy, 4.0, 4.0, 8.0).total
        assert zero_compare.total_bytes(f) / f.param_count == pytest.approx(model, rel=0.1)


def test_padded_mean_against_numpy():
    batch, per = 4 * N + 1, -(-(4 * N + 1) // N)
    padded = np.zeros(N * per)
    padded[:batch] = np.arange(1, batch + 1)
    mean_of_means = padded.reshape(N, per).mean(axis=1).mean()
    assert (mean_of_means == (batch + 1) / 2) == (quiz_zero.padded_mean() == quiz_zero.BOTH)
