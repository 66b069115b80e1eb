"""One name per figure: the CLI's JSON, the page's run and README's table use the metric keys MLflow holds."""

import json
import re

import pytest
from mlflow.tracking import MlflowClient

from tests.apptest_support import open_lab
from tests.support import ROOT, new_tracking_store, run_python


def readme_metric_names():
    table = re.search(r"\| metric \| meaning \|\n\| --- \| --- \|\n((?:\|.*\|\n)+)", (ROOT / "README.md").read_text())
    return {name for row in table.group(1).splitlines() for name in re.findall(r"`(\w+)`", row.split("|")[1])}


def logged_metrics(uri, run_id):
    return MlflowClient(uri).get_run(run_id).data.metrics


def test_the_cli_json_reports_every_logged_metric_under_its_mlflow_name(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    done = run_python(["-m", "pmap_core", "train", "--json", "--tracking-uri", store,
                       "--steps", "20", "--chunk", "10", "--global-batch", "32"], cwd=tmp_path, devices=4)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    metrics = logged_metrics(store, result["run_id"])
    assert set(metrics) == readme_metric_names()
    for key, value in metrics.items():
        if key != "loss":  # the JSON gives the last loss as final_loss
            assert result[key] == pytest.approx(value), key


def test_the_page_logs_the_same_metric_names(tmp_path, monkeypatch):
    store = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    at = open_lab("training", batch=32, steps=20, devices=4)
    at.button(key="training.train").click().run()
    tracked = at.session_state["training.last_run"]
    assert set(logged_metrics(store, tracked.run_id)) == readme_metric_names()
