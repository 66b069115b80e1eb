"""Profiler traces of the lab's programs: capture K steps with JAX's own profiler (`capture`), read a trace into
per-device events and totals and match its collectives to the program's HLO (`reading`), and what the trace shows
of a pipeline's bubble and of a straggler (`experiments`)."""

from pmap_core.profiling.capture import (
    DEFAULT_PROFILE_STEPS,
    MAX_PROFILE_STEPS,
    Profile,
    check_steps,
    profile_run,
    trace_steps,
    tracing,
)
from pmap_core.profiling.reading import CATEGORIES, Event, HloMatch, StepTotals, Trace, match_hlo, read

__all__ = ["CATEGORIES", "DEFAULT_PROFILE_STEPS", "MAX_PROFILE_STEPS", "Event", "HloMatch", "Profile", "StepTotals",
           "Trace", "check_steps", "match_hlo", "profile_run", "read", "trace_steps", "tracing"]
