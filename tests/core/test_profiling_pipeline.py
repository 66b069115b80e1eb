"""A pipeline's bubble read from a profiler trace of one step (pmap_core.profiling.experiments), at P = 2 and 4,
M = 4 and 8, GPipe and 1F1B."""

import pytest

from pmap_core.profiling import experiments


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(("stages", "micro"), [(2, 4), (2, 8), (4, 4), (4, 8)])
def test_the_bubble_read_from_the_trace_is_the_schedules(tmp_path, schedule, stages, micro):
    """Each stage's idle slots (its switch ran no operation) over its slots is (P − 1)/(M + P − 1), as a count:
    exactly, so the shares are ordered as the schedule's bubbles are."""
    read = experiments.pipeline_bubble(stages, micro, schedule, str(tmp_path))
    assert read.schedule_bubble == pytest.approx((stages - 1) / (micro + stages - 1))
    assert len(read.per_stage) == stages
    for stage in read.per_stage:
        assert stage.slots == 2 * (micro + stages - 1)
        assert stage.idle_slots == 2 * (stages - 1)
        assert stage.idle_share == pytest.approx(read.schedule_bubble)
        assert 0 <= stage.idle_time_share <= 1
