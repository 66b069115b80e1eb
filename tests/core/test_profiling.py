"""Profiler traces of the lab's programs, captured with JAX's own profiler and read back (pmap_core.profiling)."""

from __future__ import annotations

import gzip
import json
import os

import jax
import pytest

from pmap_core import hlo
from pmap_core.profiling import capture, experiments, reading
from pmap_core.train import plan
from pmap_core.train.config import HEADLESS_MAX_WORK, TrainConfig
from pmap_core.validation import LabInputError


def _linear(devices: int) -> TrainConfig:
    return plan.validate(TrainConfig(devices=devices, steps=2, global_batch=8 * devices), HEADLESS_MAX_WORK)


@pytest.mark.parametrize("devices", [1, 3, 8])
def test_each_device_runs_the_hlo_all_reduces_once_per_step(tmp_path, devices):
    profile = capture.profile_run(_linear(devices), 2, str(tmp_path))
    assert profile.trace.devices == tuple(range(devices))
    assert len(profile.trace.steps) == 2
    (match,) = [m for m in profile.hlo_match if m.kind == "all-reduce"]
    assert match.hlo_instructions == 1 and match.matches, match
    assert match.per_step == ((1,) * devices,) * 2
    per_device = profile.trace.per_device()
    assert [row["device"] for row in per_device] == list(range(devices))
    for row in profile.trace.totals():  # the four parts fill the step, none is negative
        parts = (row.compute_s, row.collective_s, row.waiting_s, row.idle_s)
        assert min(parts) >= 0 and row.compute_s > 0 and row.collective_s > 0
        assert sum(parts) == pytest.approx(row.step_s, rel=1e-6) or sum(parts) > row.step_s  # idle clamped at 0
    summary = profile.summary()
    assert summary["trace"].endswith(reading.PERFETTO_FILE) and len(summary["per_device"]) == devices


def test_the_trace_is_the_profilers_own_files_in_perfettos_documented_format(tmp_path):
    """The Perfetto JSON is checked against the Trace Event Format it follows, and each device's collectives are
    found in it; the .xplane.pb, the XSpace XProf reads, is opened with JAX's own reader of it
    (`jax.profiler.ProfileData`), and holds one lane per device, each running the HLO's all-reduce once a step."""
    profile = capture.profile_run(_linear(3), 2, str(tmp_path))
    files = os.listdir(profile.folder)
    assert reading.PERFETTO_FILE in files and any(name.endswith(".xplane.pb") for name in files)
    with gzip.open(os.path.join(profile.folder, reading.PERFETTO_FILE), "rt") as file:
        document = json.load(file)
    events = document["traceEvents"]
    complete = [e for e in events if e.get("ph") == "X"]
    assert complete and all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and "pid" in e and "tid" in e
                            for e in complete)
    assert all(e["name"] in ("process_name", "process_sort_index", "thread_name", "thread_sort_index")
               for e in events if e.get("ph") == "M")
    named = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"}
    ran = [e for e in complete if "hlo_op" in e.get("args", {})]
    assert {(e["pid"], e["tid"]) for e in ran} <= named  # every lane that ran an operation is named
    all_reduce = next(c.name for c in hlo.collectives(profile.compiled_hlo) if c.kind == "all-reduce")
    devices = {int(e["args"]["device_ordinal"]) for e in ran if e["args"]["hlo_op"] == all_reduce}
    assert devices == {0, 1, 2}
    (xplane,) = [name for name in files if name.endswith(".xplane.pb")]
    runs: dict[int, int] = {}
    for plane in jax.profiler.ProfileData.from_file(os.path.join(profile.folder, xplane)).planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if event.name == all_reduce and "device_ordinal" in stats:
                    runs[int(stats["device_ordinal"])] = runs.get(int(stats["device_ordinal"]), 0) + 1
    assert runs == {0: 2, 1: 2, 2: 2}  # 3 device lanes, 2 traced steps


def test_a_second_trace_is_refused_while_one_runs(tmp_path):
    with capture.tracing(str(tmp_path / "first")), pytest.raises(LabInputError) as refused, \
            capture.tracing(str(tmp_path / "second")):
        pass
    assert refused.value.code == "trace_running"
    with capture.tracing(str(tmp_path / "third")):  # free again once the first has ended
        jax.block_until_ready(jax.numpy.ones(2) + 1)


@pytest.mark.parametrize("steps", [0, capture.MAX_PROFILE_STEPS + 1, "2"])
def test_profile_steps_out_of_range_are_refused(steps):
    with pytest.raises(LabInputError):
        capture.check_steps(steps)


def test_device_lanes_come_from_the_trace_not_thread_names():
    """An accelerator's trace names its device lanes `/device:GPU:N` and its operations carry no device argument;
    a collective's time is its own (no rendezvous), and a step without annotations spans the device lanes."""
    document = {"traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:GPU:1"}},
        {"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/host:CPU"}},
        *({"ph": "X", "pid": pid, "tid": 7, "ts": 10.0, "dur": 5.0, "name": "fusion", "args": {"hlo_op": "fusion.2"}}
          for pid in (1, 2)),
        *({"ph": "X", "pid": pid, "tid": 7, "ts": 16.0, "dur": 4.0, "name": "ncclAllReduce",
           "args": {"hlo_op": "all-reduce-start.1"}} for pid in (1, 2)),
        {"ph": "X", "pid": 3, "tid": 9, "ts": 0.0, "dur": 8.0, "name": "PjitFunction(step)"},
    ]}
    trace = reading.parse(document, {})
    assert trace.devices == (0, 1)
    (row,) = [r for r in trace.totals() if r.device == 1]
    assert (row.compute_s, row.collective_s, row.waiting_s) == pytest.approx((5e-6, 4e-6, 0.0))
    assert row.collective_counts == {"all-reduce": 1}
    assert [e.category for e in trace.events if e.device is None] == []  # the host's span is outside the step


def test_the_others_wait_longer_at_the_all_reduce_the_more_work_a_straggler_gets(tmp_path):
    points = experiments.straggler(3, (0, 300, 1500), str(tmp_path), steps=3)
    compute = [p.straggler_compute_s for p in points]
    waiting = [p.others_waiting_s for p in points]
    assert compute == sorted(compute), compute
    # The most work makes the others wait longest. Between 0 and 300 the order is noise while 3 devices share 2
    # cores: seen 35 µs then 32 µs (the others caught up within the straggler's 1.4 ms), and 77 µs then 1.4 ms.
    assert waiting[-1] > max(waiting[:-1]), (compute, waiting)


def test_a_trace_that_cannot_be_taken_or_read_fails_nothing_and_says_why_in_one_line(tmp_path, monkeypatch):
    from pmap_core.profiling import record

    with capture.tracing(str(tmp_path / "another")):  # another session's trace holds the profiler
        busy = record.profile_and_log(_linear(2), 2, str(tmp_path / "busy"), None, None)
    assert set(busy) == {"error"} and "\n" not in busy["error"] and "trace" in busy["error"]
    monkeypatch.setattr(reading, "MAX_TRACE_BYTES", 1024)  # a server's limit below any real trace
    large = record.profile_and_log(_linear(2), 2, str(tmp_path / "large"), None, None)
    assert set(large) == {"error"} and "\n" not in large["error"] and "1,024" in large["error"]
    monkeypatch.undo()
    assert record.profile_and_log(_linear(2), 2, str(tmp_path / "free"), None, None).keys() >= {"trace", "per_device"}
