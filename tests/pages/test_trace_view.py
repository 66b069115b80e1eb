"""The profiler trace on the pages: nothing traced before the button; a trace shown as a timeline and tables, its
collectives matched to the HLO's; the pipeline's bubble read from a trace (the training and 2-D mesh pages' traces
and the straggler: tests/pages/test_trace_view_more.py)."""

import pytest

from tests.apptest_support import assert_clean, open_lab


def _page_trace(page, **settings):
    at = open_lab(page, **settings)
    assert f"{page}.trace" not in at.session_state
    at.button(key=f"{page}.trace.button").click().run()
    assert_clean(at)
    return at.session_state[f"{page}.trace"]["profile"]


def test_the_zero_page_shows_a_trace_of_its_program(store):
    """ZeRO-2 at D = 3: each step's gathers and scatters, as many per device as the compiled HLO has."""
    profile = _page_trace("sharded_dp", devices=3, steps=20)
    assert profile.trace.devices == (0, 1, 2)
    assert {m.kind for m in profile.hlo_match} >= {"all-gather", "reduce-scatter"}
    assert all(m.matches for m in profile.hlo_match)


def test_the_pipeline_page_reads_its_bubble_from_a_trace(store):
    at = open_lab("pipeline", devices=2, stages=2, layers=2, microbatches=4)
    at.button(key="pipeline.bubble.button").click().run()
    assert_clean(at)
    read = at.session_state["pipeline.bubble"]
    assert [s.idle_share for s in read.per_stage] == pytest.approx([read.schedule_bubble] * 2)
