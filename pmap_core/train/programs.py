"""The registry of parallel programs: one entry (`program.Program`) per way of running the training step,
and the compiled program of a spec, cached.

An entry carries everything its program owns: the builder (`ProgramSpec -> ParallelProgram`), its
settings dataclass, the check of those settings against a run, the error for another program's run that
sets them, what it adds to the record of its runs (`RunExtras`), its one-device baseline and its analytic
memory and communication model. Each program module defines its own entry (`replicated.PMAP`,
`zero.PROGRAM`, ...); this module lists them, and `register` adds one from outside the lab.

One name, one builder: "jit" is the replicated jit program, "zero" the sharded-state one. A run names how
its step is written (`TrainConfig.impl`: pmap, shard_map, jit, tensor, context, expert, pipeline); impl "jit" with a
sharded training state (a ZeRO strategy, Adam, accumulation, bfloat16 gradients or mixed precision)
selects "zero" (`resolve`), and its record keeps impl "jit" (with what the impl's entry adds to it).
`build(spec)` compiles the selected entry's program once per spec (a rerun with the same shapes never
recompiles) and times the compile on its own.

Nothing in the loop, the footprint or the tracking changes when a program is added.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Any

from pmap_core.train import context, experts, pipeline, replicated, tensor, zero
from pmap_core.train.config import axis_fields, select_program
from pmap_core.train.program import Builder, ParallelProgram, Program, ProgramSpec, RunExtras
from pmap_core.train.settings import defaults

__all__ = ["IMPLEMENTATIONS", "PROGRAMS", "REGISTRY", "Program", "RunExtras", "build", "compiles_in_this_thread",
           "extras", "impl_of", "impl_of_axis", "impls", "own_settings", "register", "resolve", "unregister"]

# In the order their checks of other programs' settings run (train.plan.validate): a model axis, a seq axis,
# experts, stages, then a sharded training state.
REGISTRY: dict[str, Program] = {"pmap": replicated.PMAP, "shard_map": replicated.SHARD_MAP, "jit": replicated.JIT,
                                "tensor": tensor.PROGRAM, "context": context.PROGRAM, "expert": experts.PROGRAM,
                                "pipeline": pipeline.PROGRAM, "zero": zero.PROGRAM}
LAB_PROGRAMS = frozenset(REGISTRY)
IMPLEMENTATIONS = ("pmap", "shard_map", "jit")  # the three ways of writing 1-D data parallelism, as pages show them

NO_EXTRAS = RunExtras()
_compiled_here = threading.local()  # .count: programs this thread compiled (a cache miss runs in its caller)


def _builders() -> dict[str, Builder]:
    return {name: entry.build for name, entry in REGISTRY.items()}


PROGRAMS: dict[str, Builder] = _builders()  # each entry's builder, by name


def register(entry: Program | str, builder: Builder | None = None, run_extras: RunExtras | None = None,
             **fields: Any) -> Program:
    """Add a program: a `Program` entry, or a name, its builder and what else it owns (`run_extras`, and
    `Program`'s other fields by name: settings, check, baseline, analytic, ...). Its name becomes a value
    of `TrainConfig.impl`."""
    if isinstance(entry, str):
        entry = Program(entry, builder, extras=run_extras or NO_EXTRAS, **fields)
    if entry.name in LAB_PROGRAMS:
        raise ValueError(f"{entry.name!r} is one of the lab's own programs")
    REGISTRY[entry.name] = entry
    PROGRAMS[entry.name] = entry.build
    return entry


def unregister(name: str) -> None:
    if name in LAB_PROGRAMS:
        raise ValueError(f"{name!r} is one of the lab's own programs")
    REGISTRY.pop(name, None)
    PROGRAMS.pop(name, None)
    build_planned.cache_clear()


def impls() -> tuple[str, ...]:
    """The values `TrainConfig.impl` may take: what selects each entry, in the registry's order."""
    return tuple(dict.fromkeys(entry.selected_by for entry in REGISTRY.values()))


def resolve(settings: Any) -> Program:
    """The entry that runs `settings`, a TrainConfig or a ProgramSpec (`config.select_program`)."""
    return select_program(REGISTRY, settings)


def extras(impl: str) -> RunExtras:
    """What the runs of `impl` add to their record (nothing, for most): its entry's `RunExtras`."""
    return REGISTRY[impl].extras if impl in REGISTRY else NO_EXTRAS


def impl_of(setting: str) -> str:
    """The impl of the program that declares `setting` ("strategy": jit, whose runs with a sharded state run
    `zero`; "mesh_model": tensor): a caller names the setting it sets, never the program."""
    return next(entry.selected_by for entry in REGISTRY.values()
                if entry.settings and setting in defaults(entry.settings))


def impl_of_axis(axis: str) -> str:
    """The impl of the program whose setting sizes mesh axis `axis` (model: tensor, stage: pipeline)."""
    return impl_of(axis_fields()[axis])


def own_settings(impl: str) -> list[str]:
    """The settings the runs of `impl` own, by name: those of every entry it selects (impl jit: the sharded state's)
    and the others' settings they read (`Program.shares`); what a run records beside the settings every run has."""
    names: dict[str, None] = {}
    for entry in REGISTRY.values():
        if entry.selected_by == impl:
            names.update(dict.fromkeys([*(defaults(entry.settings) if entry.settings else ()), *entry.shares]))
    return list(names)


def compiles_in_this_thread() -> int:
    """How many programs `build` compiled in the calling thread: a call that compiled is told apart
    from one whose program another session compiled meanwhile."""
    return getattr(_compiled_here, "count", 0)


def build(spec: ProgramSpec) -> ParallelProgram:
    """The compiled program of `spec` (compiled once per spec), by the entry its run's plan named or, where none
    did, the one that answers its settings (a spec's entry is not part of what it is: both forms share one cache,
    `build_planned`'s)."""
    return build_planned(spec if spec.program else dataclasses.replace(spec, program=resolve(spec).name))


@functools.lru_cache(maxsize=64)
def build_planned(spec: ProgramSpec) -> ParallelProgram:
    """The compiled program of a spec whose run's plan named its entry (`spec.program`, `train.config.plan_run`):
    the training loop's, which chose every program before it builds one."""
    program = REGISTRY[spec.program].build(spec)
    _compiled_here.count = compiles_in_this_thread() + 1
    return program
