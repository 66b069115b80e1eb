"""The communication benchmark: all-reduce, all-gather and reduce-scatter (and all-to-all) timed over message sizes
and D.

`plan` checks a sweep and estimates its cost before anything runs, `measure` times it (how, and
why the chained figure is a slope, is told there), `records` turns the result into JSON rows and
one MLflow run. The public names of all three are here.
"""

from pmap_core.commbench.measure import (
    SlopeTiming,
    chained_program,
    check_outputs,
    measure_collective,
    measure_copy,
    per_call_program,
    run_sweep,
    time_slope,
)
from pmap_core.commbench.plan import (
    ALL_TO_ALL,
    BENCH_OPS,
    COPY,
    FULL_SIZES,
    ITEM_BYTES,
    MAX_BYTES,
    MAX_REPEATS,
    MAX_SWEEP_MEMORY,
    MAX_SWEEP_SECONDS,
    MIN_BYTES,
    OPS,
    SweepPlan,
    busbw_factor,
    chain_lengths,
    input_elements,
    plan_sweep,
    sweep_devices,
)
from pmap_core.commbench.records import Measurement, SweepResult, log_sweep, result_rows

__all__ = [
    "ALL_TO_ALL", "BENCH_OPS", "COPY", "FULL_SIZES", "ITEM_BYTES", "MAX_BYTES", "MAX_REPEATS", "MAX_SWEEP_MEMORY",
    "MAX_SWEEP_SECONDS",
    "MIN_BYTES", "OPS", "Measurement", "SlopeTiming", "SweepPlan", "SweepResult", "busbw_factor",
    "chain_lengths", "chained_program", "check_outputs", "input_elements", "log_sweep", "measure_collective",
    "measure_copy", "per_call_program", "plan_sweep", "result_rows", "run_sweep", "sweep_devices", "time_slope",
]
