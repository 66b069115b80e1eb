"""Runs that hold odd values (tests/odd_runs.py) are read back, not refused: a number the lab did not
write is no number (its text stays in the `params.*` column), odd figures (NaN, infinite, not
positive) are compared or left out without a failure, and the class's tables build."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.processes import new_tracking_store
from pmap_core.tracking import classroom, experiments, stored_count
from tests.odd_runs import CODE, ODD_NUMBERS, odd_store


@pytest.fixture(scope="module")
def odd(tmp_path_factory):
    uri = new_tracking_store(tmp_path_factory.mktemp("odd") / "mlflow.db")
    return uri, odd_store(uri)


@pytest.mark.parametrize("text", ODD_NUMBERS)
def test_a_stored_count_is_a_plain_positive_whole_number_or_none(text):
    assert stored_count(text) is None


def test_stored_counts_the_lab_writes_are_read():
    assert [stored_count(t) for t in ("1", "8", " 256 ", "65536")] == [1, 8, 256, 65536]
    assert stored_count(None) is None and stored_count(8) == 8


def test_the_experiments_tables_read_odd_values_as_text(odd):
    uri, made = odd
    runs = experiments.load_runs(uri)
    assert set(runs["run_id"]) == set(made["training"])
    odd = runs[runs["run_id"].isin(made["numbers"])]
    assert odd["global_batch"].isna().all() and odd["devices"].isna().all()
    assert "²" in set(odd["params.global_batch"])  # shown as it was stored
    table = experiments.scaling_table(runs)
    assert set(table["run_id"]) == set(made["figures"][1:])  # no D, or no throughput (NaN): no point against D
    experiments.impl_comparison(table)  # MLflow keeps an infinite figure as the largest float: it compares


def test_the_class_tables_read_odd_values(odd):
    uri, made = odd
    runs = classroom.class_runs(CODE, uri)
    assert set(runs["run_id"]) == set(made["training"]) | set(made["exercise"])
    assert runs[runs["run_id"].isin(made["numbers"])]["global_batch"].isna().all()
    classroom.completion(runs)
    classroom.best_efficiency(runs)
    for group in classroom.settings_groups(runs):
        classroom.leaderboard(runs, group)
    assert isinstance(classroom.to_csv(runs), bytes)
    assert not pd.isna(runs["student"]).any()
