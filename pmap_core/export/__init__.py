"""A lab as a standalone Python script: only jax and numpy, no pmap_core, no Streamlit.

With the same settings the script prints the numbers the lab showed — the training lab's final
loss and parameters, the collectives lab's result on every device, the migration lab's step in
three ways — so a learner can run it in a notebook or on a real multi-GPU machine. The scripts
are filled in from the readable templates in `templates/`; tests/system/test_export.py runs them
in a fresh interpreter and compares with what `pmap_core` computes.

A script sets its own device count (it simulates DEVICES CPU devices, or checks that a GPU or TPU
machine has them), so its settings are checked against what a script can run, up to
`SCRIPT_MAX_DEVICES`, never against the devices of the process that writes it.
"""

from __future__ import annotations

import dataclasses
import pathlib
import string
from collections.abc import Callable, Mapping

from pmap_core.concepts import collectives, migration
from pmap_core.runtime import MAX_CPU_DEVICES, MIN_WORKER_THREADS
from pmap_core.train import config as train_config
from pmap_core.train import models
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError, check_int, check_seed

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"
LABS = ("training", "collectives", "migration")
SCRIPT_MAX_DEVICES = MAX_CPU_DEVICES  # the most CPU devices a script may simulate (the runtime's own limit)

# What every device runs in the collectives lab, written as the script shows it (x: its vector).
COLLECTIVE_CODE = {
    "pmean": ("lax.pmean(x, AXIS)", "the mean over devices, on every device"),
    "psum": ("lax.psum(x, AXIS)", "the sum over devices, on every device"),
    "pmax": ("lax.pmax(x, AXIS)", "the largest value over devices, element by element"),
    "pmin": ("lax.pmin(x, AXIS)", "the smallest value over devices, element by element"),
    "all_gather": ("lax.all_gather(x, AXIS)", "(n,) -> (D, n): every device's vector, one row each"),
    "all_gather_tiled": ("lax.all_gather(x, AXIS, tiled=True)", "(n,) -> (D*n,): the vectors concatenated"),
    "psum_scatter": ("lax.psum_scatter(x, AXIS)", "element d of the sum lands on device d; n must equal D"),
    "psum_scatter_tiled": ("lax.psum_scatter(x, AXIS, tiled=True)", "chunk d of the sum lands on device d"),
    "ppermute": ("lax.ppermute(x, AXIS, RING)", "device d sends its vector to device d + 1"),
    "all_to_all": ("lax.all_to_all(x, AXIS, split_axis=0, concat_axis=0, tiled=True)",
                   "chunk c of device d goes to device c"),
}


def _fill(name: str, **values: object) -> str:
    return string.Template((TEMPLATES / name).read_text()).substitute(values)


def _header(title: str, settings: Mapping[str, object], devices: int, lab: str) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in settings.items())
    return _fill("header.py.tmpl", title=title, settings=shown, filename=f"{lab}.py", devices=devices,
                 threads=max(MIN_WORKER_THREADS, 2 * devices)).rstrip() + "\n"


def script_devices(devices: object) -> int:
    """A script's device count: 1 to SCRIPT_MAX_DEVICES, whatever this process has."""
    return check_int("devices", devices, 1, SCRIPT_MAX_DEVICES)


def check_training(config: train_config.TrainConfig) -> train_config.TrainConfig:
    """`config` checked as its script will run it: every setting as the lab checks it, the device
    count as a script's (`script_devices`), the global batch split evenly over those devices."""
    devices = script_devices(config.devices)
    config = dataclasses.replace(train_config.validate(dataclasses.replace(config, devices=1)), devices=devices)
    if config.impl not in IMPLEMENTATIONS:
        raise LabInputError("unknown_impl", "impl must be one of {options}, got {value!r}",
                            options=", ".join(IMPLEMENTATIONS), value=config.impl)
    if config.sharded_state:
        raise LabInputError("export_sharded_state", "the export covers the replicated SGD step "
                            "(optimizer sgd, strategy dp, no accumulation, float32 gradients)")
    if config.global_batch % devices:
        raise LabInputError("batch_not_divisible", "global_batch {batch} does not split evenly over {devices} "
                            "devices; try {suggestion}", batch=config.global_batch, devices=devices,
                            suggestion=max(devices, config.global_batch // devices * devices))
    return config


def training_script(config: train_config.TrainConfig, chunk: int | None = None) -> str:
    """The training lab's run of `config` (replicated SGD in pmap, shard_map or jit), as a script
    that runs `chunk` steps per compiled call (default: the config's)."""
    config = check_training(config)
    settings = {"model": config.model, "devices": config.devices, "impl": config.impl, "batch": config.global_batch,
                "lr": config.learning_rate, "steps": config.steps, "seed": config.seed}
    if config.model == "mlp":
        settings |= {"hidden": config.hidden, "features": config.features}
        model_code = _fill("model_mlp.py.tmpl", features=config.features, hidden=config.hidden, noise=models.NOISE)
    else:
        model_code = _fill("model_linear.py.tmpl", true_w=models.TRUE_W, true_b=models.TRUE_B, noise=models.NOISE)
    impl_code = _fill(f"impl_{config.impl}.py.tmpl")
    if config.impl != "pmap":
        impl_code = impl_code.rstrip() + "\n\n\n" + _fill("place_on_mesh.py.tmpl")
    return _fill(
        "training.py.tmpl",
        header=_header(f"The training lab: {config.model} trained data-parallel with {config.impl} on "
                       f"{config.devices} device(s).", settings, config.devices, "training"),
        model=config.model, global_batch=config.global_batch, steps=config.steps,
        chunk=min(chunk or config.chunk, config.steps),
        learning_rate=repr(float(config.learning_rate)), seed=config.seed, model_code=model_code.rstrip() + "\n",
        impl_code=impl_code.rstrip() + "\n",
    )


def collectives_script(op: str, devices: int, size: int, seed: int = 0) -> str:
    """The collectives lab's `op` over `devices` devices on its random data, as a script."""
    devices = script_devices(devices)
    size = collectives.check_op_inputs(op, 1, size)[1]
    if op in collectives.CHUNKED_OPS and op not in collectives.NEEDS_N_EQUAL_D and size % devices:
        raise LabInputError("size_not_divisible", "{op} cuts each device's {size} values into {devices} chunks, so "
                            "the size must be a multiple of {devices}", op=op, size=size, devices=devices)
    seed = check_seed(seed)
    expression, comment = COLLECTIVE_CODE[op]
    ring = "\nRING = [(d, (d + 1) % DEVICES) for d in range(DEVICES)]  # (source, destination) pairs\n\n" \
        if op == "ppermute" else ""
    guard = ("# Untiled psum_scatter needs SIZE == DEVICES: JAX raises its error here, as the lab showed.\n"
             if op in collectives.NEEDS_N_EQUAL_D and size != devices else "")
    return _fill("collectives.py.tmpl",
                 header=_header(f"The collectives lab: {op} over {devices} device(s).",
                                {"op": op, "devices": devices, "size": size, "seed": seed}, devices, "collectives"),
                 op=op, size=size, seed=seed, ring=ring, expression=expression, comment=comment, guard=guard)


def migration_script(devices: int, per_device: int, seed: int = 0) -> str:
    """The migration lab's one SGD step written three ways (pmap, shard_map, jit) and in NumPy, as a script."""
    devices = script_devices(devices)
    per_device = check_int("per_device", per_device, 1, migration.MAX_PER_DEVICE)
    seed = check_seed(seed)
    return _fill("migration.py.tmpl",
                 header=_header(f"The migration lab: one data-parallel step as pmap, shard_map and jit on "
                                f"{devices} device(s).", {"devices": devices, "per_device": per_device},
                                devices, "migration"),
                 per_device=per_device, features=migration.FEATURES, learning_rate=repr(migration.LEARNING_RATE),
                 seed=seed)


# --- the same settings by their link names (the CLI: `export LAB name=value …`) ---------------


def _number(kind: Callable[[str], object], name: str, raw: str) -> object:
    try:
        return kind(raw)
    except ValueError:
        raise LabInputError("not_a_number", "{name} must be a number, got {value!r}", name=name, value=raw) from None


def script_for(lab: str, settings: Mapping[str, str]) -> str:
    """The script of `lab` with settings named as in its link (devices=4 op=psum …); the rest are the lab's defaults."""
    builders = {"training": _training_from, "collectives": _collectives_from, "migration": _migration_from}
    if lab not in builders:
        raise LabInputError("unknown_lab", "unknown lab {lab!r}; choose one of {options}", lab=lab,
                            options=", ".join(LABS))
    return builders[lab](dict(settings))


def _take(settings: dict[str, str], lab: str, known: Mapping[str, tuple[Callable[[str], object], object]]) -> dict:
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise LabInputError("unknown_setting", "{lab} has no setting {names}; it has {options}", lab=lab,
                            names=", ".join(unknown), options=", ".join(known))
    return {name: _number(kind, name, settings[name]) if name in settings else default
            for name, (kind, default) in known.items()}


def _training_from(settings: dict[str, str]) -> str:
    d = train_config.TrainConfig()
    devices = _number(int, "devices", settings["devices"]) if "devices" in settings else d.devices
    s = _take(settings, "training", {
        "model": (str, d.model), "devices": (int, d.devices), "impl": (str, d.impl),
        "batch": (int, train_config.default_batch(devices)),
        "lr": (float, d.learning_rate), "steps": (int, d.steps), "hidden": (int, d.hidden),
        "features": (int, d.features), "seed": (int, d.seed), "scaling": (str, d.scaling)})
    return training_script(train_config.TrainConfig(
        model=s["model"], devices=s["devices"], impl=s["impl"], global_batch=s["batch"], learning_rate=s["lr"],
        steps=s["steps"], hidden=s["hidden"], features=s["features"], seed=s["seed"], scaling=s["scaling"]))


def _collectives_from(settings: dict[str, str]) -> str:
    s = _take(settings, "collectives", {"op": (str, "pmean"), "devices": (int, 4), "size": (int, 8),
                                        "seed": (int, 0)})
    return collectives_script(s["op"], s["devices"], s["size"], s["seed"])


def _migration_from(settings: dict[str, str]) -> str:
    s = _take(settings, "migration", {"devices": (int, 8), "per_device": (int, 2)})
    return migration_script(s["devices"], s["per_device"])
