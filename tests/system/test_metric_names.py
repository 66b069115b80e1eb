"""One name per figure: the CLI's JSON (a child process) reports every metric its run logged, under the
key MLflow holds and README's table lists."""

import json

import pytest

from harness.processes import new_tracking_store, run_python
from tests.pages.test_metric_names_page import logged_metrics, readme_metric_names


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
