"""One name per figure: the training page's run holds the metric keys README's table lists."""

import re

from mlflow.tracking import MlflowClient

from harness.processes import ROOT, new_tracking_store
from tests.apptest_support import open_lab


def readme_metric_names():
    table = re.search(r"\| metric \| meaning \|\n\| --- \| --- \|\n((?:\|.*\|\n)+)", (ROOT / "README.md").read_text())
    return {name for row in table.group(1).splitlines() for name in re.findall(r"`(\w+)`", row.split("|")[1])}


def logged_metrics(uri, run_id):
    return MlflowClient(uri).get_run(run_id).data.metrics


def test_the_page_logs_the_same_metric_names(tmp_path, monkeypatch):
    store = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    at = open_lab("training", batch=32, steps=20, devices=4)
    at.button(key="training.train").click().run()
    tracked = at.session_state["training.last_run"]
    assert set(logged_metrics(store, tracked.run_id)) == readme_metric_names()
