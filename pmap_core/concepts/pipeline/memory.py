"""Activation memory, GPipe against 1F1B: each schedule's compiled program's peak bytes per device
(`peak_memory`), which one peaks lower (`memory_verdict`, `compare_memory`) and why (`memory_reason`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pmap_core.concepts.pipeline.settings import VALUE_BYTES, Settings
from pmap_core.train.footprint import compiled_memory, peak_bytes
from pmap_core.train.pipeline import SCHEDULES


@dataclasses.dataclass(frozen=True)
class MemoryRow:
    """One schedule's compiled program: its peak bytes on one device (arguments + outputs − aliased +
    temporaries), the temporaries alone, and the most stage inputs a device keeps (`kept`)."""

    schedule: str
    peak_bytes: int | None
    temp_bytes: int
    argument_bytes: int
    kept: int                   # the most micro-batches' inputs a device keeps at once (`kept`)
    stash_model_bytes: int      # kept · the activation of a micro-batch (rows·H, or rows·seq_len·d_model) · 4


def peak_memory(settings: Settings) -> list[MemoryRow]:
    """GPipe and 1F1B at the same P, M and sizes, compiled (not run): one row per schedule."""
    rows = []
    for schedule in SCHEDULES:
        _, program = settings.compiled(schedule=schedule, steps=1)
        memory = compiled_memory(program.compiled)
        held = program.schedule.summary.kept  # the most inputs a device keeps (`schedule.kept`)
        rows.append(MemoryRow(schedule, peak_bytes(memory), memory.get("temp_size_in_bytes", 0),
                              memory.get("argument_size_in_bytes", 0), held,
                              held * settings.activation_values * VALUE_BYTES))
    return rows


@dataclasses.dataclass(frozen=True)
class MemoryComparison:
    """Both schedules' compiled peaks (`peak_memory`) and which one peaks lower (`memory_verdict`)."""

    rows: tuple[MemoryRow, ...]
    verdict: str


def compare_memory(settings: Settings) -> MemoryComparison:
    """GPipe against 1F1B at `settings`: the rows and their verdict, in one call."""
    rows = tuple(peak_memory(settings))
    return MemoryComparison(rows, memory_verdict(rows))


def memory_verdict(rows: Sequence[MemoryRow]) -> str:
    """Which schedule's compiled program peaks lower: "gpipe", "1f1b" or "same" (or "unknown" when a
    backend reports no memory)."""
    peaks = {row.schedule: row.peak_bytes for row in rows}
    if None in peaks.values():
        return "unknown"
    if peaks["gpipe"] == peaks["1f1b"]:
        return "same"
    return min(peaks, key=peaks.get)


def memory_reason(rows: Sequence[MemoryRow]) -> str:
    """`memory_verdict`, and where the peaks are the same, why: "same_none" (one stage: no device receives an
    input, device 0 recomputes from its rows of the batch), "same_kept" (both keep as many inputs: M ≤ P), or
    "same_despite" (1F1B keeps fewer, and the compiled peak does not show it)."""
    verdict = memory_verdict(rows)
    if verdict != "same":
        return verdict
    kept = {row.schedule: row.kept for row in rows}
    if kept["gpipe"] == kept["1f1b"]:
        return "same_none" if kept["gpipe"] == 0 else "same_kept"
    return "same_despite"
