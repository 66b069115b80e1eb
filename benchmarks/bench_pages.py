"""Page speed, measured through Streamlit's AppTest: first visit, then a re-render per changed widget.

    .venv/bin/python -m benchmarks.bench_pages                 # every lab in labs.registry.LABS
    .venv/bin/python -m benchmarks.bench_pages basics collectives --json

For each lab: the time of its first visit in this process (its JAX functions compile
then; the app's imports, Altair's and pandas' included, are paid once beforehand and
reported apart), and for each
of its own widgets (slider, number box, select box, toggle) the time of the re-render
after moving it one step, and after moving it back (a repeat of settings seen before).
Radio buttons are left alone: AppTest cannot pick their raw options by position.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from streamlit.testing.v1 import AppTest

import pmap_core  # noqa: F401 - fixes the device runtime before JAX starts
from labs.registry import LABS

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
APP = os.path.join(ROOT, "streamlit_app.py")


def open_page(script: str | None, query: dict[str, str] | None = None) -> AppTest:
    """An app on `script` with the link's `query`, ready for its first (timed) run."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["lang"] = "en"
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if script is not None:
        # st.navigation registers the pages with their url_path on a first run;
        # only then does switching find pages whose url_path is not their filename.
        at.run()
        at.switch_page(f"labs/{script}.py")
    return at


def timed_run(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return elapsed


def neighbour(widget) -> tuple[str, object, object] | None:
    """(kind, new value, old value) one step away from the widget's value, or None if it cannot move."""
    kind = type(widget).__name__
    if kind in ("Slider", "NumberInput"):
        value, step = widget.value, widget.step or 1
        low, high = widget.min, widget.max
        new = value + step if high is None or value + step <= high else value - step
        new = type(value)(new)
        return None if low is not None and new < low else (kind, new, value)
    if kind == "Selectbox" and len(widget.options) > 1:
        return kind, (widget.index + 1) % len(widget.options), widget.index
    if kind in ("Toggle", "Checkbox"):
        return kind, not widget.value, widget.value
    return None


def move(at: AppTest, key: str, kind: str, value: object) -> None:
    widget = at.get(kind[0].lower() + "".join("_" + c.lower() if c.isupper() else c for c in kind[1:]))
    target = next(w for w in widget if getattr(w, "key", None) == key)
    if kind == "Selectbox":
        target.select_index(value)
    else:
        target.set_value(value)


def page_widgets(at: AppTest, script: str) -> list[tuple[str, str, object, object]]:
    found = []
    for kind in ("slider", "number_input", "selectbox", "toggle", "checkbox"):
        for widget in at.main.get(kind):
            key = getattr(widget, "key", None) or ""
            step = neighbour(widget) if key.startswith(f"{script}.") else None
            if step is not None:
                found.append((key, *step))
    return found


def bench_lab(script: str, query: dict[str, str] | None = None) -> dict:
    at = open_page(script, query)
    result = {"lab": script, "first_visit_s": timed_run(at), "widgets": []}
    for key, kind, new, old in page_widgets(at, script):
        move(at, key, kind, new)
        changed = timed_run(at)
        move(at, key, kind, old)
        back = timed_run(at)
        result["widgets"].append({"widget": key, "new_value": new, "change_s": changed, "back_s": back})
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="lab scripts (default: every lab)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--query", action="append", default=[], metavar="NAME=VALUE",
                        help="a link setting for every lab, e.g. --query policy=pad (repeatable)")
    args = parser.parse_args(argv)
    scripts = args.labs or [lab.script for lab in LABS]

    warmup = timed_run(open_page(None))  # imports and the home page, paid once per process
    start = time.perf_counter()
    import labs.charts  # noqa: F401 - Altair and pandas: paid once, by whichever lab draws first
    chart_imports = time.perf_counter() - start
    query = dict(item.split("=", 1) for item in args.query)
    results = [bench_lab(script, query) for script in scripts]
    if args.json:
        print(json.dumps({"app_startup_s": warmup, "chart_imports_s": chart_imports, "labs": results}, default=str))
        return 0
    print(f"app start-up (imports + home page): {warmup:.2f} s, then Altair + pandas imports: "
          f"{chart_imports:.2f} s   cores: {len(os.sched_getaffinity(0))}, load: {os.getloadavg()[0]:.1f}")
    for result in results:
        print(f"\n{result['lab']}: first visit {result['first_visit_s']:.2f} s")
        for w in result["widgets"]:
            print(f"  {w['widget']:<36} -> {w['new_value']!s:<8} change {w['change_s']:.3f} s   "
                  f"back {w['back_s']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
