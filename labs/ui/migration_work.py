"""The migration page's programs, off the page's run (`labs.ui.background`): each section's job, (key, work, args),
defined once, so that the page and the server's warm-up (`labs.ui.shared_cache`) mean the same job. The warm-up
computes the page's default settings before a visitor opens it: its sections then come in the page's first run, and
the browser draws the page once, not once with ⏳ notes and again when the compiles are done."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from labs.ui import background
from pmap_core.concepts import migration, migration_steps

Job = tuple[Hashable, Callable[..., Any], tuple]
DEFAULT_PER_DEVICE, DEFAULT_MODEL = 2, "mlp"


def ways_job(devices: int, per_device: int) -> Job:
    return ("migration.ways", devices, per_device), migration.run_three_ways, (devices, per_device)


def hlo_job(devices: int, model: str) -> Job:
    return ("migration.hlo", devices, model), migration.inspect_hlo, (devices, model)


def step_job(devices: int, name: str) -> Job:
    return ("migration.step", devices, name), migration_steps.run_step, (name, devices)


def default_jobs(devices: int) -> list[Job]:
    """The page's sections at its default settings on `devices`."""
    return [ways_job(devices, DEFAULT_PER_DEVICE), hlo_job(devices, DEFAULT_MODEL),
            *(step_job(devices, name) for name in migration_steps.STEP_NAMES)]


def warm(job: Job) -> None:
    """Compute `job` in this thread (the warm-up's) and keep it for the visitors who open the page; one a visitor
    has asked for already is left to that visitor's job."""
    key, work, args = job
    if background.jobs().get(key) is None:
        background.jobs().keep(key, work(*args))
