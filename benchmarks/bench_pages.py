"""Page speed, in real Chromium and through Streamlit's AppTest: first visit, then a re-render per changed widget.

    .venv/bin/python -m benchmarks.bench_pages                 # every page, browser then AppTest
    .venv/bin/python -m benchmarks.bench_pages basics collectives --json
    .venv/bin/python -m benchmarks.bench_pages --only browser  # or --only apptest, --only ratio, --only change

Ratio (how far a lab page is from Streamlit itself): one Chromium opens each page in a new tab of one browser that
has loaded the app before, each time right after a bare Streamlit page of the same kinds of elements (BARE_PAGE, on
a server of its own) nothing computed, until the page is connected, its script has finished and every element is
drawn. Each pair opens once the lab's server is idle: work a page left to the background (the Plan page's ranking
of 16,384 devices) is not charged to the page after it. Each page's time divided by the bare page's median is its
ratio; beside it the parts of its time: until the socket opened, the run as the page waited for it, from the
connection to the last delta, the drawing after the run, the messages and their bytes, the elements drawn (main
area and sidebar), charts, tables, components (iframes), fonts and scripts the page loaded.

Browser: a fresh `streamlit run` serves the home page once, then each page opens in its own
browser context (its own session, an empty HTTP cache): the time from the request until the
script has finished and every element is drawn, then the time from moving the page's first
slider (or number box) one step until its rerun has finished. Then the same again ("cached"),
each page in a new tab of the browser that opened the home page: a new session whose browser
has the app's code in its cache, as a student's has after the first page. A summary table gives, per page, both browser
figures beside AppTest's first visit and slowest widget change.

Change (`--only change`, AppTest): for each page, what a widget change costs on a warm page on the server. The page
is opened once and its background work (`labs.ui.background`) waited for, as a first visitor leaves the server;
then a new session opens it (a warm first run) and its first own widget (slider, number box, select box, toggle)
moves one step: the seconds of that rerun, as the page's run took them (work it leaves to the background not
counted, the ⏳ note it shows instead counted; that work is done before the next page is timed).

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
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from streamlit.testing.v1 import AppTest

import pmap_core  # noqa: F401 - fixes the device runtime before JAX starts
from harness import browser as bs
from harness.app_pages import open_page, settled, timed_run
from harness.processes import free_port, start_python, wait_until_answering, wait_until_idle
from labs.registry import HOME, LABS

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def neighbour(widget) -> tuple[str, object, object] | None:
    """(kind, new value, old value) one step away from the widget's value, or None if it cannot move."""
    kind = type(widget).__name__
    if kind in ("Slider", "NumberInput"):
        value, step = widget.value, widget.step or 1
        if value is None:  # an empty box (a guess not given yet): no step from nothing
            return None
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


def widget_change(script: str, query: dict[str, str] | None = None) -> dict:
    """One widget change on a warm page: the page's first own widget moved one step after a warm first run."""
    settled(open_page(script, query))  # a first visit, its background work done before the warm page is timed
    at = open_page(script, query)
    warm_first = timed_run(at)
    widgets = page_widgets(at, script)
    result = {"lab": script, "warm_first_s": warm_first, "widget": None, "change_s": None}
    if widgets:
        key, kind, new, _ = widgets[0]
        move(at, key, kind, new)
        result.update(widget=f"{key} -> {new}", change_s=timed_run(at))
        settled(at)  # what the change left to the background, done before the next page is timed
    return result


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

# Walks a ForwardMsg's top-level protobuf fields, calling visit(field, wire type, value: a varint's value, else
# null) until visit returns something other than undefined, which it returns (undefined at the end, or at a wire
# type it cannot step over). Defined once, whichever recorder a page is given first.
FORWARD_MSG_FIELDS = """
window.__forwardMsgField = window.__forwardMsgField || ((bytes, visit) => {
  let i = 0;
  const varint = () => {
    let value = 0, shift = 0, byte;
    do { byte = bytes[i++]; value += (byte & 127) * 2 ** shift; shift += 7; } while (byte & 128);
    return value;
  };
  while (i < bytes.length) {
    const key = varint(), field = Math.floor(key / 8), wire = key % 8;
    const value = wire === 0 ? varint() : null;
    const seen = visit(field, wire, value);
    if (seen !== undefined) return seen;
    if (wire === 2) { const length = varint(); i += length; }  // not i += varint(): i is read first
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire !== 0) return undefined;
  }
  return undefined;
});
"""

# Records, in the page's own clock, every change of the app's script state: a rerun's end is
# read from the record, so a rerun that ends before Python looks is still timed exactly. A busy
# page may deliver a rerun's start and end in one callback: the records' old values keep both.
# A busy page may also apply them in one render, so that the state never changes in the page:
# `__mainChanged` keeps the time of the main area's last change, for a fallback (load_sessions).
STATE_RECORDER = FORWARD_MSG_FIELDS + """
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
const runFinished = (bytes) => window.__forwardMsgField(bytes, (field, wire, value) =>
  (wire === 0 && field === 6) ? value === 0 : undefined) === true;
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


# --- each page beside a bare page ----------------------------------------------

# The kinds of elements a lab page shows (a title, a formula, a slider, a select box, a table, an Altair
# chart, a paragraph), nothing computed: what Streamlit itself costs to open such a page.
BARE_PAGE = '''
import altair as alt
import pandas as pd
import streamlit as st

st.set_page_config(page_title="bare", layout="wide")
st.title("A bare page")
st.latex(r"\\bar g = \\frac{1}{D} \\sum_d g_d")
devices = st.slider("Devices", 1, 8, 4)
op = st.selectbox("Collective", ["psum", "pmean", "all_gather"])
frame = pd.DataFrame({"device": range(devices), "value": [float(d) for d in range(devices)]})
st.dataframe(frame, hide_index=True)
st.altair_chart(alt.Chart(frame).mark_bar().encode(x="device:O", y="value:Q"))
st.markdown(f"Each of the {devices} devices holds one value; `{op}` combines them.")
'''

# Beside STATE_RECORDER: when the socket opened, when the page sent its first message (its request to run),
# and each message the server sent (its time, bytes, and whether it is a delta: ForwardMsg field 5).
PARTS_RECORDER = FORWARD_MSG_FIELDS + """
window.__socket = {opened: null, sent: null, messages: []};
const isDelta = (bytes) => window.__forwardMsgField(bytes, (field) => (field === 5 ? true : undefined)) === true;
const SocketBeforeParts = window.WebSocket;
window.WebSocket = class extends SocketBeforeParts {
  constructor(...args) {
    super(...args);
    this.addEventListener('open', () => { window.__socket.opened = performance.now(); });
    this.addEventListener('message', (event) => {
      if (!(event.data instanceof ArrayBuffer)) return;
      const bytes = new Uint8Array(event.data);
      window.__socket.messages.push({t: performance.now(), bytes: bytes.length, delta: isDelta(bytes)});
    });
  }
  send(data) {
    if (window.__socket.sent === null) window.__socket.sent = performance.now();
    return super.send(data);
  }
};
"""

# What the page drew and loaded, read once it has settled.
PAGE_PARTS = """() => {
  const resources = performance.getEntriesByType('resource');
  const fonts = resources.filter(r => /\\.(woff2?|ttf|otf)(\\?|$)/.test(r.name));
  const scripts = resources.filter(r => /\\.js(\\?|$)/.test(r.name));
  const count = (selector) => document.querySelectorAll(selector).length;
  return {
    elements: count('[data-testid="stMain"] [data-testid="stElementContainer"]'),
    sidebar_elements: count('[data-testid="stSidebar"] [data-testid="stElementContainer"]'),
    charts: count('[data-testid="stVegaLiteChart"]'),
    tables: count('[data-testid="stDataFrame"], [data-testid="stTable"]'),
    components: count('iframe'),
    dom_nodes: count('*'),
    fonts: fonts.length,
    font_kib: fonts.reduce((sum, r) => sum + (r.decodedBodySize || 0), 0) / 1024,
    scripts: scripts.length,
    script_kib: scripts.reduce((sum, r) => sum + (r.decodedBodySize || 0), 0) / 1024,
  };
}"""
PARTS = ("connected_s", "run_s", "last_delta_s", "drawing_s", "messages", "deltas", "kib", "elements",
         "sidebar_elements", "charts", "tables", "components", "fonts", "scripts")


def timed_open(context, url: str, timeout_s: float) -> dict:
    """Open `url` in a new tab of `context`: the seconds until its first run has finished and every element
    is drawn (`open_s`), and the parts of that time, in the page's own clock."""
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="commit")
        end = rerun_end(page, 0, timeout_s)
        if end is None:
            raise RuntimeError(f"{url}: the first run did not finish within {timeout_s:.0f} s")
        page.wait_for_function(SETTLED, timeout=timeout_s * 1000, polling="raf")
        total = time.perf_counter() - start
        socket, drawn, settled = page.evaluate(f"[window.__socket, ({PAGE_PARTS})(), performance.now()]")
        opened = socket["opened"] or 0.0
        deltas = [m["t"] for m in socket["messages"] if m["delta"]]
        return {
            "open_s": total,
            "connected_s": opened / 1000,  # from the navigation until the socket opened: HTML and scripts
            "run_s": (end - (socket["sent"] or opened)) / 1000,  # from its request until its run finished
            "last_delta_s": (max(deltas, default=opened) - opened) / 1000,  # from the connection
            "drawing_s": max(0.0, settled - end) / 1000,  # from the run's end until every element is drawn
            "messages": len(socket["messages"]), "deltas": len(deltas),
            "kib": sum(m["bytes"] for m in socket["messages"]) / 1024,
            "exceptions": len(bs.exception_texts(page)), **drawn,
        }
    finally:
        page.close()


def bare_server(folder: pathlib.Path) -> tuple[str, subprocess.Popen]:
    """`streamlit run` of BARE_PAGE on a free port of 127.0.0.1, with the app server's options; its URL."""
    script = folder / "bare_page.py"
    script.write_text(BARE_PAGE)
    port = free_port()
    log = folder / "bare.log"
    with open(log, "wb") as out:
        process = start_python(["-m", "streamlit", "run", str(script), "--server.port", str(port),
                                "--server.address", "127.0.0.1", "--server.headless", "true",
                                "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                               cwd=folder, stdout=out, stderr=subprocess.STDOUT, text=False)
    url = f"http://127.0.0.1:{port}"
    wait_until_answering(url + bs.HEALTH_PATH, process, lambda: log.read_text(errors="replace"))
    return url, process


def ratio_figures(scripts: list[str], timeout_s: float = 180) -> dict:
    """Each page's first open beside the bare page's, in one browser that has loaded both apps before: the bare
    page opens right before each lab page, once the lab's server is idle, and each page's ratio is its time over the
    bare page's median."""
    pages = [lab for lab in [HOME, *LABS] if lab.script in scripts]
    with tempfile.TemporaryDirectory(prefix="pmap-lab-bare-") as folder, bs.server_and_browser() as (server, browser):
        bare_url, bare = bare_server(pathlib.Path(folder))
        try:
            context = recording_context(browser)
            context.add_init_script(PARTS_RECORDER)
            for url in (bare_url, bs.page_url(server, HOME.url_path, lang="en")):  # both apps' scripts cached
                timed_open(context, url, timeout_s)
            bares, labs = [], []
            for lab in pages:
                wait_until_idle(server.process.pid)  # the previous page's background work is not this page's
                bares.append(timed_open(context, bare_url, timeout_s))
                labs.append({"lab": lab.script,
                             **timed_open(context, bs.page_url(server, lab.url_path, lang="en"), timeout_s)})
            context.close()
        finally:
            bare.terminate()
            bare.wait(timeout=15)
    bare_s = statistics.median(b["open_s"] for b in bares)
    for lab in labs:
        lab["ratio"] = lab["open_s"] / bare_s
    ratios = [lab["ratio"] for lab in labs]
    return {"bare_open_s": [b["open_s"] for b in bares], "bare_median_s": bare_s, "bare_parts": bares[-1],
            "labs": labs, "median_ratio": statistics.median(ratios), "worst_ratio": max(ratios)}


def print_ratios(ratio: dict) -> None:
    opens = ratio["bare_open_s"]
    print(f"bare page: median {ratio['bare_median_s']:.2f} s (min {min(opens):.2f}, max {max(opens):.2f}, "
          f"{len(opens)} opens); median page {ratio['median_ratio']:.2f}×, worst {ratio['worst_ratio']:.2f}×")
    header = "".join(f"{name:>{max(len(name), 6) + 1}}" for name in PARTS)
    print(f"{'page':<20} {'open s':>7} {'ratio':>6}{header}")
    rows = [{"lab": "(bare page)", "open_s": ratio["bare_median_s"], "ratio": 1.0, **ratio["bare_parts"]},
            *sorted(ratio["labs"], key=lambda lab: -lab["ratio"])]
    for row in rows:
        cells = "".join(f"{row[name]:>{max(len(name), 6) + 1}.{2 if name.endswith('_s') else 0}f}" for name in PARTS)
        print(f"{row['lab']:<20} {row['open_s']:>7.2f} {row['ratio']:>6.2f}{cells}")
    shown = [lab["lab"] for lab in ratio["labs"] if lab["exceptions"]]
    if shown:
        print(f"pages that showed an exception: {', '.join(shown)}")


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
    parser.add_argument("--only", choices=("ratio", "browser", "apptest", "change"),
                        help="one of the measurements (change: a widget change on a warm page, not run otherwise)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--query", action="append", default=[], metavar="NAME=VALUE",
                        help="a link setting for every lab in AppTest, e.g. --query policy=pad (repeatable)")
    args = parser.parse_args(argv)
    scripts = args.labs or [HOME.script, *(lab.script for lab in LABS)]
    load_before = os.getloadavg()

    ratio = ratio_figures(scripts) if args.only in (None, "ratio") else None
    browser = browser_figures(scripts) if args.only in (None, "browser") else None
    apptest: list[dict] = []
    warmup = chart_imports = None
    if args.only in (None, "apptest"):
        warmup = timed_run(open_page(None))  # imports and the home page, paid once per process
        start = time.perf_counter()
        import labs.ui.charts  # noqa: F401 - Altair and pandas: paid once, by whichever lab draws first
        chart_imports = time.perf_counter() - start
        query = dict(item.split("=", 1) for item in args.query)
        apptest = [bench_lab(script, query) for script in scripts if script != HOME.script]
    changes = []
    if args.only == "change":
        query = dict(item.split("=", 1) for item in args.query)
        changes = [widget_change(script, query) for script in scripts if script != HOME.script]
    rows = summary(browser, apptest)
    load = {"before": load_before, "after": os.getloadavg(), "cores": len(os.sched_getaffinity(0))}
    if args.json:
        print(json.dumps({"load": load, "ratio": ratio, "browser": browser, "changes": changes, "app_startup_s": warmup,
                          "chart_imports_s": chart_imports, "apptest": apptest, "summary": rows}, default=str))
        return 0
    print(f"cores: {load['cores']}, load average (1/5/15 min) before: "
          f"{' '.join(f'{x:.2f}' for x in load['before'])}, after: {' '.join(f'{x:.2f}' for x in load['after'])}")
    if ratio:
        print_ratios(ratio)
    if changes:
        print(f"{'page':<20} {'warm first s':>12} {'change s':>9}  widget")
        for change in sorted(changes, key=lambda c: -(c["change_s"] or 0)):
            print(f"{change['lab']:<20} {change['warm_first_s']:>12.3f} {figure(change['change_s']):>9}  "
                  f"{change['widget'] or '-'}")
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
    if not rows:
        return 0
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
