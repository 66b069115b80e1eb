"""The communication benchmark page: the quick sweep runs on request, draws the fit and shares it; the
sweep is logged to MLflow; a changed setting measures that sweep; bad inputs are explained; the page in
中文 with the training panel."""

import pytest

from harness.processes import new_tracking_store
from tests.apptest_support import assert_clean, open_lab


def measure(at):
    """Press the page's run button: a sweep runs on request only."""
    return at.button(key="comm_benchmark.run").click().run()


def test_page_runs_the_quick_sweep_and_draws_the_fit_then_shares_it():
    # Sizes up to 64 KiB, not the default 1 MiB: every device count of the default sweep, a sixth of its time.
    at = open_lab("comm_benchmark", max_size="64K")
    assert_clean(at)
    assert "Communication benchmark" in at.title[0].value
    measure(at)
    assert_clean(at)
    assert len(at.get("vega_lite_chart")) == 2  # latency and busbw of the default collective
    table = at.dataframe[0].value
    assert list(table.iloc[:, 1]) == ["2", "4", "8", "all"]
    assert (table["α (µs per hop)"] >= 0).all() and (table["β (GB/s)"] > 0).all()
    assert any("Measured in" in c.value for c in at.caption)
    # Another visitor of the same server sees that sweep at once, without measuring.
    other = open_lab("comm_benchmark", max_size="64K")
    assert_clean(other)
    assert any("Measured on this server" in c.value for c in other.caption)
    assert other.dataframe[0].value.equals(table)


def test_page_logs_the_sweep_to_mlflow(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    uri = new_tracking_store(tmp_path / "page.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    at = measure(open_lab("comm_benchmark", max_size="64K", max_devices=4, repeats=2))
    at.button(key="comm_benchmark.log").click().run()
    assert_clean(at)
    (run,) = MlflowClient(tracking_uri=uri).search_runs(
        [MlflowClient(tracking_uri=uri).get_experiment_by_name("pmap-lab").experiment_id])
    assert run.data.tags["kind"] == "bench" and run.data.params["ops"] == "psum"
    assert run.info.run_id in " ".join(s.value for s in at.success)
    table = at.dataframe[0].value.set_index("D")
    assert run.data.metrics["psum.D4.alpha_s"] * 1e6 == pytest.approx(table.loc["4", "α (µs per hop)"])


def test_page_changed_setting_measures_that_sweep():
    at = open_lab("comm_benchmark", op="all_gather", max_size="64K", max_devices=4, view="per_call")
    assert not at.get("vega_lite_chart") and any("press the button" in i.value for i in at.info)  # not measured yet
    measure(at)
    assert_clean(at)
    assert any("S = 1 KiB … 64 KiB" in c.value and "D = [2, 4]" in c.value for c in at.caption)
    assert list(at.dataframe[0].value.iloc[:, 1]) == ["2", "4", "all"]


def test_page_bad_inputs_are_explained():
    at = open_lab("comm_benchmark", repeats=999)  # out of the slider's range: default used, with a warning
    assert not at.exception
    assert any("999" in w.value for w in at.warning)
    at = open_lab("comm_benchmark", op="all", max_size="64M", repeats=50)  # refused before running
    assert not at.exception
    assert len(at.error) == 1 and "limit of 180 s" in at.error[0].value
    assert not at.get("vega_lite_chart")


def test_page_in_chinese_with_the_training_panel():
    at = measure(open_lab("comm_benchmark", lang="zh", max_devices=2, training="true"))
    assert_clean(at)
    assert at.title[0].value == "通信基准"
    assert any("测量用时" in c.value for c in at.caption)
    shares = at.dataframe[-1].value
    assert list(shares["D"]) == ["2"] and 0 < shares["预测占比（%）"].iloc[0] < 100
