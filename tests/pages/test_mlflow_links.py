"""Every run a page shows links to its page in MLflow's UI, in the Model-training view: the training
page's run and sweep, each row of the Experiments and Class pages, and the Experiments page's whole
experiment and the runs it shows compared. The links come from PMAP_LAB_MLFLOW_UI_URL and store ids."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from pmap_core import tracking
from pmap_core.tracking import classroom, experiments
from tests.apptest_support import assert_clean, open_lab
from tests.pages.test_class_page import class_store

UI = "http://127.0.0.1:5123/mlflow"


def link_buttons(at) -> dict[str, str]:
    return {button.proto.label: button.proto.url for button in at.get("link_button")}


def compared(link: str) -> list[str]:
    return json.loads(dict(urllib.parse.parse_qsl(link.partition("?")[2]))["runs"])


@pytest.fixture
def ui(monkeypatch):
    monkeypatch.setenv(tracking.MLFLOW_UI_URL_ENV, UI)
    return UI


def test_the_training_pages_run_and_sweep_open_in_mlflow(tmp_path, monkeypatch, ui):
    from harness.processes import new_tracking_store

    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    at = open_lab("training", devices=2, steps=20, batch=32)
    at.button(key="training.train").click().run()
    assert_clean(at)
    tracked = at.session_state["training.last_run"]
    experiment = experiments.experiment_of(tracked.run_id, uri)
    assert link_buttons(at)["Open in MLflow"] == (
        f"{UI}/#/experiments/{experiment}/runs/{tracked.run_id}?workflowType=machine_learning")

    at.button(key="training.sweep").click().run()
    assert_clean(at)
    sweep = at.session_state["training.last_sweep"]
    buttons = link_buttons(at)
    label = next(label for label in buttons if label.startswith("Compare its"))
    assert compared(buttons[label]) == list(sweep.child_run_ids)
    assert f"{len(sweep.child_run_ids)} runs" in label


def test_the_experiments_page_links_each_run_the_experiment_and_a_comparison(tracked_runs, ui):
    runs = experiments.load_runs(tracked_runs)
    at = open_lab("experiments")
    assert_clean(at)
    table = at.dataframe[0].value
    experiment = runs["experiment_id"].iloc[0]
    for run_id, link in zip(table["run_id"], table["mlflow"], strict=True):
        assert link == f"{UI}/#/experiments/{experiment}/runs/{run_id}?workflowType=machine_learning"
    buttons = link_buttons(at)
    assert buttons["All runs in MLflow"] == f"{UI}/#/experiments/{experiment}/runs?workflowType=machine_learning"
    parents = set(runs.loc[runs["is_sweep"], "run_id"])
    assert len(parents) == 1 and parents <= set(table["run_id"])  # listed, never compared: it sums up its runs
    trainings = [run_id for run_id in table["run_id"] if run_id not in parents]
    label = f"Compare the {len(trainings)} runs shown in MLflow"
    assert compared(buttons[label]) == trainings

    at = open_lab("experiments", model="linear")  # a filter narrows the comparison to the runs shown
    shown = [run_id for run_id in at.dataframe[0].value["run_id"] if run_id not in parents]
    assert 1 < len(shown) < len(runs) - 1
    assert compared(link_buttons(at)[f"Compare the {len(shown)} runs shown in MLflow"]) == shown


def test_the_class_page_links_each_row(tmp_path, monkeypatch, ui):
    from harness.processes import new_tracking_store

    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    class_store(uri, "links-class", {"Ada": 1})
    runs = classroom.class_runs("links-class", uri)
    at = open_lab("class_view")
    at.text_input(key="class_view.code").set_value("links-class").run()
    assert_clean(at)
    table = at.dataframe[-1].value
    expected = {tracking.run_link(UI, e, r) for e, r in zip(runs["experiment_id"], runs["run_id"], strict=True)}
    assert set(table["mlflow"]) == expected and len(expected) == 2  # a training run and a worksheet run


@pytest.mark.parametrize("setting", ["javascript:alert(1)", "http://user:pw@host:5000"])
def test_a_bad_setting_makes_no_link_and_says_so(tracked_runs, monkeypatch, setting):
    monkeypatch.setenv(tracking.MLFLOW_UI_URL_ENV, setting)
    for lang in ("en", "zh"):
        at = open_lab("experiments", lang=lang)
        assert_clean(at)
        assert at.dataframe[0].value["mlflow"].isna().all()
        assert not link_buttons(at)
        assert any(tracking.MLFLOW_UI_URL_ENV in c.value for c in at.caption)
