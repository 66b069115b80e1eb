"""Links into MLflow's own UI: built from the setting PMAP_LAB_MLFLOW_UI_URL and store ids only, each
in the UI's Model-training view (MLflow 3's UI opens in its GenAI view without `workflowType`), and
none from a setting or an id that could make the link lead elsewhere."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from harness.processes import new_tracking_store
from pmap_core import tracking
from pmap_core.tracking import experiments

RUN = "52d1de4cf90b4adb974e4f6dcdf59614"
OTHER = "b4169f167f454cfd827d6d8e424f6eed"


@pytest.fixture(autouse=True)
def no_setting(monkeypatch):
    monkeypatch.delenv(tracking.MLFLOW_UI_URL_ENV, raising=False)


def test_the_default_is_a_local_mlflow_ui_and_the_setting_overrides_it(monkeypatch):
    assert tracking.mlflow_ui_url("sqlite:///mlflow.db") == "http://127.0.0.1:5000"
    monkeypatch.setenv(tracking.MLFLOW_UI_URL_ENV, " https://mlflow.example.org/lab/ ")
    assert tracking.mlflow_ui_url("sqlite:///mlflow.db") == "https://mlflow.example.org/lab"


def test_a_class_server_is_its_own_ui_without_its_credentials(monkeypatch):
    uri = "https://ada:s3cr3t@mlflow.example.org:8443/?token=t0k"
    assert tracking.mlflow_ui_url(uri) == "https://mlflow.example.org:8443"
    monkeypatch.setenv(tracking.MLFLOW_UI_URL_ENV, "http://127.0.0.1:5001")
    assert tracking.mlflow_ui_url(uri) == "http://127.0.0.1:5001"


@pytest.mark.parametrize("setting", ["javascript:alert(1)", "ftp://host", "127.0.0.1:5000", "http://", "http://a b",
                                     "http://user:pw@host", "http://host/a\nb", "data:text/html,x", "//host"])
def test_a_setting_that_is_no_plain_http_address_makes_no_link(monkeypatch, setting):
    monkeypatch.setenv(tracking.MLFLOW_UI_URL_ENV, setting)
    assert tracking.mlflow_ui_url("sqlite:///mlflow.db") is None
    assert tracking.run_link(None, "1", RUN) is None


def test_run_experiment_and_compare_links_open_the_model_training_view():
    ui = "http://127.0.0.1:5000"
    assert tracking.run_link(ui, "1", RUN) == f"{ui}/#/experiments/1/runs/{RUN}?workflowType=machine_learning"
    assert tracking.experiment_link(ui, "1") == f"{ui}/#/experiments/1/runs?workflowType=machine_learning"
    link = tracking.compare_link(ui, [("1", RUN), ("2", OTHER), ("1", OTHER)])
    path, _, query = link.partition("?")
    assert path == f"{ui}/#/compare-runs"
    fields = dict(urllib.parse.parse_qsl(query))
    assert json.loads(fields["runs"]) == [RUN, OTHER]
    assert json.loads(fields["experiments"]) == ["1", "2"]
    assert fields["workflowType"] == "machine_learning"
    assert tracking.compare_link(ui, [("1", RUN)]) is None  # nothing to compare


def test_compare_links_hold_at_most_the_first_runs():
    runs = [("1", f"{i:032x}") for i in range(tracking.MAX_COMPARED_RUNS + 5)]
    fields = dict(urllib.parse.parse_qsl(tracking.compare_link("http://h", runs).partition("?")[2]))
    assert json.loads(fields["runs"]) == [run for _, run in runs[:tracking.MAX_COMPARED_RUNS]]


@pytest.mark.parametrize("odd", ["", "../../x", "1?x=1", "1#x", "a/b", "<b>", "x" * 65, None, "1 2", "１"])
def test_an_odd_id_makes_no_link(odd):
    ui = "http://127.0.0.1:5000"
    assert tracking.run_link(ui, odd, RUN) is None
    assert tracking.run_link(ui, "1", odd) is None
    assert tracking.experiment_link(ui, odd) is None
    assert tracking.compare_link(ui, [("1", RUN), ("1", odd)]) is None


def test_the_ui_command_listens_where_the_links_point(monkeypatch):
    assert tracking.ui_command("sqlite:///x.db").endswith("--host 127.0.0.1 --port 5000")
    monkeypatch.setenv(tracking.MLFLOW_UI_URL_ENV, "http://127.0.0.1:5001")
    assert tracking.ui_command("sqlite:///x.db").endswith("--host 127.0.0.1 --port 5001")


def test_a_runs_experiment_is_read_from_the_store(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = new_tracking_store(tmp_path / "mlflow.db")
    client = MlflowClient(uri)
    experiment = client.create_experiment("x")
    run = client.create_run(experiment).info.run_id
    assert experiments.experiment_of(run, uri) == experiment
    assert experiments.experiment_of("0" * 32, uri) is None
