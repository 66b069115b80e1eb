"""The multi-process lab as a launch script: it starts P Python processes on this machine, each with N
simulated CPU devices, which join one group with `jax.distributed` and train linear regression as one,
each reading only its own devices' rows of every step's global batch; process 0 prints what
`python -m pmap_core launch --processes P --devices-per-process N train --dataset-size S` prints of the
same run (the rows it read, the loss per step, the parameters). Only jax and numpy."""

from __future__ import annotations

from pmap_core.export.templating import Exported, cli_command, fill, requirements, shown
from pmap_core.runtime import MIN_WORKER_THREADS
from pmap_core.train import config as train_config
from pmap_core.train import launch, models
from pmap_core.train import plan as train_plan
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError

LEARNING_RATE = 0.3  # the multi-process lab's


def multiprocess_export(processes: int, per_process: int, impl: str, global_batch: int, dataset_size: int,
                        steps: int, learning_rate: float = LEARNING_RATE, seed: int = 0) -> Exported:
    """The multi-process lab's group of `processes` × `per_process` devices, as a launch script."""
    if impl not in IMPLEMENTATIONS:
        raise LabInputError("unknown_impl", "impl must be one of {options}, got {value!r}",
                            options=", ".join(IMPLEMENTATIONS), value=impl)
    launch.check_group(processes, per_process, global_batch, None, dataset_size)
    config = train_plan.validate(train_config.TrainConfig(
        model="linear", devices=1, impl=impl, global_batch=global_batch, learning_rate=learning_rate, steps=steps,
        seed=seed))
    settings = {"processes": processes, "per_process": per_process, "impl": impl, "batch": config.global_batch,
                "size": dataset_size, "steps": config.steps, "lr": config.learning_rate, "seed": config.seed}
    devices = processes * per_process
    script = requirements() + fill(
        "multiprocess.py.tmpl",
        title=f"The multi-process lab: {processes} process(es) x {per_process} device(s) train as one with "
              f"jax.distributed ({impl}).", settings=shown(settings),
        processes=processes, per_process=per_process, impl=impl, global_batch=config.global_batch,
        dataset_size=dataset_size, steps=config.steps, learning_rate=repr(float(config.learning_rate)),
        seed=config.seed, threads=max(MIN_WORKER_THREADS, 2 * per_process), true_w=models.TRUE_W,
        true_b=models.TRUE_B, noise=models.NOISE)
    command = cli_command("launch", {"processes": processes, "devices-per-process": per_process}, "train", {
        "model": "linear", "impl": impl, "global-batch": config.global_batch, "dataset-size": dataset_size,
        "steps": config.steps, "learning-rate": config.learning_rate, "seed": config.seed})
    return Exported("multiprocess", script, {**settings, "settings": shown(settings), "devices": devices,
                                             "command": command,
                                             "rows": config.global_batch // processes,
                                             "steps_per_epoch": dataset_size // config.global_batch})
