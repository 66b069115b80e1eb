"""A class on a real `mlflow server`: three students (AppTest sessions) answer an exercise and train,
tagged with their names and the class code; the Class page shows each one's runs and results, the
CSV holds the same rows, and names and codes full of markdown, HTML, very long or empty stay plain text."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from harness.processes import MlflowServer
from pmap_core.tracking import EXPERIMENT, classroom, predictions
from tests.apptest_support import assert_clean, open_lab
from tests.core.test_classroom_names import CODE, NAMES

ANSWERS = [3.0, 2.0, 3.0]  # the first step of sheet 1: b = 3 is right
DEVICES = [2, 4, 2]


@pytest.fixture(scope="module", autouse=True)
def server(tmp_path_factory):
    """The class's `mlflow server`, started with the module."""
    started = MlflowServer(tmp_path_factory.mktemp("class-server"))
    yield started
    started.stop()


def student_session(name: str, answer: float, devices: int):
    """One student: name and class code on the Worksheet page, one step answered, one small training run."""
    at = open_lab("worksheet", sheet="1_shards", step="pad_per_device")
    at.text_input(key="worksheet.student").set_value(name)
    at.text_input(key="worksheet.class_code").set_value(CODE)
    at.number_input(key="worksheet.1_shards.pad_per_device.guess").set_value(answer)
    at.button(key="worksheet.check").click().run()
    assert_clean(at)
    assert any("Recorded for your class" in c.value for c in at.caption)
    at.switch_page("labs/training.py").run()
    at.slider(key="training.devices").set_value(devices)
    at.number_input(key="training.batch").set_value(32)
    at.number_input(key="training.steps").set_value(20)
    at.button(key="training.train").click().run()
    assert_clean(at)
    return at.session_state["training.last_run"]


def test_the_class_page_shows_every_students_runs_and_results(server, monkeypatch):
    server.wait_until_healthy()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
    # A loaded 2-core machine can keep the MLflow server busy past the lab's 5 s request timeout,
    # and a run that falls back to the local store is not the class's.
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "60")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    tracked = [student_session(name, answer, d) for name, answer, d in zip(NAMES, ANSWERS, DEVICES, strict=True)]
    shown_names = [classroom.sanitize_name(name) for name in NAMES]
    code = classroom.sanitize_code(CODE)

    # Stored as they were typed (cleaned), as tags on the training runs.
    client = MlflowClient(server.uri)
    for run, name in zip(tracked, shown_names, strict=True):
        tags = client.get_run(run.run_id).data.tags
        assert (tags["student"], tags["class_code"]) == (name, code)

    at = open_lab("class_view")
    at.text_input(key="class_view.code").set_value(CODE).run()
    assert_clean(at)
    completion, efficiency, leaderboard, first, runs, predicted = (frame.value for frame in at.dataframe)

    assert sorted(runs["student"]) == sorted(shown_names * 2)  # one exercise row and one training run each
    for run, name, answer in zip(tracked, shown_names, ANSWERS, strict=True):
        mine = runs[runs["student"] == name]
        assert list(mine[mine["kind"] == "training"]["run_id"]) == [run.run_id]
        assert list(mine[mine["kind"] == "exercise"]["result"]) == [1.0 if answer == 3.0 else 0.0]
        done = completion.set_index("student").loc[name, "1_shards/pad_per_device"]
        assert done == (1.0 if answer == 3.0 else 0.0)
        d = run.result.config.devices
        assert efficiency.set_index("student").loc[name, f"D={d}"] == pytest.approx(run.scaling.efficiency)
        board = leaderboard[(leaderboard["student"] == name) & (leaderboard["devices"] == d)]
        assert board["steady_throughput"].tolist() == pytest.approx([run.result.steady_throughput])
    assert leaderboard["steady_throughput"].is_monotonic_decreasing
    # Each student's check is their first prediction at the step, against the answer the server computed.
    assert first[["first_predictions", "answer"]].values.tolist() == [[3, "3"]]
    assert first["step"].str.startswith("1. A batch of B = 10 samples").tolist() == [True]  # its number and question
    assert sorted(zip(predicted["student"], predicted["prediction"], predicted["first"], strict=True)) == sorted(
        zip(shown_names, ["3", "2", "3"], [True] * 3, strict=True))

    # The CSV holds the rows the page shows, the predictions after the runs.
    record = classroom.read_class(CODE, server.uri)
    every = predictions.with_predictions(record.runs, record.predictions)
    csv = pd.read_csv(io.BytesIO(classroom.to_csv(every)), keep_default_na=False)
    assert list(csv["run_id"]) == list(runs["run_id"]) + list(predicted["run_id"])
    assert list(csv["student"]) == list(runs["student"].fillna("")) + list(predicted["student"])
    assert list(csv["prediction"])[len(runs):] == list(predicted["prediction"])

    # Names and codes never reach markdown: only the tables (plain text) and the code box hold them.
    texts = [e.value for kind in ("markdown", "caption", "info", "success", "warning", "error", "subheader", "title")
             for e in getattr(at, kind)]
    for value in (shown_names[0], shown_names[1], code):
        assert not [text for text in texts if value in text], value

    # Every run the class made has ended: exercise runs are closed as soon as they are created.
    for name in (classroom.EXERCISE_EXPERIMENT, EXPERIMENT):
        found = client.search_runs([client.get_experiment_by_name(name).experiment_id])
        assert found and all(run.info.status == "FINISHED" for run in found)


def test_without_a_code_the_page_asks_for_one_and_without_runs_says_so(server, monkeypatch):
    server.wait_until_healthy()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
    at = open_lab("class_view", lang="zh")
    assert_clean(at)
    assert at.info and not at.dataframe
    at.text_input(key="class_view.code").set_value("nobody-uses-this").run()
    assert_clean(at)
    assert at.info and not at.dataframe


def test_every_prediction_reaches_the_server_once_with_the_first_marked(server, monkeypatch):
    """Three students check one step twice each (a wrong guess, then the answer) over a real
    `mlflow server`: six attempts read back, each once, the first of each student marked."""
    server.wait_until_healthy()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "60")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    code = "predict-server"
    for name, guess in (("Ada", 2.0), ("Grace", 4.0), ("Alan", 2.0)):
        at = open_lab("worksheet", sheet="1_shards", step="pad_per_device")
        at.text_input(key="worksheet.student").set_value(name)
        at.text_input(key="worksheet.class_code").set_value(code)
        for value in (guess, 3.0):
            at.number_input(key="worksheet.1_shards.pad_per_device.guess").set_value(value)
            at.button(key="worksheet.check").click().run()
            assert_clean(at)
            assert any("Recorded for your class" in c.value for c in at.caption)
    recorded = classroom.read_class(code, server.uri).predictions
    rows = sorted(map(tuple, recorded[["student", "attempt", "first", "prediction", "result"]].values.tolist()))
    assert rows == [("Ada", 1, True, "2", 0.0), ("Ada", 2, False, "3", 1.0), ("Alan", 1, True, "2", 0.0),
                    ("Alan", 2, False, "3", 1.0), ("Grace", 1, True, "4", 0.0), ("Grace", 2, False, "3", 1.0)]
    [step] = predictions.summaries(recorded)
    assert (step.count, step.within, step.common_wrong, step.common_wrong_count, step.answers) == (
        3, 0.0, "2", 2, ("3",))
