"""A class on one server: concurrent browser sessions on the concept labs, two of them training.

Starts `streamlit run` on 127.0.0.1 and Debian's Chromium (loopback only), then, for each class
size N: N sessions (each a tab of its own, so its own Streamlit session) open the first concept
lab, move its first slider, go to the next lab through the sidebar and do the same, for three
concept labs; meanwhile two more sessions press *Train* on the training lab. Every
interaction is timed in the page's own clock, from the request until the script has finished.

    .venv/bin/python -m benchmarks.load_sessions                          # N = 1, 8, 16, 30
    .venv/bin/python -m benchmarks.load_sessions --class-sizes 1 4 --trainers 1
    .venv/bin/python -m benchmarks.load_sessions --soak 200               # 200 sessions, one after another
    .venv/bin/python -m benchmarks.load_sessions --sessions 8 --heavy-jobs 2   # 8 sessions on the heavy labs

Prints a table and writes it as CSV, with an Altair chart (HTML), to --out
(default benchmark-output/load/, ignored by git). Bounded: every level and the soak stop at
--max-minutes; an interaction not done within --timeout counts as an error.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import statistics
import sys
import time

from benchmarks.bench_pages import SETTLED, STATE_RECORDER, change_first_setting, rerun_end
from harness import browser as bs
from harness.protocol import percentile
from labs.registry import HOME, LABS

CONCEPT_LABS = ("basics", "device_mapping", "collectives")
TRAIN_BUTTON = ".st-key-training-train button"
QUIET_MS = 1000  # a page switch drawn without a state change counts as done after this long without a change
URL_PATHS = {lab.script: lab.url_path for lab in [HOME, *LABS]}
OUT = pathlib.Path(__file__).resolve().parent.parent / "benchmark-output" / "load"


def class_browser(browser):
    """The context a class's tabs open in. A tab has its own connection, so its own Streamlit
    session; the tabs share the cache of Streamlit's scripts, as each returning student's own
    browser has it. (A context per session parses those scripts again in every session: twice
    the browser's CPU, on the cores the server needs, in a measurement of the server.)"""
    context = browser.new_context(viewport={"width": 1200, "height": 2000})
    context.add_init_script(STATE_RECORDER)
    return context


class Session:
    """One tab on the server; its interactions' latencies (s) and its errors."""

    def __init__(self, context, server, name: str):
        self.page = context.new_page()
        self.server, self.name = server, name
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.since: float | None = None  # page time of the interaction in flight
        self.target: str | None = None  # the path a page switch in flight goes to
        self.drawn_unseen = 0  # page switches done without a script state change (drawn_without_state_change)
        self.origin: float | None = None  # performance.timeOrigin of the document it started in

    def open(self, script: str) -> None:
        self.origin, self.since = None, 0.0  # the new document's clock starts with its navigation
        self.page.goto(bs.page_url(self.server, URL_PATHS[script], lang="en"), wait_until="commit")

    def start(self, action, target: str | None = None) -> None:
        # Widgets whose code has not loaded yet show as skeletons: interact once they are drawn.
        self.page.wait_for_function(SETTLED, timeout=30_000)
        self.origin, self.since = self.page.evaluate("[performance.timeOrigin, performance.now()]")
        self.target = target
        if action(self.page) is None:
            self.errors.append(f"{self.name}: nothing to interact with")
            self.since = None

    def switch_to(self, script: str) -> None:
        """Go to another lab through the sidebar: the same session, a rerun of the new page."""
        self.start(sidebar_link(script), target=URL_PATHS[script])

    def finished(self) -> bool:
        """True once the interaction in flight has ended (its latency recorded), or if none is."""
        if self.since is None:
            return True
        origin = self.page.evaluate("performance.timeOrigin")
        # A link that loads a new document restarts the page's clock: count from the old origin.
        moved = self.origin is not None and origin != self.origin
        end = rerun_end(self.page, 0.0 if moved else self.since, timeout_s=0)
        if end is None and not moved:
            end = self.drawn_without_state_change()
        if end is None:
            return False
        start = self.since - (origin - self.origin if moved else 0.0)
        self.latencies.append((end - start) / 1000)
        self.since = None
        self.errors += [f"{self.name}: {text[:200]}" for text in bs.exception_texts(self.page)]
        return True

    def drawn_without_state_change(self) -> float | None:
        """The end of a page switch whose rerun never showed in the page's script state.

        Under load Chromium may apply a rerun's start and end in one render: the state attribute
        then never leaves notRunning, although the page has switched and drawn its lab. Such a
        switch counts as done when the path is the lab's, the main area changed after the click and
        has been quiet for a second; its end is that last change."""
        if self.target is None:
            return None
        changed, now, path, state, settled = self.page.evaluate(
            "[window.__mainChanged, performance.now(), location.pathname,"
            " document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state'),"
            f" {SETTLED}]")
        if (path.endswith("/" + self.target) and changed > self.since and state == "notRunning" and settled
                and now - changed >= QUIET_MS):
            self.drawn_unseen += 1
            return changed
        return None

    def give_up(self, what: str) -> None:
        if self.since is not None:
            # What the page shows now, for the error's cause: its script state, the state changes it
            # recorded since the interaction, and a screenshot.
            state = self.page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
            origin, now = self.page.evaluate("[performance.timeOrigin, performance.now()]")
            moved = self.origin is not None and origin != self.origin  # a new document: its clock starts anew
            since = self.since - (origin - self.origin) if moved else self.since
            changes = [(r["state"], round(r["t"] - since)) for r in self.page.evaluate("window.__states")[-4:]]
            main_changed = self.page.evaluate("window.__mainChanged") - since
            finishes = [round(t - since) for t in self.page.evaluate("window.__finishes")[-3:]]
            shot = bs.save_screenshot(self.page, f"load-{self.name}-{what.replace(' ', '-')}")
            self.errors.append(f"{self.name}: {what} not done in time (script {state}, new document: {moved}, "
                               f"{(now - since) / 1000:.0f} s since; last state changes, ms after it: {changes}; "
                               f"main area last changed {main_changed:.0f} ms after it; runs finished, ms after "
                               f"it: {finishes}; {shot})")
            self.since = None

    def close(self) -> None:
        self.page.close()  # its connection closes: the server ends the session


def sidebar_link(script: str):
    def click(page) -> str:
        page.locator(f'[data-testid="stSidebarNav"] a[href$="/{URL_PATHS[script]}"]').first.click()
        return script
    return click


def press_train(page) -> str | None:
    from playwright.sync_api import Error as PlaywrightError

    button = page.locator(TRAIN_BUTTON).first
    try:
        button.wait_for(timeout=10_000)
        button.click(no_wait_after=True, timeout=10_000)  # waits until it is enabled
    except PlaywrightError:
        return None
    return "train"


def wait_all(sessions: list[Session], server, deadline: float, what: str, rss: list[int]) -> None:
    """Poll until every session's interaction has ended, sampling the server's memory."""
    pending = list(sessions)
    print(f"  {time.strftime('%H:%M:%S')} {len(sessions)} session(s): {what}", file=sys.stderr, flush=True)
    while pending:  # looks at least once: an interaction that ended before the deadline passed is not lost
        rss.append(bs.server_rss_bytes(server))
        pending = [s for s in pending if not s.finished()]
        if not pending or time.monotonic() >= deadline:
            break
        pending[0].page.wait_for_timeout(50)
    for session in pending:
        session.give_up(what)


def class_level(server, context, students: int, trainers: int, timeout_s: float, max_s: float) -> dict:
    """N students on the concept labs and `trainers` sessions training, all at once."""
    rss = [bs.server_rss_bytes(server)]
    cpu_before = server_cpu_s(server)
    started = time.monotonic()
    deadline = started + max_s
    trainees = [Session(context, server, f"trainer{i}") for i in range(trainers)]
    students_ = [Session(context, server, f"student{i}") for i in range(students)]
    try:
        for session in trainees:
            session.open("training")
        wait_all(trainees, server, min(deadline, time.monotonic() + timeout_s), "training page", rss)
        for session in trainees:
            session.start(press_train)
        first_latency = {id(s): len(s.latencies) for s in trainees}
        for step, script in enumerate(CONCEPT_LABS):
            for session in students_:
                if step == 0:
                    session.open(script)
                else:
                    session.switch_to(script)
            wait_all(students_, server, min(deadline, time.monotonic() + timeout_s), script, rss)
            for session in students_:
                session.start(change_first_setting)
            wait_all(students_, server, min(deadline, time.monotonic() + timeout_s), f"{script} slider", rss)
        wait_all(trainees, server, deadline, "training", rss)
        training_s = [s.latencies[first_latency[id(s)]] for s in trainees if len(s.latencies) > first_latency[id(s)]]
        concept = [x for s in students_ for x in s.latencies]
        errors = [e for s in trainees + students_ for e in s.errors]
        drawn_unseen = sum(s.drawn_unseen for s in students_)
    finally:
        for session in trainees + students_:
            session.close()
    return level_figures(students, trainers, concept, training_s, errors, rss, time.monotonic() - started,
                         server_cpu_s(server) - cpu_before, drawn_unseen)


def level_figures(students: int, trainers: int, concept: list[float], training_s: list[float], errors: list[str],
                  rss: list[int], wall_s: float, cpu_s: float, drawn_unseen: int = 0) -> dict:
    """One class size's row: latencies of the concept-lab interactions, the slowest training, memory, CPU."""
    return {
        "sessions": students, "trainers": trainers, "interactions": len(concept),
        "p50_s": percentile(concept, 50), "p95_s": percentile(concept, 95), "max_s": max(concept, default=None),
        "training_s": max(training_s, default=None), "errors": len(errors), "error_examples": errors[:5],
        "peak_rss_mib": max(rss) / 2**20, "wall_s": wall_s, "server_cpu_s": cpu_s,
        "switches_without_state_change": drawn_unseen,
    }


def server_cpu_s(server) -> float:
    """CPU seconds the server process has used so far (the rest of the cores' time is the browser's)."""
    import psutil

    times = psutil.Process(server.process.pid).cpu_times()
    return times.user + times.system


def cpu_share(level: dict) -> str:
    """The server's share of the machine's CPU time during the level: the browser has the rest."""
    return f"{level['server_cpu_s'] / (level['wall_s'] * len(os.sched_getaffinity(0))):.0%}"


def per_added_session(levels: list[dict]) -> float | None:
    """MiB of peak RSS per added session: the least-squares slope of peak RSS against N."""
    if len(levels) < 2:
        return None
    xs, ys = [lv["sessions"] for lv in levels], [lv["peak_rss_mib"] for lv in levels]
    return statistics.linear_regression(xs, ys).slope


def soak(server, context, count: int, timeout_s: float, max_s: float) -> dict:
    """`count` sessions one after another, each on two concept labs; RSS after each twentieth."""
    started, samples, errors = time.monotonic(), [], []
    for i in range(count):
        if time.monotonic() - started > max_s:
            errors.append(f"stopped after {i} sessions: --max-minutes reached")
            break
        session = Session(context, server, f"soak{i}")
        try:
            session.open(CONCEPT_LABS[0])
            wait_all([session], server, time.monotonic() + timeout_s, "first lab", [])
            session.start(change_first_setting)
            wait_all([session], server, time.monotonic() + timeout_s, "slider", [])
            session.switch_to(CONCEPT_LABS[1])
            wait_all([session], server, time.monotonic() + timeout_s, "second lab", [])
            errors += session.errors
        finally:
            session.close()
        if (i + 1) % 20 == 0 or i + 1 == count:
            samples.append({"sessions_done": i + 1, "rss_mib": bs.server_rss_bytes(server) / 2**20})
    return soak_figures(count, samples, errors, time.monotonic() - started)


def soak_figures(count: int, samples: list[dict], errors: list[str], wall_s: float) -> dict:
    """The soak's result: RSS after 20 sessions and at the end, and their ratio."""
    after_20 = next((s["rss_mib"] for s in samples if s["sessions_done"] == 20), None)
    end = samples[-1]["rss_mib"] if samples else None
    return {"sessions": count, "rss_after_20_mib": after_20, "rss_end_mib": end,
            "end_over_20": end / after_20 if after_20 and end else None, "samples": samples,
            "errors": len(errors), "error_examples": errors[:5], "wall_s": wall_s}


def write_outputs(out: pathlib.Path, levels: list[dict], soaked: dict | None) -> list[pathlib.Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out.parent / ".gitignore").write_text("*\n")  # the output folder never enters the repository
    written = []
    if levels:
        fields = ["sessions", "trainers", "interactions", "p50_s", "p95_s", "max_s", "training_s", "errors",
                  "peak_rss_mib", "wall_s", "server_cpu_s"]
        with open(out / "class.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fields, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(levels)
        written += [out / "class.csv", class_chart(levels, out / "class.html")]
    if soaked:
        with open(out / "soak.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, ["sessions_done", "rss_mib"])
            writer.writeheader()
            writer.writerows(soaked["samples"])
        written.append(out / "soak.csv")
    return written


def class_chart(levels: list[dict], path: pathlib.Path) -> pathlib.Path:
    import altair as alt
    import pandas as pd

    frame = pd.DataFrame(levels)
    latency = frame.melt(id_vars="sessions", value_vars=["p50_s", "p95_s"], var_name="figure", value_name="seconds")
    x = alt.X("sessions:Q", title="concurrent sessions N")
    left = alt.Chart(latency, title="interaction latency").mark_line(point=True).encode(
        x=x, y=alt.Y("seconds:Q", title="s"), color=alt.Color("figure:N", title=None))
    target = alt.Chart(pd.DataFrame({"y": [3.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(y="y:Q")
    right = alt.Chart(frame, title="peak server RSS").mark_line(point=True).encode(
        x=x, y=alt.Y("peak_rss_mib:Q", title="MiB"))
    (left + target | right).save(str(path))
    return path


def print_table(levels: list[dict], soaked: dict | None, load: tuple) -> None:
    print(f"cores: {len(os.sched_getaffinity(0))}, load average at the start: {' '.join(f'{x:.2f}' for x in load)}, "
          f"at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if levels:
        print(f"{'N':>4} {'trainers':>8} {'interactions':>12} {'p50 s':>7} {'p95 s':>7} {'max s':>7} "
              f"{'training s':>10} {'errors':>6} {'peak RSS MiB':>12} {'server CPU':>10}")
        for lv in levels:
            cells = [f"{lv[k]:.2f}" if lv[k] is not None else "-" for k in ("p50_s", "p95_s", "max_s", "training_s")]
            print(f"{lv['sessions']:>4} {lv['trainers']:>8} {lv['interactions']:>12} {cells[0]:>7} {cells[1]:>7} "
                  f"{cells[2]:>7} {cells[3]:>10} {lv['errors']:>6} {lv['peak_rss_mib']:>12.0f} "
                  f"{cpu_share(lv):>10}")
            if lv["switches_without_state_change"]:
                print(f"     {lv['switches_without_state_change']} page switches were drawn without a change of "
                      "the page's script state: timed to the main area's last change")
            for example in lv["error_examples"]:
                print(f"     error: {example}")
        slope = per_added_session(levels)
        print("peak RSS per added session: " + ("-" if slope is None else f"{slope:.1f} MiB"))
    if soaked:
        ratio = soaked["end_over_20"]
        mib = [f"{x:.0f} MiB" if x else "-" for x in (soaked["rss_after_20_mib"], soaked["rss_end_mib"])]
        print(f"soak: {soaked['sessions']} sessions in {soaked['wall_s']:.0f} s, RSS after 20: {mib[0]}, "
              f"at the end: {mib[1]}"
              + (f" ({ratio:.2f}x)" if ratio else "") + f", errors: {soaked['errors']}")
        for example in soaked["error_examples"]:
            print(f"     error: {example}")


def heavy_labs_run(sessions: int, heavy_jobs: int | None, as_json: bool) -> int:
    """N sessions on the heavy labs pressing their primary button at once (harness.browser.run_sessions)."""
    env = {"PMAP_LAB_HEAVY_JOBS": str(heavy_jobs)} if heavy_jobs else {}
    with bs.server_and_browser(env) as (server, browser):
        report = bs.run_sessions(server, browser, bs.heavy_labs(), sessions)
    figures = {
        "sessions": report.sessions, "labs": report.labs, "heavy_jobs": heavy_jobs or "default (one per core)",
        "all_done_s": round(report.wall_s, 1), "slowest_session_s": round(max(report.finished_s), 1),
        "fastest_session_s": round(min(report.finished_s), 1),
        "server_rss_start_mib": round(report.start_rss_bytes / 2**20),
        "server_rss_peak_mib": round(report.peak_rss_bytes / 2**20), "sessions_shown_queued": report.queued_seen,
        "sessions_with_exception": sorted(report.exceptions), "unfinished": report.unfinished,
    }
    print(json.dumps(figures) if as_json else "\n".join(f"{k}: {v}" for k, v in figures.items()))
    return 1 if report.exceptions or report.unfinished else 0


def class_arguments(description: str) -> argparse.ArgumentParser:
    """The options both class benchmarks take: class sizes, trainers, a soak, the interaction timeout."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--class-sizes", type=int, nargs="+", default=[1, 8, 16, 30], metavar="N")
    parser.add_argument("--trainers", type=int, default=2, help="sessions training during each class size")
    parser.add_argument("--soak", type=int, default=0, metavar="COUNT", help="run COUNT sequential sessions instead")
    parser.add_argument("--timeout", type=float, default=120, help="seconds an interaction may take")
    return parser


def class_arguments_refused(args: argparse.Namespace) -> bool:
    """True, with the reason on stderr, when the class options are out of range."""
    if any(n < 1 or n > 64 for n in args.class_sizes) or not 0 <= args.trainers <= 8 or not 0 <= args.soak <= 1000:
        print("class sizes must be 1..64, trainers 0..8, soak 0..1000", file=sys.stderr)
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = class_arguments(__doc__.splitlines()[0])
    parser.add_argument("--max-minutes", type=float, default=15, help="bound on each class size and on the soak")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--sessions", type=int, help="the heavy-labs run: N sessions press Run at once")
    parser.add_argument("--heavy-jobs", type=int, default=None,
                        help="PMAP_LAB_HEAVY_JOBS for the server (default: its own default, one per core)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.sessions:
        return heavy_labs_run(args.sessions, args.heavy_jobs, args.json)
    if class_arguments_refused(args):
        return 2
    load = os.getloadavg()
    env = {"PMAP_LAB_HEAVY_JOBS": str(args.heavy_jobs)} if args.heavy_jobs else {}
    levels, soaked = [], None
    with bs.server_and_browser(env) as (server, browser):
        context = class_browser(browser)
        # The server has served one page, and the browser holds Streamlit's scripts, before anyone is timed.
        home = Session(context, server, "home")
        home.open("home")
        wait_all([home], server, time.monotonic() + args.timeout, "home", [])
        home.close()
        if args.soak:
            soaked = soak(server, context, args.soak, args.timeout, args.max_minutes * 60)
        else:
            levels = [class_level(server, context, n, args.trainers, args.timeout, args.max_minutes * 60)
                      for n in sorted(args.class_sizes)]
    return report(args.out, levels, soaked, load, args.json)


def report(out: pathlib.Path, levels: list[dict], soaked: dict | None, load: tuple, as_json: bool) -> int:
    """Write the CSVs and the chart, print the figures; the exit status: 1 if any interaction failed."""
    written = write_outputs(out, levels, soaked)
    if as_json:
        print(json.dumps({"load": load, "class": levels, "per_added_session_mib": per_added_session(levels),
                          "soak": soaked}, default=str))
    else:
        print_table(levels, soaked, load)
        print("written: " + ", ".join(str(p) for p in written))
    failed = any(lv["errors"] for lv in levels) or (soaked and soaked["errors"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
