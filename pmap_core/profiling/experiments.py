"""What a trace shows that a formula predicts: a pipeline's bubble, and the waiting a straggler causes.

**The bubble, read from the trace.** The pipeline program (`train.pipeline`) runs its schedule slot by slot: in
each slot every device runs its schedule's switch (a `conditional`: nothing, a forward or a backward of its stage),
then the ppermutes of every device. `pipeline_bubble` traces one step and reads each stage's slots from its own
lane: a slot is idle where its switch ran no operation (the idle branch). The share of idle slots per stage is
the schedule's bubble (P − 1)/(M + P − 1) (GPipe §2.3) if the program does what its table says; the share of the
step's time those slots took is what the lockstep program pays, which differs: a slot lasts as long as the
slowest work of any device in it, and on simulated CPU devices the stages share the machine's cores.

**The straggler.** `straggler` traces a data-parallel step in which one device does extra work (repeated
products of its batch with a matrix, `work` times) before the gradient's all-reduce: every other device waits at
the all-reduce's rendezvous for it, the longer the more work it is given.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pmap_core.profiling.capture import profile_run, trace_steps
from pmap_core.profiling.reading import Event, Trace, read

SWITCH = "conditional"  # the HLO opcode of lax.switch / lax.cond, the name XLA gives the instruction


@dataclasses.dataclass(frozen=True)
class StageSlots:
    """One stage's slots in one traced step."""

    stage: int
    slots: int
    idle_slots: int
    idle_time_share: float  # the idle slots' time over every slot's time

    @property
    def idle_share(self) -> float:
        return self.idle_slots / self.slots


@dataclasses.dataclass(frozen=True)
class BubbleRead:
    stages: int
    microbatches: int
    schedule: str
    schedule_bubble: float        # (P − 1)/(M + P − 1), from the schedule's table
    per_stage: tuple[StageSlots, ...]


def _switches(events: Sequence[Event]) -> list[Event]:
    """The outermost switches of a lane (a stage's own switch of layers nests inside the schedule's)."""
    switches = sorted((e for e in events if e.hlo_op.split(".")[0] == SWITCH), key=lambda e: e.start_us)
    outer: list[Event] = []
    for event in switches:
        if not outer or event.start_us >= outer[-1].start_us + outer[-1].span_us:
            outer.append(event)
    return outer


def stage_slots(trace: Trace, device: int, step: int = 0) -> StageSlots:
    """A stage's slots from its lane: each starts at a switch and lasts to the next (the last to the end of the
    lane's last operation in the step); idle where the switch ran no operation inside it."""
    events = trace.device_events(device, step)
    switches = _switches(events)
    if not switches:
        return StageSlots(device, 0, 0, 0.0)
    last_end = max(e.start_us + e.span_us for e in events)
    bounds = [s.start_us for s in switches] + [last_end]
    inside = [sum(1 for e in events if e is not s and s.start_us <= e.start_us < s.start_us + s.span_us)
              for s in switches]
    fewest = min(inside)
    idle = [count == fewest and fewest < max(inside) for count in inside]
    times = np.diff(bounds)
    return StageSlots(device, len(switches), sum(idle), float(times[idle].sum() / times.sum()))


def pipeline_bubble(stages: int, microbatches: int, schedule: str, folder: str) -> BubbleRead:
    """One step of the MLP in `stages` stages (one layer each, one device each) traced; each stage's slots."""
    from pmap_core.train import pipeline, plan
    from pmap_core.train.config import HEADLESS_MAX_WORK, TrainConfig

    config = plan.validate(TrainConfig(model="mlp", impl="pipeline", devices=stages, pipeline_stages=stages,
                                       microbatches=microbatches, schedule=schedule, layers=max(2, stages),
                                       hidden=16, features=8, global_batch=4 * microbatches, steps=1),
                           HEADLESS_MAX_WORK)
    profile = profile_run(config, 1, folder)
    rows = tuple(stage_slots(profile.trace, device) for device in profile.trace.devices)
    return BubbleRead(stages, microbatches, schedule, pipeline.schedule_bubble(stages, microbatches, schedule), rows)


@dataclasses.dataclass(frozen=True)
class StragglerPoint:
    work: int                  # products the straggler runs on top of the step
    straggler_compute_s: float  # its compute per step
    others_waiting_s: float    # the other devices' mean waiting per step at the all-reduce
    straggler_waiting_s: float


STRAGGLER = 0  # the device given extra work
STRAGGLER_WIDTH = 64


@functools.lru_cache(maxsize=8)
def _straggler_step(devices: int):
    """A data-parallel linear-regression step on the first `devices` devices (one compile per D), device 0
    running `work` extra products of its batch with a matrix before the gradient's all-reduce."""

    def step(w, x, y, mixer, work):
        def extra(h):
            return lax.fori_loop(0, work, lambda _, a: jnp.tanh(a @ mixer), h)

        h = lax.cond(lax.axis_index("data") == STRAGGLER, extra, lambda h: h, x)
        grad = jax.grad(lambda w: jnp.mean((h @ w - y) ** 2))(w)
        return w - 0.01 * lax.pmean(grad, "data")

    return jax.pmap(step, axis_name="data", in_axes=(0, 0, 0, None, None), devices=jax.devices()[:devices])


def straggler(devices: int, works: Sequence[int], folder: str, steps: int = 2) -> list[StragglerPoint]:
    """One trace per amount of extra work; the straggler's compute and every device's waiting, per step."""
    run = _straggler_step(devices)
    rng = np.random.default_rng(0)
    w = np.zeros((devices, STRAGGLER_WIDTH), np.float32)
    x = rng.normal(size=(devices, 32, STRAGGLER_WIDTH)).astype(np.float32)
    y = rng.normal(size=(devices, 32)).astype(np.float32)
    mixer = (rng.normal(size=(STRAGGLER_WIDTH, STRAGGLER_WIDTH)) / np.sqrt(STRAGGLER_WIDTH)).astype(np.float32)
    points = []
    for work in works:
        trace = read(trace_steps(lambda work=work: run(w, x, y, mixer, np.int32(work)), steps, folder))
        rows = trace.totals()
        others = [row.waiting_s for row in rows if row.device != STRAGGLER]
        mine = [row for row in rows if row.device == STRAGGLER]
        points.append(StragglerPoint(
            work, sum(row.compute_s for row in mine) / len(mine),
            sum(others) / len(others) if others else 0.0, sum(row.waiting_s for row in mine) / len(mine)))
    return points
