"""A profiler trace read as the lab reads a step: per-device events and where each device's time went.

The trace is the Perfetto JSON the profiler writes beside its `.xplane.pb` (`perfetto_trace.json.gz`, Chrome's
Trace Event Format: `traceEvents`, each complete event `"ph": "X"` with `ts` and `dur` in microseconds on a
`pid`/`tid` lane, `"ph": "M"` events naming the lanes). What identifies a device is what the profiler wrote, never
a thread's name: an operation's `device_ordinal` argument (XLA:CPU, where each device runs on a worker thread),
or its lane's process name `/device:GPU:N` (accelerators). Every operation names the HLO instruction it ran
(`hlo_op`). On XLA:CPU a collective's `Rendezvous` (the wait until every device of its group has arrived, and the
reduction the last one to arrive runs for all, `InvokeRendezvous`) nests inside the collective on its thread.

Categories: `compute` (every other operation, its own time: a loop's or a conditional's operations counted
once, in themselves), one per collective kind (`hlo.COLLECTIVE_KINDS`: the collective's time less its waiting),
`waiting` (the rendezvous less the device's own share of the work in it), `host` (the host's dispatch on lanes
with no device). A step is the span of one `StepTraceAnnotation` the capture wrote around each step
(`capture.STEP_NAME`); a trace without them is one step. A device's idle time in a step is the step less its
compute, collectives and waiting.
"""

from __future__ import annotations

import collections
import dataclasses
import gzip
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pmap_core import hlo
from pmap_core.validation import LabInputError

COMPUTE, WAITING, HOST = "compute", "waiting", "host"
CATEGORIES = (COMPUTE, *hlo.COLLECTIVE_KINDS, WAITING, HOST)
STEP_NAME = "pmap-lab step"  # the name of the annotation around each traced step
PERFETTO_FILE = "perfetto_trace.json.gz"
MAX_TRACE_BYTES = 64 << 20  # a larger trace file is not read (a shared server's memory)
RENDEZVOUS, OWN_SHARE = "Rendezvous", "InvokeRendezvous"
_DEVICE_PROCESS = re.compile(r"/device:[A-Z]+:(\d+)")
# An operation named as JAX names a collective's HLO instruction when the HLO is not at hand.
_NAMED_KIND = {"psum": "all-reduce", "pmean": "all-reduce", "all-reduce": "all-reduce", "all-gather": "all-gather",
               "reduce-scatter": "reduce-scatter", "psum_scatter": "reduce-scatter", "ppermute": "collective-permute",
               "collective-permute": "collective-permute", "all-to-all": "all-to-all", "all_to_all": "all-to-all"}


@dataclasses.dataclass(frozen=True)
class Event:
    """One span on a device's lane (or the host's), in microseconds from the first step's start."""

    device: int | None   # None: the host
    step: int            # which traced step (0-based)
    name: str
    category: str        # one of CATEGORIES
    start_us: float
    duration_us: float   # what counts in its category (a loop's own time, a collective less its waiting)
    hlo_op: str          # the HLO instruction it ran ("" on the host)
    span_us: float       # from its start to its end, what it contains included (what a timeline draws)


@dataclasses.dataclass(frozen=True)
class StepTotals:
    """Where one device's time went in one step, in seconds."""

    device: int
    step: int
    step_s: float
    compute_s: float
    collective_s: float                 # every collective kind together, waiting excluded
    waiting_s: float
    idle_s: float
    by_kind: Mapping[str, float]        # collective kind -> seconds
    collective_counts: Mapping[str, int]  # collective kind -> operations run

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "compute_s": self.compute_s, "collective_s": self.collective_s,
                "waiting_s": self.waiting_s, "idle_s": self.idle_s}


@dataclasses.dataclass(frozen=True)
class Trace:
    """A trace read: its events (device lanes and the host's) and each step's span."""

    events: tuple[Event, ...]
    steps: tuple[tuple[float, float], ...]  # (start, end) of each step, µs from the first step's start
    devices: tuple[int, ...]

    def device_events(self, device: int, step: int | None = None) -> list[Event]:
        return [e for e in self.events if e.device == device and (step is None or e.step == step)]

    def totals(self) -> list[StepTotals]:
        """One row per device per step."""
        rows = []
        for step, (start, end) in enumerate(self.steps):
            for device in self.devices:
                spent: dict[str, float] = collections.defaultdict(float)
                counts: dict[str, int] = collections.Counter()
                for event in self.device_events(device, step):
                    spent[event.category] += event.duration_us
                    if event.category in hlo.COLLECTIVE_KINDS:
                        counts[event.category] += 1
                by_kind = {kind: spent[kind] * 1e-6 for kind in hlo.COLLECTIVE_KINDS if kind in spent}
                busy = spent[COMPUTE] + spent[WAITING] + sum(spent[kind] for kind in hlo.COLLECTIVE_KINDS)
                rows.append(StepTotals(device, step, (end - start) * 1e-6, spent[COMPUTE] * 1e-6,
                                       sum(by_kind.values()), spent[WAITING] * 1e-6,
                                       max(0.0, end - start - busy) * 1e-6, by_kind, dict(counts)))
        return rows

    def per_device(self) -> list[dict[str, Any]]:
        """Each device's seconds per step (the mean over the traced steps), as the CLI's JSON gives them."""
        rows = self.totals()
        out = []
        for device in self.devices:
            mine = [row for row in rows if row.device == device]
            mean = {name: sum(getattr(row, name) for row in mine) / len(mine)
                    for name in ("compute_s", "collective_s", "waiting_s", "idle_s")}
            out.append({"device": device, **mean})
        return out


def trace_file(folder: str) -> str:
    """The Perfetto trace under `folder` (a log directory, a profile run's folder, or the file itself)."""
    if os.path.isfile(folder):
        return folder
    for root, _, files in sorted(os.walk(folder)):
        if PERFETTO_FILE in files:
            return os.path.join(root, PERFETTO_FILE)
    raise LabInputError("no_trace", "no {file} under {folder}", file=PERFETTO_FILE, folder=folder)


def load(path: str) -> dict[str, Any]:
    """The trace's JSON object, refused when the file is larger than MAX_TRACE_BYTES, missing or not a trace."""
    try:
        size = os.path.getsize(path)
        if size > MAX_TRACE_BYTES:
            raise LabInputError("trace_too_large", "the trace is {size:,} bytes; the lab reads at most {limit:,}",
                                size=size, limit=MAX_TRACE_BYTES)
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as file:
            return json.load(file)
    except (OSError, EOFError, ValueError) as error:  # missing, unreadable, a truncated gzip, not JSON
        raise LabInputError("trace_unreadable", "cannot read the trace {path}: {reason}", path=str(path),
                            reason=getattr(error, "strerror", None) or str(error)) from None


def collective_names(compiled_hlo: str) -> dict[str, str]:
    """Each collective instruction of compiled HLO text by name -> its kind (`hlo.collectives`)."""
    return {c.name: c.kind for c in hlo.collectives(compiled_hlo)}


def kind_of(op: str, names: Mapping[str, str]) -> str:
    """A collective kind for the HLO instruction `op`, or COMPUTE: from the program's HLO where given, else from
    the name JAX gives it (`psum.7`, `ppermute.12`, `all-gather-start.1`)."""
    if op in names:
        return names[op]
    if names:
        return COMPUTE
    stem = re.sub(r"(-start|-done)?(\.\d+)*$", "", op)
    return _NAMED_KIND.get(stem, COMPUTE)


def read(folder: str, compiled_hlo: str = "") -> Trace:
    """The trace under `folder`; `compiled_hlo` (the program's compiled HLO text) names its collectives."""
    return parse(load(trace_file(folder)), collective_names(compiled_hlo) if compiled_hlo else {})


def parse(document: Mapping[str, Any] | Sequence[Mapping[str, Any]], names: Mapping[str, str]) -> Trace:
    raw = document.get("traceEvents", []) if isinstance(document, Mapping) else document
    complete = [e for e in raw if e.get("ph") == "X" and "ts" in e]
    processes = {e["pid"]: e.get("args", {}).get("name", "") for e in raw
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    windows = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in complete
                     if e.get("name") == STEP_NAME)
    lanes: dict[tuple[Any, Any], list[Mapping[str, Any]]] = collections.defaultdict(list)
    for event in complete:
        if event.get("name") != STEP_NAME:
            lanes[event.get("pid"), event.get("tid")].append(event)
    device_lanes = {lane: _lane_device(events, processes.get(lane[0], "")) for lane, events in lanes.items()}
    if not windows:  # a trace from elsewhere: one step over everything on the device lanes
        spans = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
                 for lane, events in lanes.items() if device_lanes[lane] is not None for e in events] or [(0.0, 0.0)]
        windows = [(min(s for s, _ in spans), max(e for _, e in spans))]
    origin = windows[0][0]

    def step_of(ts: float) -> int | None:
        return next((k for k, (start, end) in enumerate(windows) if start <= ts <= end), None)

    out: list[Event] = []
    for lane, events in lanes.items():
        lane_device = device_lanes[lane]
        read_lane = _device_lane if lane_device is not None else _host_lane
        for device, name, category, ts, duration, op, span in read_lane(events, names, lane_device):
            step = step_of(ts)
            if step is not None:
                out.append(Event(device, step, name, category, ts - origin, duration, op, span))
    out.sort(key=lambda e: (e.device if e.device is not None else -1, e.start_us))
    devices = tuple(sorted({e.device for e in out if e.device is not None}))
    return Trace(tuple(out), tuple((s - origin, e - origin) for s, e in windows), devices)


def _lane_device(events: Sequence[Mapping[str, Any]], process: str) -> int | None:
    """The device of a lane that ran operations (-1: the operations name their own device), or None."""
    if not any("hlo_op" in e.get("args", {}) for e in events):
        return None
    match = _DEVICE_PROCESS.search(process)
    return int(match.group(1)) if match else -1


def _device_lane(events: Sequence[Mapping[str, Any]], names: Mapping[str, str], lane_device: int):
    """A device lane's operations, each with its own time: nested operations (a loop's body, a conditional's
    branch) are taken out of their parent's, a rendezvous out of its collective's."""
    ordered = sorted(events, key=lambda e: (float(e["ts"]), -float(e.get("dur", 0))))
    stack: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []

    def close_until(ts: float) -> None:
        while stack and stack[-1]["end"] <= ts:
            done.append(stack.pop())

    for event in ordered:
        ts, duration = float(event["ts"]), float(event.get("dur", 0))
        close_until(ts)
        args = event.get("args", {})
        parent = next((item for item in reversed(stack) if item["op"]), None)
        if "hlo_op" in args:
            device = int(args["device_ordinal"]) if "device_ordinal" in args else lane_device
            if parent is not None:
                parent["child"] += duration
            item = {"op": args["hlo_op"], "name": event.get("name", args["hlo_op"]), "device": device,
                    "ts": ts, "dur": duration, "end": ts + duration, "child": 0.0, "waiting": 0.0, "own": 0.0,
                    "wait_ts": ts}
            stack.append(item)
        elif parent is not None and event.get("name") in (RENDEZVOUS, OWN_SHARE):
            if event["name"] == RENDEZVOUS and not parent["waiting"]:
                parent["wait_ts"] = ts
            parent["waiting" if event["name"] == RENDEZVOUS else "own"] += duration
            stack.append({"op": "", "end": ts + duration})
    close_until(float("inf"))
    for item in sorted((i for i in done if i["op"]), key=lambda i: i["ts"]):
        kind = kind_of(item["op"], names)
        waiting = max(0.0, item["waiting"] - item["own"])
        device, ts, span = item["device"], item["ts"], item["dur"]
        if kind == COMPUTE:
            yield device, item["name"], COMPUTE, ts, max(0.0, span - item["child"]), item["op"], span
        else:
            yield device, item["name"], kind, ts, max(0.0, span - waiting), item["op"], span
            if waiting > 0:
                yield device, RENDEZVOUS, WAITING, item["wait_ts"], waiting, item["op"], waiting


def _host_lane(events: Sequence[Mapping[str, Any]], names: Mapping[str, str], lane_device: None):
    """A host lane's outermost spans (JAX's dispatch, the runtime's execute)."""
    end = float("-inf")
    for event in sorted(events, key=lambda e: float(e["ts"])):
        ts, duration = float(event["ts"]), float(event.get("dur", 0))
        if ts >= end and duration > 0:
            end = ts + duration
            yield None, event.get("name", ""), HOST, ts, duration, "", duration


def collective_counts(trace: Trace) -> dict[str, list[list[int]]]:
    """Each collective kind -> its operations run, per step (rows) per device (columns)."""
    rows = trace.totals()
    kinds = sorted({kind for row in rows for kind in row.collective_counts})
    table = {}
    for kind in kinds:
        table[kind] = [[next(r for r in rows if r.step == step and r.device == device).collective_counts.get(kind, 0)
                        for device in trace.devices] for step in range(len(trace.steps))]
    return table


@dataclasses.dataclass(frozen=True)
class HloMatch:
    """One collective kind: its instructions in the compiled HLO beside what each device ran per traced step."""

    kind: str
    hlo_instructions: int
    per_step: tuple[tuple[int, ...], ...]  # per step, per device

    @property
    def matches(self) -> bool:
        """Every device ran each instruction once in every step (an instruction inside a loop runs once per
        iteration, so it is counted more often)."""
        return all(count == self.hlo_instructions for step in self.per_step for count in step)


def match_hlo(trace: Trace, compiled_hlo: str) -> list[HloMatch]:
    """The collectives of the trace against those of the program's compiled HLO (`hlo.collectives`), by kind."""
    in_hlo = collections.Counter(c.kind for c in hlo.collectives(compiled_hlo))
    counts = collective_counts(trace)
    kinds = sorted(set(in_hlo) | set(counts))
    zero = tuple(tuple(0 for _ in trace.devices) for _ in trace.steps)
    return [HloMatch(kind, in_hlo.get(kind, 0), tuple(map(tuple, counts[kind])) if kind in counts else zero)
            for kind in kinds]
