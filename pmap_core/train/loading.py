"""Per-host data loading: in a multi-process run each process reads only its own rows of the global batch.

The dataset is `size` samples; sample i is made from (seed, i) alone, so any process can read any
sample without the others — as a real job reads its files. Each epoch visits the samples in a
shuffled order fixed by (seed, epoch); step s takes the next `global_batch` of them, and device k
of the program (in the order its blocks go to the devices) gets block k. A process reads only the
blocks of its own devices, so over one epoch every sample is read exactly once, by one process.

The blocks become global arrays with `jax.make_array_from_process_local_data` (in
`ParallelProgram.place`): rows of one (B, …) array for jit and shard_map, the process-local
leading device axis (local devices, B/D, …) for pmap.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import jax
import numpy as np

from pmap_core.train import models, programs
from pmap_core.train.config import TrainConfig
from pmap_core.train.divergence import check_finite
from pmap_core.train.plan import validate
from pmap_core.train.program import ParallelProgram
from pmap_core.validation import LabInputError

MAX_DATASET_SIZE = 65_536
PER_HOST_MODELS = ("linear", "mlp")  # the models whose samples `read_samples` makes one by one
_SHUFFLE_STREAM = 0x5EED  # keeps the epoch order's random stream apart from the samples'


@dataclasses.dataclass(frozen=True)
class DataSpec:
    model: str
    features: int
    size: int   # samples in the dataset
    seed: int

    @classmethod
    def of(cls, config: TrainConfig, size: int) -> DataSpec:
        return cls(config.model, config.input_features, size, config.seed)


def check_sizes(size: int, global_batch: int, devices: int) -> None:
    """The dataset splits into whole global batches, and each global batch into D equal blocks."""
    if not 1 <= size <= MAX_DATASET_SIZE:
        raise LabInputError("bad_dataset_size", "dataset size must be between 1 and {limit}, got {value}",
                            value=size, limit=MAX_DATASET_SIZE)
    if size % global_batch:
        raise LabInputError("dataset_not_divisible",
                            "the dataset ({value} samples) must split into whole global batches of {batch}",
                            value=size, batch=global_batch)
    if global_batch % devices:
        raise LabInputError("batch_not_divisible",
                            "the global batch ({value}) must split into {devices} equal blocks, one per device",
                            value=global_batch, devices=devices)


def read_samples(spec: DataSpec, indices: np.ndarray) -> models.Dataset:
    """Samples `indices` of the dataset, each made from (seed, index) alone."""
    indices = np.asarray(indices, dtype=np.int64).ravel()
    rngs = [np.random.default_rng([spec.seed, int(i)]) for i in indices]
    noise = np.array([rng.standard_normal() for rng in rngs])
    if spec.model == "linear":
        x = np.array([[rng.uniform(-1.0, 1.0)] for rng in rngs], np.float32).reshape(-1, 1)
        y = models.TRUE_W * x[:, 0] + models.TRUE_B + models.NOISE * noise
    else:
        teacher = np.random.default_rng(spec.seed + 1_000_003).standard_normal(spec.features) / np.sqrt(spec.features)
        x = np.array([rng.standard_normal(spec.features) for rng in rngs], np.float32).reshape(-1, spec.features)
        y = np.sin(2.0 * x @ teacher) + models.NOISE * noise
    return models.Dataset(x, y.astype(np.float32))


def epoch_order(spec: DataSpec, epoch: int) -> np.ndarray:
    """The order epoch `epoch` visits the samples in: the same in every process."""
    return np.random.default_rng([spec.seed, epoch, _SHUFFLE_STREAM]).permutation(spec.size)


def step_rows(spec: DataSpec, global_batch: int, step: int, devices: int) -> np.ndarray:
    """(D, B/D): the sample indices each device's block holds at global step `step`."""
    epoch, k = divmod(step, spec.size // global_batch)
    return epoch_order(spec, epoch)[k * global_batch:(k + 1) * global_batch].reshape(devices, -1)


def local_positions(devices: Sequence[jax.Device]) -> list[int]:
    """Positions of this process's devices among the program's devices (the blocks it loads)."""
    return [k for k, device in enumerate(devices) if device.process_index == jax.process_index()]


def load_local(spec: DataSpec, global_batch: int, step: int, devices: Sequence[jax.Device]
               ) -> tuple[np.ndarray, models.Dataset]:
    """(the rows this process reads, one row of indices per local device; those samples, read)."""
    rows = step_rows(spec, global_batch, step, len(devices))[local_positions(devices)]
    return rows, read_samples(spec, rows)


def global_inputs(program: ParallelProgram, params: dict[str, np.ndarray], rows: np.ndarray,
                  local: models.Dataset, global_batch: int, learning_rate: float) -> tuple:
    """The program's inputs built from this process's blocks only. `program.place` takes a batch of
    global shape and reads only this process's blocks of it: the others stay zeros, never sent."""
    d, per_device = len(program.devices), global_batch // len(program.devices)
    x = np.zeros((d, per_device, local.x.shape[1]), np.float32)
    y = np.zeros((d, per_device), np.float32)
    positions = local_positions(program.devices)
    x[positions] = local.x.reshape(len(rows), per_device, -1)
    y[positions] = local.y.reshape(len(rows), per_device)
    return program.place(params, models.Dataset(x.reshape(global_batch, -1), y.reshape(-1)), learning_rate)


@dataclasses.dataclass(frozen=True)
class HostResult:
    """What one process did: its devices, the rows it read per step, its timings, the final params."""

    process_index: int
    num_processes: int
    local_devices: tuple[str, ...]
    device_positions: tuple[int, ...]       # each local device's block position in the global batch
    rows: tuple[tuple[tuple[int, ...], ...], ...]  # [step][local device] -> sample indices
    step_times_s: tuple[float, ...]         # compiled step, inputs placed, until its result is ready
    load_times_s: tuple[float, ...]         # reading this process's samples and building global arrays
    losses: tuple[float, ...]               # per step, the loss over the whole global batch
    params: dict[str, np.ndarray]
    compile_time_s: float
    replicas_identical: bool


def train_per_host(config: TrainConfig, size: int,
                   on_step: Callable[[int, float], None] | None = None) -> HostResult:
    """Train `config.steps` steps, one compiled call per step, each process loading only its blocks
    of each step's global batch (epochs of `size` samples, shuffled per epoch). A loss that stops being
    a finite number raises `Diverged` after the last step, in every process at the same step."""
    config = validate(config)
    if config.model not in PER_HOST_MODELS:
        raise LabInputError("unknown_model", "per-host loading reads the datasets of model {options}, got {value!r}",
                            options=", ".join(PER_HOST_MODELS), value=config.model)
    check_sizes(size, config.global_batch, config.devices)
    spec = DataSpec.of(config, size)
    program = programs.build(config.program_spec(1))
    params: object = models.init_params(config.model, config.input_features, config.hidden, config.seed,
                                       config.layers)
    initial = params
    rows_read, step_times, load_times, losses = [], [], [], []
    for step in range(config.steps):
        started = time.perf_counter()
        rows, local = load_local(spec, config.global_batch, step, program.devices)
        placed, x, y, lr = global_inputs(program, initial, rows, local, config.global_batch, config.learning_rate)
        params = placed if step == 0 else params
        loaded = time.perf_counter()
        params, step_losses = jax.block_until_ready(program.run(params, x, y, lr))
        step_times.append(time.perf_counter() - loaded)
        load_times.append(loaded - started)
        rows_read.append(tuple(tuple(int(i) for i in r) for r in rows))
        # Each device returns the loss on its own block; their mean is the global batch's loss.
        losses.append([float(row[0]) for row in program.local_losses(step_losses)])
        if on_step is not None:
            on_step(step + 1, float(np.mean(losses[-1])))
    group_losses = group_mean(losses)  # every process gets the same: each stops here, or none does
    check_finite(config, group_losses)
    host_params, diff = program.final_params(params)
    return HostResult(
        process_index=jax.process_index(), num_processes=jax.process_count(),
        local_devices=tuple(str(d) for d in program.devices if d.process_index == jax.process_index()),
        device_positions=tuple(local_positions(program.devices)), rows=tuple(rows_read),
        step_times_s=tuple(step_times), load_times_s=tuple(load_times), losses=group_losses,
        params=host_params, compile_time_s=program.compile_s, replicas_identical=diff == 0.0,
    )


def group_mean(local: list[list[float]]) -> tuple[float, ...]:
    """Per step, the mean of every device's value over all processes (one collective, at the end:
    the steps themselves send nothing for it). `local` is [step][local device]."""
    from jax.experimental import multihost_utils

    gathered = np.asarray(multihost_utils.process_allgather(np.asarray(local, np.float64)))
    return tuple(float(v) for v in gathered.reshape(-1, len(local), len(local[0])).mean(axis=(0, 2)))
