"""A real `streamlit run` server and Debian's Chromium, shared by the browser
tests, the load test and the benchmarks.

One server and one browser per process: starting either costs seconds, and the
point is to see what one shared deployment does when many pages use it.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from harness.processes import (
    READY_BUDGET_S,
    ROOT,
    free_port,
    log_tail,
    new_tracking_store,
    start_python,
    wait_until_answering,
)

# Debian's Chromium; PMAP_LAB_CHROMIUM points elsewhere (another distribution's path).
CHROMIUM = os.environ.get("PMAP_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
# The main area scrolls inside its own container: a tall window shows the whole page.
VIEWPORT = {"width": 1400, "height": 4000}
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'
RUNNING = '[data-testid="stApp"][data-test-script-state="running"]'
SKELETON = '[data-testid="stSkeleton"]'
EXCEPTION = '[data-testid="stException"]'
MAIN = '[data-testid="stMain"]'
HEALTH_PATH = "/_stcore/health"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def chromium_missing_reason() -> str | None:
    """Why the browser cannot run here, or None when it can."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} not found (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return ("playwright is not installed (scripts/setup.sh requirements-dev.txt installs it and the checks' "
                "other packages into .venv; or pip install -r requirements-dev.txt -c constraints.txt)")
    return None


def before_class_problem() -> str | None:
    """What keeps a benchmark from measuring what a class would get, in one line, or None: the browser (and what
    to install), the teacher key's length (the server started here inherits it, and with a length the app
    refuses every page shows only the refusal), and the class store MLFLOW_TRACKING_URI names (it must take a
    run: the server started here tracks into a throwaway store instead)."""
    missing = chromium_missing_reason()
    if missing:
        return missing
    from pmap_core.tracking.readiness import NotReady, check_store, check_teacher_key_setting

    try:
        check_teacher_key_setting(os.environ)
        if os.environ.get("MLFLOW_TRACKING_URI", "").strip():
            check_store(os.environ["MLFLOW_TRACKING_URI"].strip())
    except NotReady as error:
        return str(error)
    return None


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log_path: pathlib.Path

    def log_tail(self, chars: int = 3000) -> str:
        return log_tail(self.log_path, chars)


def start_server(extra_env: dict[str, str] | None = None, timeout_s: float = READY_BUDGET_S,
                 tracking_store: Callable[[pathlib.Path], str] = new_tracking_store) -> Server:
    """`streamlit run streamlit_app.py` on a free port of 127.0.0.1; returns once healthy.

    Its MLflow store is `tracking_store(<the server's folder>/mlflow.db)`: an empty one
    unless the caller gives another (tests.tracked_runs.store_with_runs)."""
    (server,) = start_servers([extra_env], timeout_s, tracking_store)
    return server


def start_servers(extra_envs: list[dict[str, str] | None], timeout_s: float = READY_BUDGET_S,
                  tracking_store: Callable[[pathlib.Path], str] = new_tracking_store) -> list[Server]:
    """One server per environment of `extra_envs` (see start_server), all started before any is waited
    for: their start-ups overlap. Returns them once every one is healthy; if one is not, all are stopped."""
    servers = [_launch(extra_env, tracking_store) for extra_env in extra_envs]
    try:
        for server in servers:
            wait_until_answering(server.url + HEALTH_PATH, server.process, server.log_tail, timeout_s)
    except BaseException:
        for server in servers:
            stop_server(server)
        raise
    return servers


def _launch(extra_env: dict[str, str] | None, tracking_store: Callable[[pathlib.Path], str]) -> Server:
    port = free_port()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-server-"))
    env = {
        # A throwaway MLflow store: the tests never write into the checkout's mlflow.db.
        "MLFLOW_TRACKING_URI": tracking_store(workdir / "mlflow.db"),
        "PYTHONUNBUFFERED": "1",
        **(extra_env or {}),
    }
    log_path = workdir / "server.log"
    command = [
        "-m", "streamlit", "run", "streamlit_app.py",
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    with open(log_path, "wb") as log:
        process = start_python(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=False)
    return Server(f"http://127.0.0.1:{port}", process, log_path)


def stop_server(server: Server, keep_folder: bool = False, timeout_s: float = 15) -> None:
    """Stop the server (SIGTERM, then SIGKILL after `timeout_s`) and remove its folder (its log and its
    throwaway MLflow store) unless `keep_folder`."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=timeout_s)
    if not keep_folder:
        shutil.rmtree(server.log_path.parent, ignore_errors=True)


def server_rss_bytes(server: Server) -> int:
    """Resident memory of the server process and all its children."""
    import psutil

    try:
        root = psutil.Process(server.process.pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += process.memory_info().rss
    return total


# --- one server and one browser per process ----------------------------------

_shared: dict[str, object] = {}


def shared_server() -> Server:
    """The process's test server; one heavy job at a time so that queueing is visible. Its
    store holds a few runs, so the experiments lab shows its filters, table and charts."""
    if "server" not in _shared:
        from harness.tracked_runs import store_with_runs

        server = start_server({"PMAP_LAB_HEAVY_JOBS": "1"}, tracking_store=store_with_runs)
        _shared["server"] = server
        atexit.register(stop_server, server)
    return _shared["server"]  # type: ignore[return-value]


def shared_browser():
    """A headless Chromium (Playwright's sync API), launched once per process."""
    if "browser" not in _shared:
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        _shared["playwright"], _shared["browser"] = playwright, browser

        def close() -> None:
            try:
                browser.close()
            finally:
                playwright.stop()

        atexit.register(close)
    return _shared["browser"]


def shared_context(missing: str | None) -> Iterator:
    """A new context of the shared browser on the shared server, for a module's tests (a fixture yields
    from it); where the browser cannot run (`missing`, only reached under CI), the tests fail."""
    if missing:  # only under CI: a missing browser is a broken CI image, not a skip
        import pytest

        pytest.fail(f"CI=true but the browser cannot run: {missing}")
    shared_server()
    context = shared_browser().new_context(viewport=VIEWPORT)
    yield context
    context.close()


def close_shared() -> None:
    """Close the browser before the server: called at the end of the test session."""
    browser, playwright = _shared.pop("browser", None), _shared.pop("playwright", None)
    if browser is not None:
        browser.close()
        playwright.stop()
    server = _shared.pop("server", None)
    if server is not None:
        stop_server(server)


# --- pages --------------------------------------------------------------------


# Counts the script runs that ended on the page (the app's script state leaving "running"), so that a wait
# after an interaction knows whether a rerun has already come and gone; `seen` is the count at the last wait.
_COUNT_RUNS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (app && window.__pmapApp !== app) {
    window.__pmapApp = app;
    window.__pmapEnded = 0;
    new MutationObserver(records => {
      window.__pmapEnded += records.filter(r => r.oldValue === "running").length;
    }).observe(app, {attributes: true, attributeOldValue: true, attributeFilter: ["data-test-script-state"]});
  }
  window.__pmapSeen = window.__pmapEnded;
}"""
_RERUN_CAME = f"""() => window.__pmapEnded > window.__pmapSeen || document.querySelector('{RUNNING}') !== null"""


def wait_ready(page, timeout_ms: float = 90_000, rerun: bool = False) -> None:
    """Wait until the script has finished. After an interaction, first wait (a few seconds at most) until
    its rerun has started or already ended, so that the old 'notRunning' does not count."""
    if rerun:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        counted = page.evaluate("() => window.__pmapEnded !== undefined")
        # A rerun that never shows within the budget: the interaction needed none, nothing to wait for.
        with contextlib.suppress(PlaywrightTimeout):
            if counted:  # a rerun that finished before we looked has been counted
                page.wait_for_function(_RERUN_CAME, timeout=3_000)
            else:
                page.wait_for_selector(RUNNING, timeout=3_000)
    page.wait_for_selector(READY, timeout=timeout_ms)
    # A widget whose code the browser has not loaded yet shows as a grey skeleton after the script
    # has finished (lazy chunks; slow on a busy machine): wait until every element is drawn.
    page.wait_for_function(f"document.querySelectorAll('{SKELETON}').length === 0", timeout=timeout_ms)
    # Elements of the previous run can linger for a frame; let them settle.
    page.wait_for_timeout(150)
    page.evaluate(_COUNT_RUNS)


def wait_until(page, condition: Callable[[], bool], timeout_s: float) -> bool:
    """Whether `condition()` comes to hold within `timeout_s`. It waits on the page's own timer: Playwright's sync API
    hands its listeners (`page.on(...)`, a websocket's frames) what the browser received only while one of its calls
    runs, never during a `time.sleep`, so a condition on what a listener collected is only ever met this way."""
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    return condition()


def open_choices(page, combobox, timeout_ms: float = READY_BUDGET_S * 1000):
    """Click a selectbox open and return its options. The first click on a freshly loaded page can open nothing
    (measured on the migration lab: the first click, none; the second, all five), so click again until they show."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    options, deadline = page.locator('[role="option"]'), time.monotonic() + timeout_ms / 1000
    while True:
        combobox.click()
        try:
            options.first.wait_for(timeout=5_000)
            return options
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
            page.keyboard.press("Escape")


def open_app_page(page, url: str, timeout_ms: float = 90_000) -> None:
    page.goto(url, wait_until="domcontentloaded")
    wait_ready(page, timeout_ms)


def exception_texts(page) -> list[str]:
    return [text[:800] for text in page.locator(EXCEPTION).all_inner_texts()]


def screenshot_dir() -> pathlib.Path:
    """test-artifacts/screenshots/<run id>/ (ignored by git), one per test run."""
    if "screenshots" not in _shared:
        run_id = os.environ.get("PMAP_LAB_RUN_ID") or datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        folder = ROOT / "test-artifacts" / "screenshots" / run_id
        folder.mkdir(parents=True, exist_ok=True)
        _shared["screenshots"] = folder
    return _shared["screenshots"]  # type: ignore[return-value]


def save_screenshot(page, name: str) -> pathlib.Path:
    path = screenshot_dir() / f"{name}.jpg"
    # JPEG: half the time of a PNG of the tall viewport, and every glyph still readable.
    page.screenshot(path=str(path), full_page=False, type="jpeg", quality=80)
    return path


def page_url(server: Server, url_path: str, **query: object) -> str:
    from urllib.parse import urlencode

    return f"{server.url}/{url_path}" + (f"?{urlencode(query)}" if query else "")


def iter_all_pages() -> Iterator[tuple[str, str]]:
    """(script, url_path) of the home page and every lab in the registry."""
    from labs.registry import HOME, LABS

    for lab in [HOME, *LABS]:
        yield lab.script, lab.url_path


# --- many readers at once ---------------------------------------------------------


def heavy_labs() -> list:
    """The labs that run heavy work (training, sweeps, benchmarks): those that use heavy_jobs.heavy_job."""
    from labs.registry import LABS, script_path

    return [lab for lab in LABS if "heavy_job(" in (ROOT / script_path(lab)).read_text()]


@dataclass
class LoadReport:
    sessions: int
    labs: list[str]
    wall_s: float
    finished_s: list[float]  # per session, since the start
    peak_rss_bytes: int
    start_rss_bytes: int
    queued_seen: int  # sessions that showed the 'queued' notice at some point
    exceptions: dict[str, list[str]]
    unfinished: list[str]


def run_sessions(server: Server, browser, labs: list, sessions: int, timeout_s: float = 240,
                 settings: dict[str, dict] | None = None) -> LoadReport:
    """Open `sessions` pages at once on the given labs in turn, press each page's primary button
    if it has one, and wait until every page has finished, sampling the server's memory meanwhile.
    `settings` gives a lab's link settings by its script name; a lab not named opens at its defaults.

    Each page is a tab of one browser context: a tab has its own connection, so its own Streamlit
    session, and the tabs share the browser's cache of Streamlit's scripts, as a returning
    student's browser has it (a context of its own per page costs Chromium, on the server's own
    cores, twice the CPU)."""
    from labs.texts import table as text_table

    TEXTS = text_table("common")

    queued_text = TEXTS["queued"]["en"][:40]
    context = browser.new_context(viewport={"width": 1200, "height": 2000})
    pages = [context.new_page() for _ in range(sessions)]
    names = [f"{labs[i % len(labs)].script}#{i}" for i in range(sessions)]
    start_rss = peak_rss = server_rss_bytes(server)
    started = time.monotonic()
    try:
        for i, page in enumerate(pages):
            lab = labs[i % len(labs)]
            query = (settings or {}).get(lab.script, {})
            page.goto(page_url(server, lab.url_path, lang="en", **query), wait_until="commit")
        for page in pages:  # first render done, then everyone presses at once
            page.wait_for_selector(READY, timeout=timeout_s * 1000)
        for page in pages:
            button = page.locator(MAIN).locator('[data-testid="stBaseButton-primary"]')
            if button.count() and button.first.is_enabled():
                button.first.click(no_wait_after=True)
        finished: dict[int, float] = {}
        queued: set[int] = set()
        page.wait_for_timeout(300)
        while len(finished) < sessions and time.monotonic() - started < timeout_s:
            peak_rss = max(peak_rss, server_rss_bytes(server))
            for i, page in enumerate(pages):
                if i in finished:
                    continue
                if i not in queued and page.get_by_text(queued_text).count():
                    queued.add(i)
                if page.locator(READY).count():
                    finished[i] = time.monotonic() - started
            pages[0].wait_for_timeout(200)
        exceptions = {names[i]: exception_texts(page) for i, page in enumerate(pages) if exception_texts(page)}
        return LoadReport(
            sessions=sessions, labs=[lab.script for lab in labs], wall_s=time.monotonic() - started,
            finished_s=[finished.get(i, float("nan")) for i in range(sessions)],
            peak_rss_bytes=max(peak_rss, server_rss_bytes(server)), start_rss_bytes=start_rss,
            queued_seen=len(queued), exceptions=exceptions,
            unfinished=[names[i] for i in range(sessions) if i not in finished],
        )
    finally:
        context.close()


# --- a script's own server and browser (the benchmarks) ------------------------------


@contextlib.contextmanager
def server_and_browser(extra_env: dict[str, str] | None = None) -> Iterator[tuple[Server, object]]:
    """A fresh server and a headless Chromium for one script, both closed on the way out.
    Exits with status 2 and the reason, in one line, when the browser cannot run here or the deployment it
    stands for could not hold a class (before_class_problem)."""
    missing = before_class_problem()
    if missing:
        print(f"cannot run: {missing}", file=sys.stderr)
        raise SystemExit(2)
    server = start_server(extra_env)
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                yield server, browser
            finally:
                browser.close()
    finally:
        stop_server(server)
