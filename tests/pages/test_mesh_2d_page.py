"""The 2-D mesh lab in English and 中文 at the page's own D = 1, 2, 3 and 8: no exception and no error box, the
shapes that fit D, every array's type and the bytes of each mesh axis against the rules; one session trains on
a shape of D = 4 and measures every shape after a prediction, each run read back from MLflow. A runtime of
one device (and of three) in a child process of its own: tests/system/test_mesh_2d_and_pipeline_devices.py.
The page answers before it compiles: the chosen shape's program and the sharding-in-types examples compile in the
background (each section says so with a ⏳ note until it shows)."""


import numpy as np
import pytest
from conftest import SESSION_TRACKING_URI, assert_clean
from conftest import open_lab as open_page
from mlflow.tracking import MlflowClient
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from pmap_core.concepts import mesh_2d
from pmap_core.concepts import mesh_2d_view as view
from tests.apptest_support import compiles_seen, until_done


def open_lab(script: str, **query):
    """The page once what its first run compiles in the background shows."""
    return until_done(open_page(script, **query))


TINY = {"devices": 4, "hidden": 16, "features": 4, "batch": 32, "steps": 10}


def frames_of(at):
    """Every Altair chart's datasets, as pandas frames."""
    return [convert_arrow_bytes_to_pandas_df(d.data.data) for c in at.get("vega_lite_chart") for d in c.proto.datasets]


def texts_of(at) -> str:
    return " ".join(m.value for m in [*at.markdown, *at.info, *at.caption, *at.warning, *at.success])


def expected_types(features: int, hidden: int, batch: int) -> dict[str, str]:
    return {"w1": f"float32[{features},{hidden}@model]", "b1": f"float32[{hidden}@model]",
            "w2": f"float32[{hidden}@model]", "b2": "float32[]", "x": f"float32[{batch}@data,{features}]",
            "y": f"float32[{batch}@data]"}


# D: (the shapes offered, the one shown first, the default hidden width and batch: multiples of D)
SHAPES = {1: (["1x1"], "1x1", 32, 256), 2: (["2x1", "1x2"], "1x2", 32, 256), 3: (["3x1", "1x3"], "1x3", 33, 258),
          8: (["8x1", "4x2", "2x4", "1x8"], "4x2", 32, 256)}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("devices", sorted(SHAPES))
def test_the_page_renders_the_shapes_that_fit_each_d(devices, lang):
    at = open_lab("mesh_2d", lang=lang, devices=devices)
    assert_clean(at)
    options, shown, hidden, batch = SHAPES[devices]
    mesh = at.selectbox(key="mesh_2d.mesh")
    assert list(mesh.options) == options and mesh.value == shown
    data, model = (int(n) for n in shown.split("x"))
    types = at.dataframe[0].value
    assert dict(zip(types["name"], types["type"], strict=True)) == expected_types(8, hidden, batch)
    said = texts_of(at)
    if model > 1:  # the collectives by mesh axis, against the ring's 2(g−1)/g of what each axis carries
        table = at.dataframe[1].value
        by_axis = table.groupby("axis")["bytes_per_step"].sum().to_dict()
        assert by_axis.get("model", 0.0) == pytest.approx(2 * (model - 1) / model * batch / data * 4)
        local = 8 * hidden / model + 2 * hidden / model + 1
        assert by_axis.get("data", 0.0) == pytest.approx(2 * (data - 1) / data * (local + 1) * 4)
    if devices == 1:
        assert ("the only mesh is 1 × 1" if lang == "en" else "唯一的网格是 1 × 1") in said
        assert not [r for r in at.radio if r.key == "mesh_2d.guess"]  # one shape: nothing to predict
        assert at.button(key="mesh_2d.sweep").disabled
    if devices == 3:
        assert ("only the shapes 3x1, 1x3" if lang == "en" else "只有形状 3x1, 1x3") in said
    # The 6 bytes (at 4x2) the formula leaves out are the loss, and the page says so where there are any.
    loss = 2 * (data - 1) / data * 4
    assert (f"The formula is {loss:,.0f} bytes short" in said) == (lang == "en" and data > 1 and model > 1)
    # One letter, one width: I the inputs, H the hidden width; F only in the book's formulas.
    assert "F inputs" not in said and ("I inputs" in said if lang == "en" else "I 为输入数" in said)
    # Sharding in types: JAX's own message, verbatim, in a code block (never translated).
    assert any("Contracting dimensions are sharded" in t.value for t in at.text)
    # The reduce-scatter written as all-reduce + slice is the partitioner's choice for this dot, said only where it
    # happened; reading the unreduced result is this JAX's refusal, its message verbatim (none at D = 1).
    assert "compiles a reduce-scatter as an all-reduce" not in said
    sliced = "not a limit of XLA:CPU" in said if lang == "en" else "不是 XLA:CPU 的限制" in said
    assert sliced == (devices > 1)
    refused = any("Unreduced sharding does not support" in t.value for t in at.text)
    assert refused == (devices > 1)
    assert ("already holds the whole sum" in said) == (devices == 1 and lang == "en")
    # The hardware note: these devices are simulated.
    assert ("simulated" if lang == "en" else "模拟") in said


@pytest.fixture(scope="module")
def page():
    at = open_lab("mesh_2d", **TINY)
    assert_clean(at)
    assert at.selectbox(key="mesh_2d.mesh").value == "2x2"
    at.button(key="mesh_2d.train").click().run()
    assert_clean(at)
    at.radio(key="mesh_2d.guess").set_value("1x4").run()
    assert not at.button(key="mesh_2d.sweep").disabled  # a prediction first, then the measurement
    at.button(key="mesh_2d.sweep").click().run()
    assert_clean(at)
    return at


def test_train_runs_on_the_chosen_shape_and_is_tracked(page):
    tracked = page.session_state["mesh_2d.last_run"]
    cfg = tracked.result.config
    assert (cfg.impl, cfg.devices, cfg.mesh_data, cfg.mesh_model, cfg.steps) == ("tensor", 4, 2, 2, 10)
    assert tracked.result.replicas_identical
    assert any(tracked.run_id in c.value for c in page.code)  # plain text, never markdown
    run = MlflowClient(SESSION_TRACKING_URI).get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    params = run.data.params
    assert (params["mesh_data"], params["mesh_model"], params["impl"]) == ("2", "2", "tensor")
    assert run.data.metrics["comm_bytes_per_step"] == pytest.approx(tracked.result.footprint.comm_bytes_per_step)


def test_every_shape_is_measured_tracked_charted_and_judged(page):
    shown = page.session_state["mesh_2d.last_sweep"]
    sweep = shown.sweep
    assert [(r.data, r.model) for r in sweep.runs] == [(4, 1), (2, 2), (1, 4)]
    client = MlflowClient(SESSION_TRACKING_URI)
    parent = client.get_run(shown.tracked.run_id)
    assert parent.info.status == "FINISHED"
    children = [client.get_run(run_id) for run_id in shown.tracked.child_run_ids]
    assert sorted((c.data.params["mesh_data"], c.data.params["mesh_model"]) for c in children) == [
        ("1", "4"), ("2", "2"), ("4", "1")]
    assert all(c.data.tags["mlflow.parentRunId"] == parent.info.run_id for c in children)
    # The charts hold what ran: throughput per shape, and bytes per shape and mesh axis.
    frames = frames_of(page)
    throughput = next(f for f in frames if "steady_throughput" in f and "shape" in f)
    by_shape = {f"{r.data}x{r.model}": r.result.steady_throughput for r in sweep.runs}
    for _, row in throughput.iterrows():
        assert row["steady_throughput"] == pytest.approx(by_shape[row["shape"]])
    sent = next(f for f in frames if "axis" in f and "bytes" in f)
    for r in sweep.runs:
        mine = sent[sent["shape"] == f"{r.data}x{r.model}"]
        assert mine["bytes"].sum() == pytest.approx(r.result.footprint.comm_bytes_per_step)
        # Each device sends nothing over an axis of one device.
        assert mine[mine["axis"] == "model"]["bytes"].sum() == (0 if r.model == 1 else pytest.approx(
            2 * (r.model - 1) / r.model * 32 / r.data * 4))
    winner = max(by_shape, key=by_shape.get)
    said = texts_of(page)
    assert f"On this machine {winner} won" in said
    assert "You predicted 1x4;" in said and f"on this machine {winner} was fastest" in said
    assert ("Your prediction was right." in said) == (winner == "1x4")
    # The verdict counts what the table has, winner against slowest, and names only the counts that differ.
    rows = {r["shape"]: r for r in view.sweep_rows(sweep)}
    slowest = min(by_shape, key=by_shape.get)
    w, s = rows[winner], rows[slowest]
    assert (f"{w['comm_bytes_per_step']:,.0f} bytes sent against {s['comm_bytes_per_step']:,.0f}, "
            f"{w['collectives_per_step']:g} collective(s) against {s['collectives_per_step']:g}, "
            f"{w['rendezvous_per_step']:g} rendezvous against {s['rendezvous_per_step']:g}") in said
    assert ("fewer rendezvous" in said) == (w["rendezvous_per_step"] < s["rendezvous_per_step"])
    assert ("fewer collectives" in said) == (w["collectives_per_step"] < s["collectives_per_step"])
    verdict = view.verdict(sweep)
    assert ("measure again before reading much into it" in said) == verdict.close
    assert ("On these simulated devices XLA:CPU" in said) == bool(verdict.separates)  # simulated here
    # The roofline: this machine beside the book's three, and its own figures measured (D = 4 has collectives).
    roof = next(d.value for d in page.dataframe if "machine" in d.value)
    assert len(roof) == 4 and np.isfinite(roof["flops_per_s"]).all()
    assert shown.roofline.beta_bytes_per_s and shown.prediction is not None
    # The book's TP bound is printed as what it is, F/(2·C/W) in float32; the regime is read from the same
    # compute and communication the prediction table shows.
    book = shown.roofline
    assert f"F/(2·C/W) = {16 / book.critical_batch_per_device:.3g}" in said
    dp = next(p for p in shown.prediction.shapes if p.model == 1)
    regime = "compute-bound" if dp.compute_s > dp.comm_s else "communication-bound"
    assert (f"its communication takes {dp.comm_s * 1e6:.3g} µs — {regime}. With latency counted, "
            f"{sum(p.compute_s > p.comm_s for p in shown.prediction.shapes)} of the 3 shapes") in said
    table = next(d.value for d in page.dataframe if "send_us" in d.value)
    assert table["compute_us"][0] == pytest.approx(dp.compute_s * 1e6) and table["comm_us"][0] == pytest.approx(
        dp.comm_s * 1e6)
    own = mesh_2d.own_bounds(book, 4, 16)
    assert f"f/(8·C/W) = {own.tp_bound:.3g}" in said


def test_the_chinese_page_shows_the_same_runs(page):
    page.session_state["lang"] = "zh"
    page.run()
    assert_clean(page)
    winner = page.session_state["mesh_2d.last_sweep"].sweep.fastest
    assert f"在本机上 {winner.data}x{winner.model} 最快" in texts_of(page)


def test_the_first_answer_comes_before_any_compile():
    """Its first run, on settings no one asked for before, compiles nothing in the page's run and says what is still
    being compiled; both sections then show, compiled off the page's run."""
    with compiles_seen() as compiled:
        at = open_page("mesh_2d", devices=6, hidden=18, features=5, batch=30, accum=3)
        assert_clean(at)
        assert len([i for i in at.info if i.icon == "⏳"]) == 2
        until_done(at)
        assert_clean(at)
        types = at.dataframe[0].value
        assert dict(zip(types["name"], types["type"], strict=True))["w1"].startswith("float32[5,18")
        assert any("Contracting dimensions are sharded" in t.value for t in at.text)
        assert compiled and set(compiled) == {"pmap-lab-job"}


def test_after_the_warm_up_the_default_page_shows_its_program_and_typed_examples_in_its_first_run():
    """The server's warm-up computes the page's default program and sharding-in-types examples
    (`labs.ui.mesh_2d_work`): the first visitor's first run shows both, with no ⏳ note and no compile of its own,
    so the browser draws the page once."""
    from labs.ui import shared_cache

    shared_cache._mesh_2d_defaults()  # the warm-up's step, here in the test's thread: done when it returns
    with compiles_seen() as compiled:
        at = open_page("mesh_2d")
        assert_clean(at)
        assert not [i for i in at.info if i.icon == "⏳"]
        headings = [s.value for s in at.subheader]
        assert "Every array's type: `jax.typeof`" in headings and "An ambiguous product" in headings
        assert "pmap-lab-job" not in compiled
