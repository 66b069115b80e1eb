"""The migration page's programs, off the page's run (`labs.ui.background`): each section's job (`background.Task`),
defined once, so that the page and the server's warm-up (`labs.ui.shared_cache`) mean the same job. The warm-up
computes the page's default settings before a visitor opens it: its sections then come in the page's first run, and
the browser draws the page once, not once with ⏳ notes and again when the compiles are done."""

from __future__ import annotations

from labs.ui.background import Task
from pmap_core.concepts import migration, migration_steps

DEFAULT_PER_DEVICE, DEFAULT_MODEL = 2, "mlp"


def ways_task(devices: int, per_device: int) -> Task:
    return ("migration.ways", devices, per_device), migration.run_three_ways, (devices, per_device)


def hlo_task(devices: int, model: str) -> Task:
    return ("migration.hlo", devices, model), migration.inspect_hlo, (devices, model)


def step_task(devices: int, name: str) -> Task:
    return ("migration.step", devices, name), migration_steps.run_step, (name, devices)


def default_tasks(devices: int) -> list[Task]:
    """The page's sections at its default settings on `devices`."""
    return [ways_task(devices, DEFAULT_PER_DEVICE), hlo_task(devices, DEFAULT_MODEL),
            *(step_task(devices, name) for name in migration_steps.STEP_NAMES)]

