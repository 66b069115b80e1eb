"""The registry of parallel programs: a name for each way of running the training step, and the
compiled program of a spec, cached.

`TrainConfig.impl` names an entry of `PROGRAMS`; `build(spec)` compiles that entry's program once
per spec (a rerun with the same shapes never recompiles) and times the compile on its own. The
"jit" entry runs the sharded-state program (`train.zero`) when the spec asks for a ZeRO strategy,
Adam, accumulation or bfloat16 gradients, and the replicated one otherwise.

Adding a way of running the step: write a module whose builder takes a `ProgramSpec` and returns
a `ParallelProgram` (`train.program`), and `register` it. Nothing in the loop changes.

What a program adds to the record of its runs (labels in a run's name, figures known from its
settings, the mesh a sweep of one D compares) is its `RunExtras`, registered beside its builder:
tracking asks `extras(config.impl)` and names no program.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pmap_core.train import pipeline, replicated, tensor, zero
from pmap_core.train.program import ParallelProgram, ProgramSpec

Builder = Callable[[ProgramSpec], ParallelProgram]


def _jit(spec: ProgramSpec) -> ParallelProgram:
    return zero.build(spec) if spec.sharded_state else replicated.build_jit(spec)


PROGRAMS: dict[str, Builder] = {"pmap": replicated.build_pmap, "shard_map": replicated.build_shard_map,
                                "jit": _jit, "tensor": tensor.build, "pipeline": pipeline.build}
IMPLEMENTATIONS = ("pmap", "shard_map", "jit")  # the three ways of writing 1-D data parallelism, as pages show them
TENSOR_IMPL = "tensor"             # a data × model mesh: tensor parallelism with data parallelism (train.tensor)
PIPELINE_IMPL = "pipeline"         # the MLP's layers in stages over a `stage` axis (train.pipeline)
SHARDED_STATE_IMPL = "jit"         # the one entry that runs a sharded training state

# A hook reads a run's `TrainConfig` (typed `Any`: train.config imports this module).
Config = Any


def _no_labels(config: Config) -> Sequence[str]:
    return ()


def _no_metrics(config: Config) -> Mapping[str, float]:
    return {}


@dataclasses.dataclass(frozen=True)
class RunExtras:
    """What a program adds to the record of its runs, beyond the settings and figures every run has."""

    # Labels a run's name shows after its named settings: "4x2" (a data × model mesh), "P4", "M8", "1f1b".
    setup: Callable[[Config], Sequence[str]] = _no_labels
    # Figures a finished run logs besides the loop's, known from its settings (a pipeline's bubble).
    metrics: Callable[[Config], Mapping[str, float]] = _no_metrics
    # The run's data × model mesh: its label ("4x2") and the model axis's size. A sweep of one D over
    # runs that have one compares meshes (curves against the model axis), not device counts.
    mesh: Callable[[Config], tuple[str, int]] | None = None


def _mesh(config: Config) -> tuple[str, int]:
    return f"{config.mesh_data}x{config.mesh_model}", config.mesh_model


def _tensor_setup(config: Config) -> Sequence[str]:
    return (_mesh(config)[0],)


def _pipeline_setup(config: Config) -> Sequence[str]:
    return (f"P{config.pipeline_stages}", f"M{config.microbatches}", config.schedule)


def _pipeline_metrics(config: Config) -> Mapping[str, float]:
    return {"bubble_fraction": pipeline.schedule_bubble(config.pipeline_stages, config.microbatches,
                                                        config.schedule)}


NO_EXTRAS = RunExtras()
EXTRAS: dict[str, RunExtras] = {TENSOR_IMPL: RunExtras(setup=_tensor_setup, mesh=_mesh),
                                PIPELINE_IMPL: RunExtras(setup=_pipeline_setup, metrics=_pipeline_metrics)}

_compiled_here = threading.local()  # .count: programs this thread compiled (a cache miss runs in its caller)


def register(name: str, builder: Builder, run_extras: RunExtras | None = None) -> None:
    """Make `name` a value of `TrainConfig.impl` that trains with `builder`'s programs (and records its
    runs with `run_extras`, when it adds anything to them)."""
    PROGRAMS[name] = builder
    if run_extras is not None:
        EXTRAS[name] = run_extras


def unregister(name: str) -> None:
    if name in IMPLEMENTATIONS or name in (TENSOR_IMPL, PIPELINE_IMPL):
        raise ValueError(f"{name!r} is one of the lab's own programs")
    PROGRAMS.pop(name, None)
    EXTRAS.pop(name, None)
    build.cache_clear()


def extras(impl: str) -> RunExtras:
    """What the program `impl` adds to the record of its runs (nothing, for most)."""
    return EXTRAS.get(impl, NO_EXTRAS)


def compiles_in_this_thread() -> int:
    """How many programs `build` compiled in the calling thread: a call that compiled is told apart
    from one whose program another session compiled meanwhile."""
    return getattr(_compiled_here, "count", 0)


@functools.lru_cache(maxsize=64)
def build(spec: ProgramSpec) -> ParallelProgram:
    """The compiled program of `spec` (compiled once per spec)."""
    program = PROGRAMS[spec.impl](spec)
    _compiled_here.count = compiles_in_this_thread() + 1
    return program
