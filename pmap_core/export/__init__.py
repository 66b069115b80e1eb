"""A lab as a standalone Python script or Jupyter notebook: only jax and numpy, no pmap_core, no Streamlit.

With the same settings the script prints the numbers the lab showed — the training lab's final
loss and parameters, the collectives lab's result on every device, the migration lab's step in
three ways, the sharded-DP lab's strategy and the 2-D mesh lab's mesh with the final loss of
`python -m pmap_core train` — so a learner can run it in Jupyter, in Colab or on a real multi-GPU
machine. The scripts are filled in from the readable templates in `templates/`, cut into notebook
cells at their `# %% key` lines (`notebook`), each cell after its text in the reader's language
(`notes`). tests/system/test_export.py runs the scripts in a fresh interpreter,
tests/system/test_export_notebooks.py the notebooks in a fresh kernel, and both compare with the CLI.

A script sets its own device count (it simulates DEVICES CPU devices, or uses a GPU or TPU machine's
own when it has that many), so its settings are checked against what a script can run, up to
`SCRIPT_MAX_DEVICES`, never against the devices of the process that writes it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from pmap_core.concepts import collectives, migration
from pmap_core.concepts import mesh_2d_view as mesh_view
from pmap_core.export.multiprocess import multiprocess_export
from pmap_core.export.notebook import check_language, notebook_json
from pmap_core.export.notes import LANGUAGES
from pmap_core.export.sharded import mesh_2d_export, sharded_dp_export
from pmap_core.export.templating import SCRIPT_MAX_DEVICES, Exported, cli_command, fill, header, script_devices, shown
from pmap_core.train import config as train_config
from pmap_core.train import models
from pmap_core.train import plan as train_plan
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError, check_int, check_seed

LABS = ("training", "collectives", "migration", "sharded_dp", "mesh_2d", "multiprocess")
FORMATS = ("py", "ipynb")  # a script, or the same code as a notebook with the lab's texts

__all__ = [
    "FORMATS",
    "LABS",
    "LANGUAGES",
    "SCRIPT_MAX_DEVICES",
    "Exported",
    "check_language",
    "check_training",
    "collectives_export",
    "collectives_script",
    "export_for",
    "mesh_2d_export",
    "migration_export",
    "migration_script",
    "multiprocess_export",
    "notebook_for",
    "notebook_json",
    "script_devices",
    "script_for",
    "setting_defaults",
    "sharded_dp_export",
    "training_export",
    "training_script",
]

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


def check_training(config: train_config.TrainConfig) -> train_config.TrainConfig:
    """`config` checked as its script will run it: every setting as the lab checks it, the device
    count as a script's (`script_devices`), the global batch split evenly over those devices."""
    devices = script_devices(config.devices)
    config = dataclasses.replace(train_plan.validate(dataclasses.replace(config, devices=1)), devices=devices)
    if config.impl not in IMPLEMENTATIONS:
        raise LabInputError("unknown_impl", "impl must be one of {options}, got {value!r}",
                            options=", ".join(IMPLEMENTATIONS), value=config.impl)
    if config.sharded_state:
        raise LabInputError("export_sharded_state", "the training lab's export covers the replicated SGD step "
                            "(optimizer sgd, strategy dp, no accumulation, float32 gradients); export the "
                            "sharded_dp lab for Adam, the ZeRO strategies, accumulation, bfloat16 gradients or "
                            "mixed precision")
    if config.global_batch % devices:
        raise LabInputError("batch_not_divisible", "global_batch {batch} does not split evenly over {devices} "
                            "devices; try {suggestion}", batch=config.global_batch, devices=devices,
                            suggestion=max(devices, config.global_batch // devices * devices))
    return config


def training_export(config: train_config.TrainConfig, chunk: int | None = None) -> Exported:
    """The training lab's run of `config` (replicated SGD in pmap, shard_map or jit), as a script
    that runs `chunk` steps per compiled call (default: the config's)."""
    config = check_training(config)
    settings = {"model": config.model, "devices": config.devices, "impl": config.impl, "batch": config.global_batch,
                "lr": config.learning_rate, "steps": config.steps, "seed": config.seed}
    if config.model == "mlp":
        settings |= {"hidden": config.hidden, "features": config.features}
        model_code = fill("model_mlp.py.tmpl", features=config.features, hidden=config.hidden, noise=models.NOISE)
    else:
        model_code = fill("model_linear.py.tmpl", true_w=models.TRUE_W, true_b=models.TRUE_B, noise=models.NOISE)
    impl_code = fill(f"impl_{config.impl}.py.tmpl")
    if config.impl != "pmap":
        impl_code = impl_code.rstrip() + "\n\n\n" + fill("place_on_mesh.py.tmpl")
    chunk = min(chunk or config.chunk, config.steps)
    script = fill(
        "training.py.tmpl",
        header=header(f"The training lab: {config.model} trained data-parallel with {config.impl} on "
                      f"{config.devices} device(s).", settings, config.devices, "training"),
        model=config.model, impl=config.impl, global_batch=config.global_batch, steps=config.steps, chunk=chunk,
        learning_rate=repr(float(config.learning_rate)), seed=config.seed, model_code=model_code.rstrip() + "\n",
        impl_code=impl_code.rstrip() + "\n",
    )
    options = {"model": config.model, "devices": config.devices, "impl": config.impl,
               "global-batch": config.global_batch, "learning-rate": config.learning_rate, "steps": config.steps,
               "seed": config.seed}
    if config.model == "mlp":
        options |= {"hidden": config.hidden, "features": config.features}
    return Exported("training", script, {**settings, "settings": shown(settings), "chunk": chunk,
                                         "per_device": config.per_device_batch,
                                         "command": cli_command("train", options)})


def training_script(config: train_config.TrainConfig, chunk: int | None = None) -> str:
    return training_export(config, chunk).script


def collectives_export(op: str, devices: int, size: int, seed: int = 0) -> Exported:
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
    settings = {"op": op, "devices": devices, "size": size, "seed": seed}
    script = fill("collectives.py.tmpl",
                  header=header(f"The collectives lab: {op} over {devices} device(s).", settings, devices,
                                "collectives"),
                  op=op, size=size, seed=seed, ring=ring, expression=expression, comment=comment, guard=guard)
    return Exported("collectives", script, {**settings, "settings": shown(settings)})


def collectives_script(op: str, devices: int, size: int, seed: int = 0) -> str:
    return collectives_export(op, devices, size, seed).script


def migration_export(devices: int, per_device: int, seed: int = 0) -> Exported:
    """The migration lab's one SGD step written three ways (pmap, shard_map, jit) and in NumPy, as a script."""
    devices = script_devices(devices)
    per_device = check_int("per_device", per_device, 1, migration.MAX_PER_DEVICE)
    seed = check_seed(seed)
    settings = {"devices": devices, "per_device": per_device}
    script = fill("migration.py.tmpl",
                  header=header(f"The migration lab: one data-parallel step as pmap, shard_map and jit on "
                                f"{devices} device(s).", settings, devices, "migration"),
                  per_device=per_device, features=migration.FEATURES, learning_rate=repr(migration.LEARNING_RATE),
                  seed=seed)
    return Exported("migration", script, {**settings, "settings": shown(settings), "batch": devices * per_device})


def migration_script(devices: int, per_device: int, seed: int = 0) -> str:
    return migration_export(devices, per_device, seed).script


# --- the same settings by their link names (the CLI: `export LAB name=value …`) ---------------


def _number(kind: Callable[[str], object], name: str, raw: str) -> object:
    try:
        return kind(raw)
    except ValueError:
        raise LabInputError("not_a_number", "{name} must be a number, got {value!r}", name=name, value=raw) from None


def export_for(lab: str, settings: Mapping[str, str]) -> Exported:
    """`lab` with settings named as in its link (devices=4 op=psum …); the rest are the lab's defaults."""
    if lab not in _LABS:
        raise LabInputError("unknown_lab", "unknown lab {lab!r}; choose one of {options}", lab=lab,
                            options=", ".join(LABS))
    known, build = _LABS[lab]
    given = dict(settings)
    return build(_take(given, lab, known(given)))


def setting_defaults(lab: str) -> dict[str, object]:
    """Every setting of `lab` by its link name, with its value when none is given (what `export --help` lists)."""
    known, _ = _LABS[lab]
    return {name: default for name, (_, default) in known({}).items()}


def script_for(lab: str, settings: Mapping[str, str]) -> str:
    """The script of `lab` with settings named as in its link."""
    return export_for(lab, settings).script


def notebook_for(lab: str, settings: Mapping[str, str], lang: str = "en") -> str:
    """The notebook of `lab` with settings named as in its link, its texts in `lang`."""
    check_language(lang)
    return notebook_json(export_for(lab, settings), lang)


def _take(settings: dict[str, str], lab: str, known: Mapping[str, tuple[Callable[[str], object], object]]) -> dict:
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise LabInputError("unknown_setting", "{lab} has no setting {names}; it has {options}", lab=lab,
                            names=", ".join(unknown), options=", ".join(known))
    return {name: _number(kind, name, settings[name]) if name in settings else default
            for name, (kind, default) in known.items()}


def _training_settings(given: dict[str, str]) -> dict:
    d = train_config.TrainConfig()
    devices = _number(int, "devices", given["devices"]) if "devices" in given else d.devices
    return {"model": (str, d.model), "devices": (int, d.devices), "impl": (str, d.impl),
            "batch": (int, train_config.default_batch(devices)),
            "lr": (float, None), "steps": (int, d.steps), "hidden": (int, d.hidden),  # None: the width's default η
            "features": (int, d.features), "seed": (int, d.seed), "scaling": (str, d.scaling)}


def _training_from(s: dict) -> Exported:
    return training_export(train_config.TrainConfig(
        model=s["model"], devices=s["devices"], impl=s["impl"], global_batch=s["batch"], learning_rate=s["lr"],
        steps=s["steps"], hidden=s["hidden"], features=s["features"], seed=s["seed"], scaling=s["scaling"]))


def _collectives_settings(given: dict[str, str]) -> dict:
    return {"op": (str, "pmean"), "devices": (int, 4), "size": (int, 8), "seed": (int, 0)}


def _collectives_from(s: dict) -> Exported:
    return collectives_export(s["op"], s["devices"], s["size"], s["seed"])


def _migration_settings(given: dict[str, str]) -> dict:
    return {"devices": (int, 8), "per_device": (int, 2)}


def _migration_from(s: dict) -> Exported:
    return migration_export(s["devices"], s["per_device"])


def _sharded_dp_settings(given: dict[str, str]) -> dict:
    """The sharded-DP lab's settings, with its page's defaults."""
    devices = _number(int, "devices", given["devices"]) if "devices" in given else 8
    accum = _number(int, "accum", given["accum"]) if "accum" in given else 1
    return {"strategy": (str, "zero3"), "optimizer": (str, "adam"), "precision": (str, "float32"),
            "grad_dtype": (str, "float32"), "devices": (int, 8), "accum": (int, 1),
            "batch": (int, train_config.default_batch(devices, accum)),
            "steps": (int, 100), "hidden": (int, 64), "features": (int, 16), "lr": (float, 0.01), "seed": (int, 0)}


def _sharded_dp_from(s: dict) -> Exported:
    return sharded_dp_export(train_config.TrainConfig(
        model="mlp", impl="jit", devices=s["devices"], global_batch=s["batch"], learning_rate=s["lr"],
        steps=s["steps"], hidden=s["hidden"], features=s["features"], seed=s["seed"], optimizer=s["optimizer"],
        strategy=s["strategy"], accum_steps=s["accum"], grad_dtype=s["grad_dtype"], precision=s["precision"]))


def _mesh_2d_settings(given: dict[str, str]) -> dict:
    """The 2-D mesh lab's settings (mesh=4x2: data x model), with its page's defaults."""
    devices = _number(int, "devices", given["devices"]) if "devices" in given else 8
    if "mesh" in given:
        data, model = mesh_view.parse_shape(given["mesh"])
        if "devices" in given and devices != data * model:
            raise LabInputError("mesh_devices", "the mesh data={data},model={model} uses {mesh} devices, not {devices}",
                                data=data, model=model, mesh=data * model, devices=devices)
        devices = data * model
    devices = script_devices(devices)
    hidden = _number(int, "hidden", given["hidden"]) if "hidden" in given else mesh_view.round_up(
        mesh_view.HIDDEN, devices)
    if "mesh" not in given:
        shapes = [(devices // m, m) for m in range(1, devices + 1) if devices % m == 0 and hidden % m == 0]
        data, model = mesh_view.default_shape(shapes) if shapes else (devices, 1)
    return {"mesh": (str, f"{data}x{model}"), "devices": (int, devices), "strategy": (str, "dp"),
            "hidden": (int, hidden), "features": (int, 8), "batch": (int, mesh_view.round_up(mesh_view.BATCH, devices)),
            "steps": (int, 100), "lr": (float, 0.1), "seed": (int, 0)}


def _mesh_2d_from(s: dict) -> Exported:
    data, model = mesh_view.parse_shape(s["mesh"])
    return mesh_2d_export(train_config.TrainConfig(
        model="mlp", impl="tensor", devices=data * model, mesh_model=model, global_batch=s["batch"],
        learning_rate=s["lr"], steps=s["steps"], hidden=s["hidden"], features=s["features"], seed=s["seed"],
        strategy=s["strategy"]))


def _multiprocess_settings(given: dict[str, str]) -> dict:
    """The multi-process lab's settings, with its page's defaults."""
    return {"processes": (int, 2), "per_process": (int, 2), "impl": (str, "jit"), "batch": (int, 16),
            "size": (int, 64), "steps": (int, 8), "lr": (float, 0.3), "seed": (int, 0)}


def _multiprocess_from(s: dict) -> Exported:
    return multiprocess_export(s["processes"], s["per_process"], s["impl"], s["batch"], s["size"], s["steps"],
                               s["lr"], s["seed"])


# Each lab: its settings by link name (type, default; a default may follow from the settings given), and what
# builds its export from them.
_LABS: dict[str, tuple[Callable[[dict[str, str]], dict], Callable[[dict], Exported]]] = {
    "training": (_training_settings, _training_from), "collectives": (_collectives_settings, _collectives_from),
    "migration": (_migration_settings, _migration_from), "sharded_dp": (_sharded_dp_settings, _sharded_dp_from),
    "mesh_2d": (_mesh_2d_settings, _mesh_2d_from), "multiprocess": (_multiprocess_settings, _multiprocess_from),
}
