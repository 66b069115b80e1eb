"""Per-host loading in a group of processes, worked out without starting one: which blocks of each
step's global batch each process loads, from the functions a multi-process run uses
(`train.loading.step_rows`, and the group's checks in `train.launch.check_group`). What the
multi-process lab's formula says: P processes of N devices each, device k's block of B/(P·N) rows
(k = 0 … P·N − 1, the group's devices process by process, as `jax.devices()` lists them), and process p
loading the blocks of its devices k = pN … pN + N − 1. tests/system/test_distributed.py checks that
real processes read exactly these rows.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pmap_core.train import launch, loading
from pmap_core.validation import check_seed

FEATURES = 16  # the lab's MLP inputs (read only when samples are made; the rows do not depend on it)


@dataclasses.dataclass(frozen=True)
class GroupLoading:
    """What each process of the group loads, step by step, over the first epoch."""

    processes: int
    per_process: int
    global_batch: int
    size: int
    steps_per_epoch: int
    process_of_device: tuple[int, ...]               # device k's process
    rows: tuple[tuple[tuple[int, ...], ...], ...]    # [step][process] -> the sample indices it loads
    reads_per_sample: str                            # over the epoch: "once", or how often, when it is not

    @property
    def devices(self) -> int:
        return self.processes * self.per_process

    @property
    def rows_per_process(self) -> int:
        """Rows one process loads per step: its local batch."""
        return len(self.rows[0][0])

    @property
    def rows_per_device(self) -> int:
        return self.global_batch // self.devices

    @property
    def loaded_per_step(self) -> int:
        """Distinct samples the processes load together in one step: processes × local batch."""
        return len({i for process in self.rows[0] for i in process})


def group_loading(processes: int, per_process: int, batch: int, size: int, seed: int = 0) -> GroupLoading:
    """Each process's rows at every step of the first epoch, for a group of `processes` × `per_process`
    devices, a global batch of `batch` and a dataset of `size` samples (refused as the lab refuses it)."""
    launch.check_group(processes, per_process, batch, None, size)
    spec = loading.DataSpec("mlp", FEATURES, size, check_seed(seed))
    devices = processes * per_process
    owner = tuple(k // per_process for k in range(devices))
    steps = size // batch
    rows = []
    for step in range(steps):
        blocks = loading.step_rows(spec, batch, step, devices)
        rows.append(tuple(tuple(int(i) for i in blocks[[k for k in range(devices) if owner[k] == p]].ravel())
                          for p in range(processes)))
    counts = np.bincount([i for step in rows for process in step for i in process], minlength=size)
    reads = "once" if np.all(counts == 1) else f"{counts.min()} to {counts.max()} times"
    return GroupLoading(processes, per_process, batch, size, steps, owner, tuple(rows), reads)
