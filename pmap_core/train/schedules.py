"""Pipeline schedules, counted in plain Python: for P stages and M micro-batches, which micro-batch's forward or
backward each device runs in each time slot, or that it waits; what each stage keeps meanwhile, and the bubble.
The compiled pipeline (`train.pipeline`), the pipeline pages and the planner read them from here.

    schedule_table(P, M, "gpipe")     every forward, then every backward, the last micro-batch's first
                                      (Huang et al. 2019, GPipe, §2.3)
    schedule_table(P, M, "1f1b")      P − s − 1 forwards on stage s, then one forward, one backward
                                      (Narayanan et al. 2021, PipeDream-Flush), so fewer micro-batches wait

A backward recomputes its stage's forward from the kept input, so a stage keeps one input per micro-batch in
flight, in buffers sized from the table (`stash_slots`): M inputs under GPipe, at most P under 1F1B.

With one time unit per forward and per backward, both schedules take 2(M + P − 1) slots, of which each
device is busy 2M: the bubble is (P − 1)/(M + P − 1) of the step (GPipe §2.3; the Ultra-Scale Playbook,
"Pipeline parallelism", gives it over the ideal time, (P − 1)/M), counted here from the table
(`bubble_fraction`). That is the papers' asynchronous model; a program that runs the table in lockstep ends
every slot with every device's sends, so a slot lasts as long as its slowest work (`slot_counts`).

`schedule_of(P, M, name)` counts all of this once into a `Schedule` (the table, the kept inputs, the buffers,
the slot counts, the bubble and the summary), which the compiled program, the pages and the lab pass along.
"""

from __future__ import annotations

import dataclasses
import functools

SCHEDULES = ("gpipe", "1f1b")
IDLE, FORWARD, BACKWARD = 0, 1, 2


@dataclasses.dataclass(frozen=True)
class Slot:
    """What one device does in one time slot: `kind` FORWARD, BACKWARD or IDLE, on micro-batch `micro`
    (-1 when idle)."""

    kind: int
    micro: int = -1

    def __str__(self) -> str:
        return "." if self.kind == IDLE else f"{'FB'[self.kind - 1]}{self.micro}"


def stage_order(stages: int, microbatches: int, schedule: str, stage: int) -> list[Slot]:
    """The work of one stage, in the order it runs it."""
    forwards = [Slot(FORWARD, m) for m in range(microbatches)]
    backwards = [Slot(BACKWARD, m) for m in range(microbatches)]
    if schedule == "gpipe":  # the backwards in reverse: the last micro-batch's forward is the freshest (§2.3)
        return forwards + backwards[::-1]
    if schedule != "1f1b":
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    warmup = min(stages - stage - 1, microbatches)
    order = forwards[:warmup]
    for m in range(microbatches - warmup):
        order += [forwards[warmup + m], backwards[m]]
    return order + backwards[microbatches - warmup:]


def schedule_table(stages: int, microbatches: int, schedule: str) -> list[list[Slot]]:
    """[slot][stage]: each stage runs its next piece of work as soon as what it needs was done in an
    earlier slot (a forward: the previous stage's forward of that micro-batch; a backward: the next
    stage's backward, or on the last stage its own forward), else it waits."""
    orders = [stage_order(stages, microbatches, schedule, s) for s in range(stages)]
    done: dict[tuple[int, int, int], int] = {}  # (kind, stage, micro) -> slot it ran in
    position = [0] * stages
    table: list[list[Slot]] = []
    while any(position[s] < len(orders[s]) for s in range(stages)):
        t = len(table)
        row = []
        for s in range(stages):
            work = orders[s][position[s]] if position[s] < len(orders[s]) else Slot(IDLE)
            if work.kind == FORWARD:
                needs = (FORWARD, s - 1, work.micro) if s > 0 else None
            elif work.kind == BACKWARD:
                needs = (BACKWARD, s + 1, work.micro) if s < stages - 1 else (FORWARD, s, work.micro)
            else:
                needs = None
            ready = work.kind != IDLE and (needs is None or done.get(needs, t) < t)
            row.append(work if ready else Slot(IDLE))
        for s, work in enumerate(row):
            if work.kind != IDLE:
                done[(work.kind, s, work.micro)] = t
                position[s] += 1
        table.append(row)
    return table


def bubble_fraction(table: list[list[Slot]]) -> float:
    """The share of device time slots in which a device waits."""
    slots = [slot for row in table for slot in row]
    return sum(slot.kind == IDLE for slot in slots) / len(slots)


def schedule_bubble(stages: int, microbatches: int, schedule: str) -> float:
    return schedule_of(stages, microbatches, schedule).bubble_fraction


@dataclasses.dataclass(frozen=True)
class SlotCounts:
    """The slots of a table by their slowest work: in lockstep a slot lasts as long as the slowest device's
    work in it, so one step takes forward_slots · t_f + backward_slots · t_b (t_b a backward, which
    recomputes the forward: more than t_f)."""

    forward_slots: int      # slots whose slowest work is a forward (no device runs a backward)
    backward_slots: int     # slots in which at least one device runs a backward

    def step_time(self, t_forward: float, t_backward: float) -> float:
        return self.forward_slots * t_forward + self.backward_slots * t_backward


def slot_counts(table: list[list[Slot]]) -> SlotCounts:
    """Counted from the table: GPipe M + P − 1 of each; 1F1B (P ≥ 2) P forward slots and 2M + P − 2 backward
    ones, its forwards sharing slots with other stages' backwards."""
    backward = sum(any(slot.kind == BACKWARD for slot in row) for row in table)
    forward = sum(any(slot.kind == FORWARD for slot in row) for row in table) - sum(
        any(slot.kind == FORWARD for slot in row) and any(slot.kind == BACKWARD for slot in row) for row in table)
    return SlotCounts(forward, backward)


def slot_of(table: list[list[Slot]], kind: int, stage: int, micro: int) -> int:
    """The time slot in which `stage` runs `kind` of micro-batch `micro`."""
    return next(t for t, row in enumerate(table) if row[stage] == Slot(kind, micro))


def held(table: list[list[Slot]], kept: str) -> list[int]:
    """[stage]: the most micro-batches a stage keeps at once. kept "activations": a stage's input, from the
    end of the slot in which the previous stage sent it to the slot of the stage's own backward (the first
    stage keeps none: its backward recomputes its forward from its rows of the batch); "cotangents": the
    gradient of its output, from the end of the next stage's backward to its own backward (the last stage:
    none). This is what "micro-batches kept" means everywhere in the lab."""
    stages, micro = len(table[0]), len({slot.micro for row in table for slot in row} - {-1})
    most = []
    for s in range(stages):
        sender = s - 1 if kept == "activations" else s + 1
        if not 0 <= sender < stages:
            most.append(0)
            continue
        kind = FORWARD if kept == "activations" else BACKWARD
        spans = [(slot_of(table, kind, sender, m), slot_of(table, BACKWARD, s, m)) for m in range(micro)]
        most.append(max(sum(arrived <= t < used for arrived, used in spans) for t in range(len(table))))
    return most


def stash_slots(table: list[list[Slot]]) -> tuple[int, int]:
    """(activation slots, cotangent slots) of every stage's buffers: the most any stage keeps at once (one
    compiled program runs on every stage, so every stage has the same buffers). GPipe keeps all M
    inputs until the first backward; 1F1B at most P − s + 1 on stage s ≥ 1 (its P − s − 1 warm-up forwards,
    the micro-batch in its forward-backward pair, and the next one already arrived). Micro-batch m sits in
    slot m mod K: GPipe keeps all M (K = M, one slot each); 1F1B works its micro-batches in order, so the K
    it keeps are consecutive; and the one whose backward frees a slot is read before the slot's new arrival
    is written."""
    return _buffer_slots(held(table, "activations"), held(table, "cotangents"))


def _buffer_slots(activations: list[int], cotangents: list[int]) -> tuple[int, int]:
    return max(1, *activations), max(1, *cotangents)


@dataclasses.dataclass(frozen=True)
class ScheduleSummary:
    """What one schedule's table says, counted from it (no device needed)."""

    slots: int              # time slots of one step: 2(M + P − 1)
    busy: int               # of them, the slots each device works: 2M
    idle: int               # idle cells of the whole table (devices × slots)
    bubble_fraction: float  # idle / all cells: (P − 1)/(M + P − 1)
    kept: int               # the most micro-batches' inputs a stage keeps at once (`held`; none with one stage)


def schedule_summary(stages: int, microbatches: int, schedule: str) -> ScheduleSummary:
    return schedule_of(stages, microbatches, schedule).summary


@dataclasses.dataclass(frozen=True)
class Schedule:
    """One schedule of P stages and M micro-batches, everything the lab reads from its table counted once
    (`schedule_of`): the table the compiled step follows, the micro-batches each stage keeps, its buffers,
    its slots by their slowest work and the summary the pages show. Passed along, never recounted."""

    name: str                                 # "gpipe" or "1f1b"
    stages: int
    microbatches: int
    table: tuple[tuple[Slot, ...], ...]       # [slot][stage] (`schedule_table`)
    held: tuple[int, ...]                     # per stage, the most inputs kept at once (`held`, "activations")
    stash_slots: tuple[int, int]              # (activation, cotangent) buffer slots of every stage (`stash_slots`)
    slot_counts: SlotCounts                   # the slots by their slowest work, for the lockstep step time
    summary: ScheduleSummary                  # slots, busy, idle, bubble and most kept

    @property
    def bubble_fraction(self) -> float:
        return self.summary.bubble_fraction

    def rows(self) -> list[list[Slot]]:
        """The table as `schedule_table` returns it (a fresh list of lists)."""
        return [list(row) for row in self.table]


@functools.lru_cache(maxsize=256)
def schedule_of(stages: int, microbatches: int, name: str) -> Schedule:
    """The `Schedule` of `name` on P stages and M micro-batches, counted once per (P, M, name)."""
    table = schedule_table(stages, microbatches, name)
    activations, cotangents = held(table, "activations"), held(table, "cotangents")
    idle = sum(slot.kind == IDLE for row in table for slot in row)
    summary = ScheduleSummary(len(table), 2 * microbatches, idle, bubble_fraction(table), max(activations))
    return Schedule(name, stages, microbatches, tuple(tuple(row) for row in table), tuple(activations),
                    _buffer_slots(activations, cotangents), slot_counts(table), summary)


def format_table(table: list[list[Slot]]) -> str:
    """One line per stage, one column per slot: F3 a forward of micro-batch 3, B3 its backward, . idle."""
    return "\n".join(" ".join(f"{row[s]!s:>3}" for row in table) for s in range(len(table[0])))
