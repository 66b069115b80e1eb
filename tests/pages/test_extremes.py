"""Every widget of every lab at its extremes: no exception, ever.

Generic over `labs.registry.LABS`: for each lab, each slider and number box is
set to its minimum and its maximum, each selectbox and radio to each option,
each toggle both ways, one widget at a time; then every numeric widget at its
maximum together, the largest request a reader can make. Work over the
deployment's budget must be refused with a message (`st.error` from a
`LabInputError`), never crash the page or fail with an unexpected error.

Time is bounded per lab (PMAP_LAB_EXTREMES_BUDGET_S, default 15 s); what the
budget did not reach is reported as a warning, not silently dropped. The store holds a few
runs, so the experiments lab shows its filters (with an empty store it has no widgets).
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from labs.registry import LABS
from tests.apptest_support import open_lab

BUDGET_S = float(os.environ.get("PMAP_LAB_EXTREMES_BUDGET_S", "15"))
# The icon labs.ui.visitor.guard gives an error that is the lab's fault, not the reader's.
UNEXPECTED_ICON = "🛑"
WIDGET_KINDS = ("slider", "number_input", "selectbox", "radio", "toggle", "checkbox", "select_slider")


@dataclass(frozen=True)
class Probe:
    kind: str
    key: str
    value: Any
    label: str  # how the value reads in a report
    rank: int = 0  # what the time budget reaches first: maxima, minima, end options, toggles, the rest


def widgets_of(at: AppTest, page: str) -> list[tuple[str, Any]]:
    """(kind, widget) of every keyed widget the page drew (the router's language radio and the share panel excepted)."""
    found = []
    for kind in WIDGET_KINDS:
        for widget in getattr(at, kind):
            # The share panel under every page is one piece of code, probed in test_teacher_links.
            if widget.key and widget.key != "lang" and not widget.key.startswith("share.") and not widget.disabled:
                found.append((kind, widget))
    # The page's own widgets first: those are what a reader of this lab moves.
    found.sort(key=lambda item: not item[1].key.startswith(f"{page}."))
    return found


def extremes(kind: str, widget: Any) -> list[Probe]:
    """The values to try, most telling first: numeric maxima before minima, then options."""
    if kind in ("slider", "number_input"):
        low, high = widget.min, widget.max
        if kind == "number_input" and (low is None or high is None):
            # An unbounded number box: the page itself must refuse what is too big.
            low = -1e12 if low is None else low
            high = 1e12 if high is None else high
        if isinstance(widget.value, (list, tuple)):  # a range slider
            return [Probe(kind, widget.key, (high, high), f"({high}, {high})"),
                    Probe(kind, widget.key, (low, low), f"({low}, {low})")]
        return [Probe(kind, widget.key, high, f"{high:g}", 0), Probe(kind, widget.key, low, f"{low:g}", 1)]
    if kind in ("selectbox", "radio", "select_slider"):
        # The formatted option: the app maps it back to its value, as from a browser. The
        # last and first options are the extremes of ordered choices (sizes, …): tried first.
        options = widget.options
        return [Probe(kind, widget.key, option, repr(option), 2 if i == len(options) - 1 else 3 if i == 0 else 5)
                for i, option in enumerate(options)]
    return [Probe(kind, widget.key, value, repr(value), 4) for value in (True, False)]


def _set(at: AppTest, probe: Probe) -> None:
    widget = getattr(at, probe.kind)(key=probe.key)
    if probe.kind == "selectbox":
        widget.select_index(widget.options.index(probe.value))
    elif probe.kind == "radio" and probe.value is not None and probe.value not in widget.options:
        # an earlier probe changed the options (the transformer's mesh shapes): a browser could not send it
        raise ValueError(f"{probe.value!r} is no longer an option of {probe.key}")
    else:
        widget.set_value(probe.value)


def problems_on_page(at: AppTest) -> list[str]:
    found = [f"exception: {e.value[:400]}" for e in at.exception]
    found += [f"unexpected error: {e.value[:400]}" for e in at.error if e.icon == UNEXPECTED_ICON]
    return found


def _value_now(at: AppTest, kind: str, key: str) -> Any:
    widget = getattr(at, kind)(key=key)
    return widget.options[widget.index] if kind == "selectbox" else widget.value


# The experiments lab needs runs to show: every test here tracks into a store that has some.
pytestmark = pytest.mark.usefixtures("tracked_runs")


@pytest.mark.parametrize("lab", LABS, ids=[lab.script for lab in LABS])
def test_every_widget_at_its_extremes(lab):
    at = open_lab(lab.script)
    assert not problems_on_page(at), f"{lab.script} at default settings: {problems_on_page(at)}"
    widgets = widgets_of(at, lab.script)
    if not widgets:
        pytest.skip(f"{lab.script} has no widgets yet")

    defaults = {w.key: (kind, _value_now(at, kind, w.key)) for kind, w in widgets}
    probes = [p for kind, w in widgets for p in extremes(kind, w)]
    probes.sort(key=lambda p: p.rank)
    failures, untried = [], []
    deadline = time.monotonic() + BUDGET_S
    for probe in probes:
        if time.monotonic() > deadline:
            untried.append(f"{probe.key}={probe.label}")
            continue
        try:
            _set(at, probe)
        except (KeyError, ValueError, AppTestError) as error:  # gone, or disabled, after an earlier change
            untried.append(f"{probe.key}={probe.label} ({type(error).__name__})")
            continue
        at.run()
        failures += [f"{lab.script}: {probe.key}={probe.label} -> {p}" for p in problems_on_page(at)]
        kind, default = defaults[probe.key]
        # Back to the default, so the next probe changes one thing only.
        with contextlib.suppress(KeyError, ValueError):
            _set(at, Probe(kind, probe.key, default, "default"))

    # Everything at its maximum at once: the biggest request one reader can make.
    biggest = [p for p in probes if p.rank == 0]
    if biggest and time.monotonic() <= deadline:
        for probe in biggest:
            with contextlib.suppress(KeyError, ValueError):
                _set(at, probe)
        at.run(timeout=120)
        failures += [f"{lab.script}: all numbers at max -> {p}" for p in problems_on_page(at)]
    elif biggest:
        untried.append("all numbers at max")

    if untried:
        warnings.warn(f"{lab.script}: the {BUDGET_S:g} s budget left untried: {', '.join(untried)}", stacklevel=1)
    assert not failures, "\n".join(failures)


def test_the_probes_reach_refusals_and_would_see_a_crash():
    """The checker itself: an error box from guard's unexpected branch counts as a failure."""
    class FakeAlert:
        def __init__(self, icon: str, value: str):
            self.icon, self.value = icon, value

    class FakeAppTest:
        def __init__(self):
            self.exception = []
            self.error = [FakeAlert("⚠️", "too large"), FakeAlert(UNEXPECTED_ICON, "ZeroDivisionError")]

    assert problems_on_page(FakeAppTest()) == ["unexpected error: ZeroDivisionError"]
