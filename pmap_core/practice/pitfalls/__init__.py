"""Common pmap mistakes, each reproduced on the installed JAX.

An entry pairs what people write (`mistake`) with the correction (`fix`).
Both are plain functions whose source the lab shows; running an entry captures
what really happens — the exception JAX raises, or the values it returns — so
no error text or result on the page is ever typed in by hand.

The package is the registry (`pitfall_ids`, `get_pitfall`, `run_pitfall`); the shared types live in
`types`, the entries in `entries` (loaded on first use: they import JAX's heavier corners).
"""

from __future__ import annotations

from pmap_core.practice.pitfalls.types import (
    HARMLESS,
    KINDS,
    RAISES,
    SILENT,
    WASTEFUL,
    Captured,
    Pitfall,
    PitfallRun,
    RaisedInChild,
    capture,
    format_values,
)
from pmap_core.validation import LabInputError

__all__ = ["HARMLESS", "KINDS", "RAISES", "SILENT", "WASTEFUL", "Captured", "Pitfall", "PitfallRun", "RaisedInChild",
           "capture", "format_values", "get_pitfall", "pitfall_ids", "run_pitfall"]


def pitfall_ids() -> list[str]:
    return [entry.id for entry in _entries()]


def get_pitfall(pitfall_id: str) -> Pitfall:
    for entry in _entries():
        if entry.id == pitfall_id:
            return entry
    raise LabInputError("unknown_pitfall", "no mistake called {name!r}", name=pitfall_id)


def run_pitfall(pitfall_id: str) -> PitfallRun:
    """Run one entry's mistake and fix on this JAX and check the lab's claim against them: the entry's
    claim, and that the kind of mistake it showed is the one the lab states for this runtime."""
    from pmap_core.practice.pitfalls.entries import kind_here

    entry = get_pitfall(pitfall_id)
    mistake, fix = capture(entry.mistake), capture(entry.fix)
    shown = entry.kind_shown(mistake, fix)
    return PitfallRun(entry.id, entry.kind, mistake, fix,
                      bool(entry.claim(mistake, fix)) and shown == kind_here(pitfall_id), shown)


def _entries() -> tuple[Pitfall, ...]:
    from pmap_core.practice.pitfalls.entries import PITFALLS

    return PITFALLS
