"""Heavy labs answer identical requests from a cache: a second session asking what a first one asked gets
its answer without taking the heavy-job slot."""

from __future__ import annotations

import contextlib

import streamlit as st

from harness.processes import ROOT
from labs.ui import background, heavy_jobs, shared_cache
from tests.apptest_support import open_lab


def labs_with_heavy_work() -> list:
    """The labs that take the heavy-job slot in their run (`heavy_labs`) or leave heavy work to a background job."""
    from labs.registry import LABS, script_path

    return [lab for lab in LABS
            if any(call in (ROOT / script_path(lab)).read_text() for call in ("heavy_job(", "heavy_result("))]


def _visit(script: str):
    """A fresh session opens the lab from its plain link and presses its primary button, if any."""
    at = open_lab(script)
    primary = [button for button in at.button if button.proto.type == "primary" and not button.disabled]
    if primary:
        primary[0].click().run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_heavy_labs_answer_identical_requests_from_a_cache(monkeypatch):
    """Results that are the same for the same inputs come from a cache: a second session making the same
    request as a first one gets its answer without entering `heavy_jobs.heavy_job` and without starting a
    background job (`labs.ui.background`): no heavy work, no wait behind anyone's training. The labs whose
    primary button trains, recording a new tracked run on each press, and the labs whose button asks for a
    new measurement are the exceptions."""
    entered: list[str] = []
    real_heavy_job = heavy_jobs.heavy_job

    @contextlib.contextmanager
    def counted(T):
        entered.append(T.page)
        with real_heavy_job(T):
            yield

    real_start = background.Jobs.start

    def counted_start(jobs, key, work, *args):  # a job started, not one found running or done
        if jobs.get(key) is None:
            entered.append(key)
        return real_start(jobs, key, work, *args)

    shared_cache.start_warm_up().join()  # else what it keeps may land in the caches cleared below, mid-visit
    monkeypatch.setattr(heavy_jobs, "heavy_job", counted)
    monkeypatch.setattr(background.Jobs, "start", counted_start)
    st.cache_data.clear()
    background.jobs.clear()
    recomputed, checked = [], []
    for lab in labs_with_heavy_work():
        if lab.script in ("training", "sharded_dp", "multiprocess"):  # each press is a new MLflow run
            continue
        # The button measures anew; a visit shows the last measurement (the comm_benchmark page's tests).
        if lab.script in ("comm_benchmark", "manual_parallelism"):
            continue
        entered.clear()
        _visit(lab.script)
        if not entered:  # answered from what the server measured at start-up or for an earlier visitor
            continue
        checked.append(lab.script)
        entered.clear()
        _visit(lab.script)
        if entered:
            recomputed.append(lab.script)
    assert len(checked) >= 3, f"only {checked} did heavy work on a first visit: too few to check the caches"
    assert not recomputed, f"heavy labs that redo identical requests: {recomputed}"
