"""The sharded-DP (ZeRO) lab and the 2-D mesh lab as standalone scripts: their training with the chosen
strategy, or on the chosen data × model mesh, written with only jax and numpy. With the same settings
each prints the final loss that `python -m pmap_core train --strategy …` (or `--mesh data=X,model=Y`) prints
with the same settings: the notebook names that command in full (`cli_command`)."""

from __future__ import annotations

import dataclasses

from pmap_core.concepts import sharded_dp
from pmap_core.export.templating import Exported, cli_command, fill, header, script_devices, shown
from pmap_core.train import config as train_config
from pmap_core.train import models, programs
from pmap_core.train import plan as train_plan
from pmap_core.train.mesh import MODEL_AXIS
from pmap_core.validation import LabInputError


def check_split(config: train_config.TrainConfig) -> train_config.TrainConfig:
    """`config` checked as a script runs it: every setting as the lab checks it, at up to 64 devices
    whatever this process has; the global batch, the mesh and the hidden width split over them."""
    devices = script_devices(config.devices)
    model_axis = config.mesh_model
    tensor = programs.impl_of_axis(MODEL_AXIS)  # the data × model mesh's program
    if config.impl == tensor and (devices % model_axis or config.hidden % model_axis):
        name, size = ("devices", devices) if devices % model_axis else ("hidden", config.hidden)
        raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                            axis="model", count=model_axis, name=name, size=size)
    checked = train_plan.validate(dataclasses.replace(config, devices=1, mesh_model=1))
    checked = dataclasses.replace(checked, devices=devices, mesh_model=model_axis)
    if checked.impl == tensor and checked.strategy == "zero3" and checked.features % checked.mesh_data:
        raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                            axis="data", count=checked.mesh_data, name="features", size=checked.features)
    if checked.global_batch % devices:
        raise LabInputError(
            "batch_not_divisible",
            "global_batch {batch} does not split evenly over {devices} devices; try {suggestion}",
            batch=checked.global_batch, devices=devices,
            suggestion=max(devices, checked.global_batch // devices * devices))
    step = devices * checked.accum_steps
    if checked.global_batch % step:
        raise LabInputError(
            "micro_batch_not_divisible", "global_batch {batch} does not split into {devices} devices × {accum} "
            "micro-batches of equal size; try {suggestion}", batch=checked.global_batch, devices=devices,
            accum=checked.accum_steps, suggestion=max(step, checked.global_batch // step * step))
    return checked


def _model_code(config: train_config.TrainConfig) -> str:
    return fill("model_mlp.py.tmpl", features=config.features, hidden=config.hidden, noise=models.NOISE).rstrip()


def sharded_dp_export(config: train_config.TrainConfig, chunk: int | None = None) -> Exported:
    """The sharded-DP lab's run of `config` (the MLP under dp or ZeRO-1/2/3 with SGD or Adam, K micro-batches,
    float32 or bfloat16 gradients, float32 or mixed precision), as a script."""
    config = sharded_dp.effective(dataclasses.replace(config, model="mlp", impl=programs.impl_of("strategy")))
    config = check_split(config)
    chunk = min(chunk or config.chunk, config.steps)
    settings = {"strategy": config.strategy, "optimizer": config.optimizer, "precision": config.precision,
                "grad_dtype": config.grad_dtype, "devices": config.devices, "accum": config.accum_steps,
                "batch": config.global_batch, "steps": config.steps, "hidden": config.hidden,
                "features": config.features, "lr": config.learning_rate, "seed": config.seed}
    script = fill(
        "zero.py.tmpl",
        header=header(f"The sharded data parallel lab: the MLP trained with {config.strategy}, {config.optimizer} and "
                      f"{config.precision} precision on {config.devices} device(s).", settings, config.devices,
                      "sharded_dp"),
        strategy=config.strategy, optimizer=config.optimizer, precision=config.precision,
        grad_dtype=config.grad_dtype, accum_steps=config.accum_steps, global_batch=config.global_batch,
        steps=config.steps, chunk=chunk, learning_rate=repr(float(config.learning_rate)), seed=config.seed,
        model_code=_model_code(config))
    command = cli_command("train", {
        "model": "mlp", "strategy": config.strategy, "optimizer": config.optimizer, "precision": config.precision,
        "grad-dtype": config.grad_dtype, "devices": config.devices, "accum-steps": config.accum_steps,
        "global-batch": config.global_batch, "steps": config.steps, "hidden": config.hidden,
        "features": config.features, "learning-rate": config.learning_rate, "seed": config.seed})
    return Exported("sharded_dp", script, {**settings, "settings": shown(settings), "chunk": chunk,
                                           "micro": config.micro_batch, "per_device": config.per_device_batch,
                                           "command": command})


def mesh_2d_export(config: train_config.TrainConfig, chunk: int | None = None) -> Exported:
    """The 2-D mesh lab's run of `config` (the MLP on a data × model mesh, Megatron's split, SGD), as a script."""
    config = check_split(dataclasses.replace(config, model="mlp", impl=programs.impl_of_axis(MODEL_AXIS)))
    chunk = min(chunk or config.chunk, config.steps)
    settings = {"mesh": f"{config.mesh_data}x{config.mesh_model}", "strategy": config.strategy,
                "batch": config.global_batch, "steps": config.steps, "hidden": config.hidden,
                "features": config.features, "lr": config.learning_rate, "seed": config.seed}
    script = fill(
        "mesh.py.tmpl",
        header=header(f"The 2-D mesh lab: the MLP trained on a {config.mesh_data} x {config.mesh_model} "
                      f"(data x model) mesh.", settings, config.devices, "mesh_2d"),
        mesh_data=config.mesh_data, mesh_model=config.mesh_model, strategy=config.strategy,
        global_batch=config.global_batch, steps=config.steps, chunk=chunk,
        learning_rate=repr(float(config.learning_rate)), seed=config.seed, model_code=_model_code(config))
    command = cli_command("train", {
        "model": "mlp", "mesh": f"data={config.mesh_data},model={config.mesh_model}", "strategy": config.strategy,
        "global-batch": config.global_batch, "steps": config.steps, "hidden": config.hidden,
        "features": config.features, "learning-rate": config.learning_rate, "seed": config.seed})
    return Exported("mesh_2d", script, {**settings, "settings": shown(settings), "chunk": chunk, "command": command,
                                        "devices": config.devices, "data": config.mesh_data,
                                        "model": config.mesh_model, "rows": config.global_batch // config.mesh_data,
                                        "cols": config.hidden // config.mesh_model})
