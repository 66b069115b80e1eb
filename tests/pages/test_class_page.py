"""The Class page says what it leaves out: a class with more runs than it reads is told so, with the
count, in both languages."""

from __future__ import annotations

import time

from mlflow.entities import Metric
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.tracking import EXPERIMENT, classroom
from pmap_core.tracking.mlflow_backend import experiment_id
from tests.apptest_support import assert_clean, open_lab


def class_store(uri: str, code: str, students: dict[str, int]) -> None:
    """`students[name]` finished training runs and as many worksheet runs for each student of the class."""
    client = MlflowClient(uri)
    training, sheets = experiment_id(client, EXPERIMENT), experiment_id(client, classroom.EXERCISE_EXPERIMENT)
    now = int(time.time() * 1000)
    for name, count in students.items():
        tags = classroom.class_tags(name, code)
        for i in range(count):
            run = client.create_run(training, run_name=f"{name}-{i}", tags=tags)
            client.log_batch(run.info.run_id, metrics=[Metric("steady_throughput", 100.0 + i, now, 0)])
            client.set_terminated(run.info.run_id, "FINISHED")
            run = client.create_run(sheets, run_name=f"{name}-sheet-{i}", tags={**tags, "sheet": "1_shards"})
            client.log_batch(run.info.run_id, metrics=[Metric(f"{classroom.STEP_METRIC}s{i}", 1.0, now, 0)])
            client.set_terminated(run.info.run_id, "FINISHED")


def open_class(code: str, lang: str = "en"):
    at = open_lab("class_view", lang=lang)
    at.text_input(key="class_view.code").set_value(code).run()
    assert_clean(at)
    return at


def test_a_class_past_the_limit_is_told_so_with_the_count(tmp_path, monkeypatch):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    class_store(uri, "big-class", {"Ada": 2, "Grace": 1})
    class_store(uri, "small-class", {"Alan": 2})
    monkeypatch.setattr(classroom, "MAX_RUNS", 2)

    record = classroom.read_class("big-class", uri)
    assert record.capped == ("exercise", "training") and record.limit == 2
    assert classroom.read_class("small-class", uri).capped == ()

    for lang, words in (("en", "newest 2"), ("zh", "最新的 2")):
        at = open_class("big-class", lang)
        warned = [w.value for w in at.warning if words in w.value]
        assert len(warned) == 2, [w.value for w in at.warning]  # the exercises and the trainings
        assert at.dataframe[-1].value["run_id"].nunique() == 4
        at = open_class("small-class", lang)
        assert not [w.value for w in at.warning if words in w.value]


def test_the_code_is_folded_has_a_minimum_and_is_said_to_be_the_only_key(tmp_path, monkeypatch):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    class_store(uri, "CS101", {"Ada": 1})  # recorded under the code as the lab keeps it: cs101
    for typed in ("cs101", "ＣＳ１０１"):
        at = open_class(typed)
        assert set(at.dataframe[-1].value["student"]) == {"Ada"}, typed
    for lang, key, short in (("en", "only key", "at least 3"), ("zh", "唯一的凭据", "至少要有 3")):
        at = open_class("CS", lang)
        assert any(short in i.value for i in at.info) and not at.dataframe
        assert any(key in c.value for c in at.caption)


def test_lookalike_and_blank_names_are_shown_apart(tmp_path, monkeypatch):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    class_store(uri, "names-class", {"Anna": 1, "\u0410nna": 1, "": 1, "Grace": 1})
    at = open_class("names-class")
    completion = at.dataframe[0].value.set_index("student")
    assert sorted(completion.index) == sorted(["Anna", "\u0410nna", "", "Grace"])
    notes = completion["name_note"]
    assert "U+0410 CYRILLIC CAPITAL LETTER A" in notes["\u0410nna"]
    assert notes["Anna"].startswith("looks like another name") and "U+" not in notes["Anna"]
    assert notes[""].startswith("blank") and notes["Grace"] == ""
    rows = at.dataframe[-1].value
    assert set(rows[rows["student"] == ""]["name_note"]) == {notes[""]}
