"""The registry of parallel programs: a name for each way of running the training step, and the
compiled program of a spec, cached.

`TrainConfig.impl` names an entry of `PROGRAMS`; `build(spec)` compiles that entry's program once
per spec (a rerun with the same shapes never recompiles) and times the compile on its own. The
"jit" entry runs the sharded-state program (`train.zero`) when the spec asks for a ZeRO strategy,
Adam, accumulation or bfloat16 gradients, and the replicated one otherwise.

Adding a way of running the step: write a module whose builder takes a `ProgramSpec` and returns
a `ParallelProgram` (`train.program`), and `register` it. Nothing in the loop changes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

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

_compiled_here = threading.local()  # .count: programs this thread compiled (a cache miss runs in its caller)


def register(name: str, builder: Builder) -> None:
    """Make `name` a value of `TrainConfig.impl` that trains with `builder`'s programs."""
    PROGRAMS[name] = builder


def unregister(name: str) -> None:
    if name in IMPLEMENTATIONS or name in (TENSOR_IMPL, PIPELINE_IMPL):
        raise ValueError(f"{name!r} is one of the lab's own programs")
    PROGRAMS.pop(name, None)
    build.cache_clear()


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
