"""The schedule, shown: the table `train.pipeline.schedule_of` counts once, as records (`schedule_cells`,
`schedule_rows`), the micro-batches each device keeps (`kept`), the bubble beside its sources' formulas
(`bubble`) and the slots by their slowest work (`slot_counts`). No device needed."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pmap_core.train import pipeline as train_pipeline
from pmap_core.train.pipeline import BACKWARD, FORWARD, IDLE

KINDS = ("forward", "backward", "idle")
_KIND = {FORWARD: "forward", BACKWARD: "backward", IDLE: "idle"}


@dataclasses.dataclass(frozen=True)
class Cell:
    """What device `device` (stage `device`) runs in time slot `slot`: a `kind` of KINDS on micro-batch
    `micro` (None when idle)."""

    device: int
    slot: int
    micro: int | None
    kind: str

    @property
    def label(self) -> str:
        """F3: the forward of micro-batch 3; B3: its backward; empty: idle."""
        return "" if self.micro is None else f"{self.kind[0].upper()}{self.micro}"


def schedule_cells(stages: int, microbatches: int, schedule: str) -> list[Cell]:
    """The schedule `train.pipeline.schedule_table` builds, as records, device by device, slot by slot."""
    table = train_pipeline.schedule_of(stages, microbatches, schedule).table
    return [Cell(s, t, None if row[s].kind == IDLE else row[s].micro, _KIND[row[s].kind])
            for s in range(stages) for t, row in enumerate(table)]


def schedule_rows(cells: Sequence[Cell]) -> list[dict[str, object]]:
    """The schedule as a table: one row per device, one column per slot (t0, t1, …) holding F3, B3 or ·."""
    rows: dict[int, dict[str, object]] = {}
    for cell in cells:
        rows.setdefault(cell.device, {"device": cell.device})[f"t{cell.slot}"] = cell.label or "·"
    return [rows[d] for d in sorted(rows)]


def kept(stages: int, microbatches: int, schedule: str) -> list[int]:
    """Per device: the most micro-batches' inputs it keeps at once for its backwards, from their arrival to
    their backward (`train.pipeline.held`, the one meaning of "micro-batches kept" in the lab): device 0 none
    (its backward recomputes its forward from its rows of the batch); GPipe M on every other; 1F1B P − s + 1
    on stage s ≥ 1, at most M."""
    return list(train_pipeline.schedule_of(stages, microbatches, schedule).held)


@dataclasses.dataclass(frozen=True)
class Bubble:
    """The idle share of a schedule, counted from its table, beside its sources' formulas."""

    stages: int
    microbatches: int
    schedule: str
    slots: int                 # time slots of one step: 2(M + P − 1) with one unit per forward and backward
    busy_per_device: int       # 2M: each device's forwards and backwards
    idle_cells: int            # (device, slot) cells in which a device waits
    counted: float             # idle cells / all cells (train.pipeline.bubble_fraction)
    kept: tuple[int, ...]      # per device, the most micro-batches' inputs kept at once (`kept`)

    @property
    def cells(self) -> int:
        return self.slots * self.stages

    @property
    def formula(self) -> float:
        """(P − 1)/(M + P − 1): the share of the step (GPipe §2.3)."""
        return (self.stages - 1) / (self.microbatches + self.stages - 1)

    @property
    def playbook_ratio(self) -> float:
        """(P − 1)/M: the bubble's time over the ideal time (the Playbook), counted as idle over busy cells."""
        return self.idle_cells / (self.busy_per_device * self.stages)

    @property
    def most_kept(self) -> int:
        return max(self.kept)


def bubble(stages: int, microbatches: int, schedule: str) -> Bubble:
    """The bubble of the `Schedule` of P, M and `schedule`, from its summary (counted once)."""
    plan = train_pipeline.schedule_of(stages, microbatches, schedule)
    summary = plan.summary
    return Bubble(stages, microbatches, schedule, summary.slots, summary.busy, summary.idle, summary.bubble_fraction,
                  plan.held)


def slot_counts(stages: int, microbatches: int, schedule: str) -> train_pipeline.SlotCounts:
    """The table's slots by their slowest work (`train.pipeline.slot_counts`, counted once in the `Schedule`)."""
    return train_pipeline.schedule_of(stages, microbatches, schedule).slot_counts
