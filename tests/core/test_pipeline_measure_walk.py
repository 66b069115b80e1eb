"""The pipeline page's Measure click, walked from the source (`harness.pipeline_measure_walk`): the
schedule is counted once and passed along, so the walk comes back to a file it had left at most 6 times and
enters no file more than twice."""

from harness.pipeline_measure_walk import measure_click_walk
from harness.walks import summary


def test_the_measure_click_comes_back_to_few_files():
    calls: list[str] = []
    stops = measure_click_walk(calls=calls)
    entered, returns = summary(stops)
    assert stops[0] == "labs/pipeline.py"
    assert "pmap_core/train/pipeline.py" in entered, calls  # the walk reaches the compiled program
    assert returns <= 6, stops
    assert max(entered.values()) <= 2, entered
