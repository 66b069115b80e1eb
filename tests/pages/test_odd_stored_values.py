"""One odd value in the store (tests/odd_runs.py) breaks no page: the Experiments page and the Class
page render beside real runs, and show the odd runs with their values as text."""

from __future__ import annotations

from tests.apptest_support import assert_clean, open_lab
from tests.odd_runs import CODE, odd_store


def test_the_experiments_page_shows_odd_runs_beside_real_ones(tracked_runs):
    made = odd_store(tracked_runs)
    for lang in ("en", "zh"):
        at = open_lab("experiments", lang=lang)
        assert_clean(at)
        table = at.dataframe[0].value
        assert set(made["training"]) <= set(table["run_id"])
        assert at.get("vega_lite_chart")  # the real runs are still compared


def test_the_class_page_shows_a_class_with_odd_runs(tracked_runs):
    made = odd_store(tracked_runs)
    at = open_lab("class_view")
    at.text_input(key="class_view.code").set_value(CODE).run()
    assert_clean(at)
    rows = at.dataframe[-1].value
    assert set(made["training"]) | set(made["exercise"]) <= set(rows["run_id"])
