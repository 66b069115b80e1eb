"""The 2-D mesh page's programs, off the page's run (`labs.ui.background`): the chosen shape's compiled program and
the sharding-in-types examples, each job defined once for the page and the server's warm-up (`labs.ui.shared_cache`),
with the settings the page starts from. The warm-up computes them at those settings before a visitor opens the page,
so the browser draws it once, not once with ⏳ notes and again when the compiles are done."""

from __future__ import annotations

from labs.ui.background import Task
from pmap_core.concepts import mesh_2d, sharding_in_types
from pmap_core.concepts import mesh_2d_view as view
from pmap_core.train.config import TrainConfig

DEFAULT_MODEL, DEFAULT_FEATURES, DEFAULT_STEPS, DEFAULT_LEARNING_RATE, DEFAULT_ACCUM = "mlp", 8, 100, 0.1, 4
CHUNK = TrainConfig().chunk


def base_config(model: str, devices: int, batch: int, learning_rate: float, steps: int, hidden: int, features: int,
                sizes: dict) -> TrainConfig:
    """The page's settings as a run, before a mesh shape is chosen (`sizes`: the transformer's own widths)."""
    return TrainConfig(model=model, devices=devices, global_batch=batch, learning_rate=learning_rate, steps=steps,
                       hidden=hidden, features=features, chunk=min(CHUNK, steps), **sizes)


def default_hidden(devices: int) -> int:
    return view.round_up(view.HIDDEN, devices)  # every model axis of D divides it


def default_batch(devices: int) -> int:
    return view.round_up(view.BATCH, devices)


def default_config(devices: int) -> TrainConfig:
    """The run the page starts from on `devices`: the MLP on its default shape."""
    base = base_config(DEFAULT_MODEL, devices, default_batch(devices), DEFAULT_LEARNING_RATE, DEFAULT_STEPS,
                       default_hidden(devices), DEFAULT_FEATURES, {})
    shapes = mesh_2d.mesh_shapes(devices, mesh_2d.split_size(base))
    return view.tensor_config(base, *view.default_shape(shapes))


def sharding_in_types_examples(devices: int, k: int) -> tuple:
    return (sharding_in_types.ambiguous_dot(devices), sharding_in_types.axes_demo(devices),
            sharding_in_types.reduced_accumulation(devices, k))


def program_task(config: TrainConfig) -> Task:
    return ("mesh_2d.program", config), view.program_view, (config,)


def types_task(devices: int, k: int) -> Task:
    return ("mesh_2d.types", devices, k), sharding_in_types_examples, (devices, k)


def default_tasks(devices: int) -> list[Task]:
    return [program_task(default_config(devices)), types_task(devices, DEFAULT_ACCUM)]
