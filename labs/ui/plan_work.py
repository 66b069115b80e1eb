"""The Plan page's planning, off the page's own run (`labs.ui.background`): the ranking of a setting (a published
model on 16,384 devices compares hundreds of layouts, each with every variant: seconds of pure Python) and the
published runs' predictions. Each is planned once on this server and kept for every visitor asking for the same.
The server's warm-up leaves them alone: its default setting's ranking, pure Python, took the interpreter from the
first visitors of a fresh server (with it in the warm-up, the class benchmark's server CPU rose from 29 s to 46 s)."""

from __future__ import annotations

from labs.ui import background
from pmap_core.concepts.planner import search
from pmap_core.concepts.planner import view as pv

DEFAULT_MODEL, DEFAULT_HARDWARE = "llama3-405b", "h100"
PRESET_DEVICES, PRESET_SEQ_LEN, PRESET_TOKENS = 16_384, 8192, 16 * 2**20  # Llama 3 405B's run (its Table 4)
PRESET_PRECISION = "mixed"


def ranked_key(model, hardware, devices: int, work, assumptions) -> tuple:
    """The ranking's job, keyed on the model's and the hardware's values (frozen dataclasses: a preset's, or one
    typed in)."""
    return ("plan.ranked", model, hardware, devices, work, assumptions)


def ranked(model, hardware, devices: int, work, assumptions,
           wait_s: float | None = background.WAIT_S) -> search.PlanResult | None:
    """Every layout of `devices` ranked (`search.plan`), or None while it is being planned."""
    return background.result(ranked_key(model, hardware, devices, work, assumptions), search.plan, model, hardware,
                             devices, work, assumptions, wait_s=wait_s)


def published_key(assumptions) -> tuple:
    return ("plan.published", assumptions)


def published(assumptions, wait_s: float | None = background.WAIT_S) -> tuple[pv.PublishedRow, ...] | None:
    """Every published run predicted twice (`view.published_rows`), or None while it is being planned."""
    return background.result(published_key(assumptions), pv.published_rows, assumptions, wait_s=wait_s)

