"""Capture K steps of a program with JAX's own profiler, as XProf and Perfetto read them.

`trace_steps` runs one untimed warm-up call, then K calls inside `jax.profiler.trace`, each in a
`StepTraceAnnotation` (`reading.STEP_NAME`) and blocked on before the next: the profiler writes its `.xplane.pb`
(what XProf reads) and `perfetto_trace.json.gz` (what Perfetto's UI and `reading` read) under
`<folder>/plugins/profile/<time>/`. Per-operation tracing on XLA:CPU needs `runtime.OP_TRACING_FLAG`, which the
runtime sets before the backend starts. JAX's profiler is one per process, so one trace runs at a time: a second
one asked for meanwhile is refused at once (`trace_running`), never queued. The Python tracer is off: a trace
holds the devices' operations and the runtime's dispatch, bounded by MAX_PROFILE_STEPS steps and
`reading.MAX_TRACE_BYTES`.

`profile_run(config, steps, folder)` profiles a training run's own program (the entry its config selects, with
the run's model, data and D), one step per call, from the initial parameters: the run itself is never touched,
so its losses are the same with or without a profile.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax

from pmap_core.profiling.reading import PERFETTO_FILE, STEP_NAME, HloMatch, Trace, match_hlo, read, trace_file
from pmap_core.validation import LabInputError, check_int

MAX_PROFILE_STEPS = 10
DEFAULT_PROFILE_STEPS = 2
_one_trace = threading.Lock()


@dataclasses.dataclass(frozen=True)
class Profile:
    """A captured trace, read: where it lies, its events, its collectives against the program's HLO."""

    folder: str          # the profile run's folder: the .xplane.pb and perfetto_trace.json.gz
    trace: Trace
    hlo_match: tuple[HloMatch, ...]
    steps: int
    compiled_hlo: str    # the traced program's compiled HLO text, whose instructions the events name

    def summary(self) -> dict[str, Any]:
        """What the CLI's JSON says of it."""
        return {"trace": trace_file(self.folder), "steps": self.steps, "per_device": self.trace.per_device(),
                "collectives": [{"kind": m.kind, "hlo_instructions": m.hlo_instructions,
                                 "per_step": [list(step) for step in m.per_step]} for m in self.hlo_match]}


def check_steps(steps: Any) -> int:
    return check_int("profile steps", steps, 1, MAX_PROFILE_STEPS)


@contextlib.contextmanager
def tracing(folder: str) -> Iterator[None]:
    """JAX's profiler on, writing under `folder`; refused at once while another trace runs in this process."""
    if not _one_trace.acquire(blocking=False):
        raise LabInputError("trace_running", "a profiler trace is already running in this server; "
                                             "ask again when it has ended")
    try:
        options = jax.profiler.ProfileOptions()
        options.python_tracer_level = 0
        with jax.profiler.trace(folder, create_perfetto_trace=True, profiler_options=options):
            yield
    finally:
        _one_trace.release()


def trace_steps(step: Callable[[], Any], steps: int, folder: str) -> str:
    """One warm-up call of `step`, then `steps` calls traced; the folder the profiler wrote them to."""
    steps = check_steps(steps)
    jax.block_until_ready(step())
    started = time.time()
    with tracing(folder):
        for number in range(steps):
            with jax.profiler.StepTraceAnnotation(STEP_NAME, step_num=number):
                jax.block_until_ready(step())
    written = [run for run in _runs(folder) if os.path.getmtime(os.path.join(run, PERFETTO_FILE)) >= started - 1]
    if not written:
        raise LabInputError("trace_not_written", "the profiler wrote no trace under {folder}", folder=folder)
    return max(written, key=lambda run: os.path.getmtime(os.path.join(run, PERFETTO_FILE)))


def _runs(folder: str) -> list[str]:
    """The profile runs under a log directory that hold a Perfetto trace (the profiler names each by its time
    to the second: a second trace within the same second writes into the same folder)."""
    root = os.path.join(folder, "plugins", "profile")
    runs = [os.path.join(root, name) for name in os.listdir(root)] if os.path.isdir(root) else []
    return [run for run in runs if os.path.isfile(os.path.join(run, PERFETTO_FILE))]


def profile_run(config: Any, steps: int, folder: str) -> Profile:
    """`steps` steps of the program `config` (a validated `TrainConfig`) trains with, traced under `folder`."""
    from pmap_core.train import models, programs
    from pmap_core.train.config import plan_run

    steps = check_steps(steps)
    plan = plan_run(config, False, programs.REGISTRY)
    program = programs.build_planned(dataclasses.replace(plan.programs[plan.chunks[0]], steps=1))
    data = models.make_data(config.model, config.global_batch, plan.features, config.seed, plan.dims)
    initial = models.init_params(config.model, plan.features, config.hidden, config.seed, config.layers, plan.dims)
    carry, x, y, learning_rate = program.place(initial, data, config.learning_rate)
    state = {"carry": carry}

    def one_step() -> Any:
        state["carry"], losses = program.run(state["carry"], x, y, learning_rate)
        return state["carry"], losses

    run = trace_steps(one_step, steps, folder)
    compiled = program.compiled.as_text()
    trace = read(run, compiled)
    return Profile(run, trace, tuple(match_hlo(trace, compiled)), steps, compiled)
