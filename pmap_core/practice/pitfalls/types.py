"""What every pitfall module shares: the kinds of mistake, an entry, and a captured outcome.

Imports nothing of the lab: the entries, the snippets and the registry (the package) import it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

# What a mistake does on the installed JAX.
RAISES = "raises"  # an exception
SILENT = "silent"  # runs, returns a wrong or surprising result
WASTEFUL = "wasteful"  # runs correctly, costs time or clarity
HARMLESS = "harmless"  # what a mistake is where it cannot show (one device): runs, with the fix's result
KINDS = (RAISES, SILENT, WASTEFUL, HARMLESS)


class RaisedInChild(Exception):
    """An exception raised in a child Python process, reported back by type name and message."""

    def __init__(self, type_name: str, message: str):
        self.type_name = type_name
        super().__init__(message)


@dataclasses.dataclass(frozen=True)
class Captured:
    """The outcome of one call: its values, or the exception it raised."""

    values: dict[str, Any] | None
    error_type: str | None = None
    error_message: str | None = None

    @property
    def raised(self) -> bool:
        return self.error_type is not None

    def as_text(self) -> str:
        if self.raised:
            return f"{self.error_type}: {self.error_message}"
        return format_values(self.values or {})


def format_values(values: dict[str, Any]) -> str:
    """`name: value` lines, arrays printed the way NumPy prints them."""
    def show(value: Any) -> str:
        if isinstance(value, np.ndarray):
            return np.array2string(value, precision=4, suppress_small=True, threshold=64)
        if isinstance(value, float):
            return f"{value:.6g}"
        if isinstance(value, list):
            return "[" + ", ".join(show(v) for v in value) + "]"
        return str(value)

    return "\n".join(f"{name}: {show(value)}" for name, value in values.items())


def capture(fn: Callable[[], dict[str, Any]]) -> Captured:
    """Run `fn` and keep what it returned or the exception it raised (type and first lines)."""
    try:
        return Captured(values=fn())
    except RaisedInChild as error:
        return Captured(None, error.type_name, _short(str(error)))
    except Exception as error:  # noqa: BLE001 - capturing JAX's own errors is the point
        return Captured(None, type(error).__name__, _short(str(error)))


def _short(message: str, max_lines: int = 6) -> str:
    # JAX appends a long "For simplicity, JAX has removed its internal frames…" footer.
    lines = message.split("\n--------------------")[0].strip().splitlines()
    return "\n".join(lines[:max_lines])


@dataclasses.dataclass(frozen=True)
class Pitfall:
    id: str
    kind: str  # RAISES, SILENT or WASTEFUL
    mistake: Callable[[], dict[str, Any]]
    fix: Callable[[], dict[str, Any]]
    # What the lab says about the mistake, as a test on what was captured.
    claim: Callable[[Captured, Captured], bool]
    helpers: tuple[Callable[..., Any], ...] = ()  # functions the two call, shown with them
    # Where the mistake can fail to show (one device): whether this run of it ran and gave what the fix gives.
    harmless: Callable[[Captured, Captured], bool] | None = None

    def kind_shown(self, mistake: Captured, fix: Captured) -> str:
        """The kind of mistake a run shows, read from what it captured: RAISES when it raised, HARMLESS
        when it ran and gave the fix's result, SILENT when it ran where it should raise, else its kind."""
        if mistake.raised:
            return RAISES
        if self.harmless is not None and self.harmless(mistake, fix):
            return HARMLESS
        return SILENT if self.kind == RAISES else self.kind


@dataclasses.dataclass(frozen=True)
class PitfallRun:
    id: str
    kind: str
    mistake: Captured
    fix: Captured
    claim_holds: bool  # the entry's claim, and the kind shown here is the one the page states
    kind_shown: str  # what this run's mistake did (Pitfall.kind_shown)
