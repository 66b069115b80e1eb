"""Page speed, in real Chromium and through Streamlit's AppTest: first visit, then a re-render per changed widget.

    .venv/bin/python -m benchmarks.bench_pages                 # every page, browser then AppTest
    .venv/bin/python -m benchmarks.bench_pages basics collectives --json
    .venv/bin/python -m benchmarks.bench_pages --only browser  # or --only apptest

Browser: a fresh `streamlit run` serves the home page once, then each page opens in its own
browser context (its own session, an empty HTTP cache): the time from the request until the
script has finished and every element is drawn, then the time from moving the page's first
slider (or number box) one step until its rerun has finished. Then the same again ("cached"),
each page in a new tab of the browser that opened the home page: a new session whose browser
has the app's code in its cache, as a student's has after the first page. A summary table gives, per page, both browser
figures beside AppTest's first visit and slowest widget change.

AppTest:
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
from harness import browser as bs
from labs.registry import HOME, LABS

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


# --- real Chromium ------------------------------------------------------------

# Records, in the page's own clock, every change of the app's script state: a rerun's end is
# read from the record, so a rerun that ends before Python looks is still timed exactly. A busy
# page may deliver a rerun's start and end in one callback: the records' old values keep both.
# A busy page may also apply them in one render, so that the state never changes in the page:
# `__mainChanged` keeps the time of the main area's last change, for a fallback (load_sessions).
STATE_RECORDER = """
window.__states = [];
window.__mainChanged = 0;
const pushState = (state, t) => {
  const last = window.__states[window.__states.length - 1];
  if (state && (!last || last.state !== state)) window.__states.push({state, t});
};
new MutationObserver((records) => {
  const t = performance.now();
  for (const record of records) {
    if (record.type === 'attributes' && record.target.getAttribute('data-testid') === 'stApp') {
      pushState(record.oldValue, t);
    } else if (record.type !== 'attributes') {
      const element = record.target.parentElement || record.target;
      if (element.closest && element.closest('[data-testid="stMain"]')) window.__mainChanged = t;
    }
  }
  const app = document.querySelector('[data-testid="stApp"]');
  pushState(app && app.getAttribute('data-test-script-state'), t);
}).observe(document, {subtree: true, attributes: true, childList: true, characterData: true,
                      attributeOldValue: true, attributeFilter: ['data-test-script-state']});
// A fast rerun may start and end within one React commit: the state attribute then never changes.
// So the end of each run is also read off the websocket: when the page receives the ForwardMsg whose
// field 6 (script_finished) is 0 (FINISHED_SUCCESSFULLY), after every delta of the run.
window.__finishes = [];
const runFinished = (bytes) => {
  let i = 0;
  const varint = () => {
    let value = 0, shift = 0, byte;
    do { byte = bytes[i++]; value += (byte & 127) * 2 ** shift; shift += 7; } while (byte & 128);
    return value;
  };
  while (i < bytes.length) {
    const key = varint(), field = Math.floor(key / 8), wire = key % 8;
    if (wire === 0) { const value = varint(); if (field === 6) return value === 0; }
    else if (wire === 2) { const length = varint(); i += length; }  // not i += varint(): i is read first
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else return false;
  }
  return false;
};
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (event) => {
      if (event.data instanceof ArrayBuffer && runFinished(new Uint8Array(event.data))) {
        window.__finishes.push(performance.now());  // not in an animation frame: a busy tab may get none
      }
    });
  }
};
"""
SETTLED = f"document.querySelectorAll('{bs.SKELETON}').length === 0"


def rerun_end(page, since_ms: float, timeout_s: float) -> float | None:
    """Page time (ms) at which the first run that started after `since_ms` finished; None if none did."""
    deadline = time.monotonic() + timeout_s
    while True:  # looks at least once: timeout_s=0 asks whether it has ended already
        started = False
        states, finishes = page.evaluate("[window.__states, window.__finishes]")
        for entry in states:
            if entry["t"] >= since_ms and entry["state"] == "running":
                started = True
            elif started and entry["state"] == "notRunning":
                return entry["t"]
        # A run whose start and end the state attribute never showed: its end on the websocket.
        ended = [t for t in finishes if t >= since_ms]
        if ended and (not states or states[-1]["state"] == "notRunning"):
            return ended[0]
        if time.monotonic() >= deadline:
            return None
        page.wait_for_timeout(20)


def change_first_setting(page) -> str | None:
    """Move the main area's first slider (else number box) one step; its label, or None if there is none."""
    main = page.locator(bs.MAIN)
    sliders = main.locator('[data-testid="stSlider"]')
    if sliders.count():
        thumb = sliders.first.locator('[role="slider"], input[type="range"]').first
        at_max = thumb.get_attribute("aria-valuenow") == thumb.get_attribute("aria-valuemax")
        thumb.focus()
        thumb.press("ArrowLeft" if at_max else "ArrowRight")
        return "slider " + sliders.first.locator("label").first.inner_text().strip()
    boxes = main.locator('[data-testid="stNumberInput"]')
    if boxes.count():
        step_up = boxes.first.locator('[data-testid="stNumberInputStepUp"]')
        if step_up.count() and step_up.is_enabled():
            step_up.click()
        else:
            boxes.first.locator('[data-testid="stNumberInputStepDown"]').click()
        boxes.first.locator("input").press("Enter")
        return "number " + boxes.first.locator("label").first.inner_text().strip()
    return None


def recording_context(browser):
    context = browser.new_context(viewport=bs.VIEWPORT)
    context.add_init_script(STATE_RECORDER)
    return context


def browser_lab(server, browser, lab, timeout_s: float = 120, returning=None) -> dict:
    """A first visit in a new browser context (an empty HTTP cache), or, given `returning`, in a new
    tab of that context: a new session of a browser that has loaded the app before."""
    context = returning or recording_context(browser)
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(bs.page_url(server, lab.url_path, lang="en"), wait_until="commit")
        if rerun_end(page, 0, timeout_s) is None:
            raise RuntimeError(f"{lab.script}: the first run did not finish within {timeout_s:.0f} s")
        page.wait_for_function(SETTLED, timeout=timeout_s * 1000)
        first = time.perf_counter() - start
        result = {"lab": lab.script, "first_render_s": first, "widget": None, "change_s": None,
                  "exceptions": len(bs.exception_texts(page))}
        pressed = page.evaluate("performance.now()")
        label = change_first_setting(page)
        if label is not None:
            end = rerun_end(page, pressed, timeout_s)
            result["widget"] = label
            result["change_s"] = None if end is None else (end - pressed) / 1000
        return result
    finally:
        if returning:
            page.close()
        else:
            context.close()


def browser_figures(scripts: list[str]) -> dict:
    """Per page: first render and one widget change in Chromium, on a server that has served the home page."""
    pages = [lab for lab in [HOME, *LABS] if lab.script in scripts]
    with bs.server_and_browser() as (server, browser):
        warm_start = time.perf_counter()
        returning = recording_context(browser)
        home = returning.new_page()
        bs.open_app_page(home, bs.page_url(server, HOME.url_path, lang="en"))
        home.close()
        warm = time.perf_counter() - warm_start
        labs = [browser_lab(server, browser, lab) for lab in pages]
        for page, lab in zip(pages, labs, strict=True):
            cached = browser_lab(server, browser, page, returning=returning)
            lab["cached_first_render_s"], lab["cached_change_s"] = cached["first_render_s"], cached["change_s"]
        returning.close()
        rss = bs.server_rss_bytes(server)
    return {"home_first_s": warm, "labs": labs, "server_rss_mib": rss / 2**20}


def summary(browser: dict | None, apptest: list[dict]) -> list[dict]:
    """One row per page: browser first render and change, AppTest first visit and slowest change."""
    rows: dict[str, dict] = {}
    for lab in (browser or {}).get("labs", []):
        rows[lab["lab"]] = {"page": lab["lab"], "browser_first_s": lab["first_render_s"],
                            "browser_change_s": lab["change_s"], "browser_widget": lab["widget"],
                            "cached_first_s": lab["cached_first_render_s"], "cached_change_s": lab["cached_change_s"]}
    for lab in apptest:
        changes = [w["change_s"] for w in lab["widgets"]]
        rows.setdefault(lab["lab"], {"page": lab["lab"]}).update(
            apptest_first_s=lab["first_visit_s"], apptest_slowest_change_s=max(changes, default=None))
    return list(rows.values())


def figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="page scripts (default: every page)")
    parser.add_argument("--only", choices=("browser", "apptest"), help="one of the two measurements")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--query", action="append", default=[], metavar="NAME=VALUE",
                        help="a link setting for every lab in AppTest, e.g. --query policy=pad (repeatable)")
    args = parser.parse_args(argv)
    scripts = args.labs or [HOME.script, *(lab.script for lab in LABS)]
    load_before = os.getloadavg()

    browser = browser_figures(scripts) if args.only != "apptest" else None
    apptest: list[dict] = []
    warmup = chart_imports = None
    if args.only != "browser":
        warmup = timed_run(open_page(None))  # imports and the home page, paid once per process
        start = time.perf_counter()
        import labs.ui.charts  # noqa: F401 - Altair and pandas: paid once, by whichever lab draws first
        chart_imports = time.perf_counter() - start
        query = dict(item.split("=", 1) for item in args.query)
        apptest = [bench_lab(script, query) for script in scripts if script != HOME.script]
    rows = summary(browser, apptest)
    load = {"before": load_before, "after": os.getloadavg(), "cores": len(os.sched_getaffinity(0))}
    if args.json:
        print(json.dumps({"load": load, "browser": browser, "app_startup_s": warmup,
                          "chart_imports_s": chart_imports, "apptest": apptest, "summary": rows}, default=str))
        return 0
    print(f"cores: {load['cores']}, load average (1/5/15 min) before: "
          f"{' '.join(f'{x:.2f}' for x in load['before'])}, after: {' '.join(f'{x:.2f}' for x in load['after'])}")
    if browser:
        print(f"browser: home page first served in {browser['home_first_s']:.2f} s; server RSS at the end "
              f"{browser['server_rss_mib']:.0f} MiB")
    if warmup is not None:
        print(f"AppTest: app start-up (imports + home page) {warmup:.2f} s, then Altair + pandas imports "
              f"{chart_imports:.2f} s")
    for result in apptest:
        print(f"\n{result['lab']}: AppTest first visit {result['first_visit_s']:.2f} s")
        for w in result["widgets"]:
            print(f"  {w['widget']:<36} -> {w['new_value']!s:<8} change {w['change_s']:.3f} s   "
                  f"back {w['back_s']:.3f} s")
    print(f"\n{'page':<20} {'browser first':>14} {'browser change':>15} {'cached first':>13} {'cached change':>14} "
          f"{'AppTest first':>14} {'AppTest change (slowest)':>25}  browser widget")
    for row in rows:
        print(f"{row['page']:<20} {figure(row.get('browser_first_s')):>14} {figure(row.get('browser_change_s')):>15} "
              f"{figure(row.get('cached_first_s')):>13} {figure(row.get('cached_change_s')):>14} "
              f"{figure(row.get('apptest_first_s')):>14} {figure(row.get('apptest_slowest_change_s')):>25}  "
              f"{row.get('browser_widget') or '-'}")
    exceptions = [lab["lab"] for lab in (browser or {}).get("labs", []) if lab["exceptions"]]
    if exceptions:
        print(f"pages that showed an exception: {', '.join(exceptions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
