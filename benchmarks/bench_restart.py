"""A warm restart: the first renders of a restarted app server, with JAX's compilation cache and without.

    .venv/bin/python -m benchmarks.bench_restart                   # five labs, then a training run
    .venv/bin/python -m benchmarks.bench_restart --pages collectives sharded_dp --restarts 2

For each mode (the cache beside the store, as the app keeps it by default; `PMAP_LAB_COMPILATION_CACHE=off`)
one working folder with its own sqlite store: `streamlit run` starts, one session speaks Streamlit's
websocket protocol (benchmarks.load_protocol) and opens each page in turn, then presses Train on the
training page; the server stops (SIGTERM) and starts again in the same folder, and a new session
does the same. Printed: the seconds from each request until the script has finished (the server's
side of a first render: imports for the first page, compiles, the run) and their sum after the
first page, the server's start until healthy, and the cache's entries after each start. Loopback only; JAX's own
JAX_COMPILATION_CACHE_* variables are left out of the servers' environment.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from benchmarks.load_protocol import ProtocolSession
from benchmarks.load_sessions import URL_PATHS
from pmap_core.runtime import COMPILATION_CACHE_ENV, COMPILATION_CACHE_FOLDER
from tests import browser_support as bs
from tests.support import ROOT, free_port, new_tracking_store, run_coroutine, start_python

# The environment's own cache settings would decide for the app (they win over PMAP_LAB_COMPILATION_CACHE).
JAX_CACHE_VARIABLES = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                       "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "JAX_COMPILATION_CACHE_MAX_SIZE")
TRAIN_QUERY = "lang=en&devices=4&batch=256&steps=100"  # the training page's settings when it trains


def start_app(folder: pathlib.Path, env: dict[str, str] | None = None,
              timeout_s: float = 180) -> tuple[bs.Server, float]:
    """`streamlit run` in the repository on a free port, tracking into `folder`/mlflow.db (made when
    missing), with the cache where the app puts it by default: `folder`/.jax-cache. Returns the server
    and the seconds until it answered its health check."""
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "mlflow.db"
    uri = new_tracking_store(store) if not store.exists() else f"sqlite:///{store}"
    port = free_port()
    log_path = folder / f"server-{port}.log"
    command = ["-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true", "--server.fileWatcherType", "none"]
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        process = start_python(command, cwd=ROOT, drop=JAX_CACHE_VARIABLES,
                               env={"MLFLOW_TRACKING_URI": uri, "PYTHONUNBUFFERED": "1", **(env or {})},
                               stdout=log, stderr=subprocess.STDOUT, text=False)
    server = bs.Server(f"http://127.0.0.1:{port}", process, log_path)
    while time.perf_counter() - started < timeout_s:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + bs.HEALTH_PATH, timeout=2) as reply:
                if reply.status == 200:
                    return server, time.perf_counter() - started
        except OSError:
            time.sleep(0.2)
    stop_app(server)
    raise RuntimeError(f"streamlit not healthy after {timeout_s:.0f} s:\n{server.log_tail()}")


def stop_app(server: bs.Server) -> None:
    """SIGTERM, as a restart sends; the folder stays (its store and cache are the point)."""
    bs.stop_server(server, keep_folder=True, timeout_s=30)


async def _render(server: bs.Server, pages: list[str], train: bool, timeout_s: float) -> dict[str, float]:
    session = ProtocolSession(server, "restart")
    times: dict[str, float] = {}
    try:
        await asyncio.wait_for(session.connect(), timeout_s)
        for script in pages:
            session.query = TRAIN_QUERY if script == "training" else "lang=en"
            times[script] = await asyncio.wait_for(session.open(script), timeout_s)
        if train:
            if "training" not in pages:
                session.query = TRAIN_QUERY
                await asyncio.wait_for(session.open("training"), timeout_s)
            pressed = await asyncio.wait_for(session.press_train(), timeout_s)
            if pressed is not None:
                times["training: Train"] = pressed
    finally:
        await session.close()
    if session.errors:
        raise RuntimeError("; ".join(session.errors))
    return times


def render(server: bs.Server, pages: list[str], train: bool = False, timeout_s: float = 300) -> dict[str, float]:
    """One new session opens each page of `pages` (labs' script names) in turn, then presses Train
    when `train`; the seconds of each, from the request until the script has finished."""
    return run_coroutine(_render(server, pages, train, timeout_s))


def cache_entries(folder: pathlib.Path) -> set[str]:
    """The names of the compiled programs in the cache folder `folder`."""
    return {path.name for path in folder.glob("*-cache")} if folder.is_dir() else set()


def measure(mode: str, env: dict[str, str], pages: list[str], train: bool, restarts: int) -> list[dict]:
    folder = pathlib.Path(tempfile.mkdtemp(prefix=f"pmap-lab-restart-{mode.replace(' ', '-')}-"))
    rows = []
    try:
        for start in range(restarts + 1):
            server, startup_s = start_app(folder, env)
            try:
                times = render(server, pages, train)
            finally:
                stop_app(server)
            rows.append({"mode": mode, "start": "first" if start == 0 else f"restart {start}",
                         "startup_s": startup_s, **times,
                         "entries": len(cache_entries(folder / COMPILATION_CACHE_FOLDER))})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=["applications", "collectives", "device_mapping", "mesh_2d",
                                                       "training"], choices=sorted(URL_PATHS),
                        help="the labs each session opens, in order (script names)")
    parser.add_argument("--no-train", action="store_true", help="do not press Train on the training page")
    parser.add_argument("--restarts", type=int, default=1, help="restarts after the first start")
    args = parser.parse_args(argv)
    modes = {"cache": {}, "no cache": {COMPILATION_CACHE_ENV: "off"}}
    rows = [row for mode, env in modes.items()
            for row in measure(mode, env, args.pages, not args.no_train, args.restarts)]
    timed = [*args.pages, *([] if args.no_train else ["training: Train"])]
    for row in rows:  # the first page pays the app's imports too, compiled or not
        row["after the first"] = sum(row.get(name, 0.0) for name in timed[1:])
    columns = ["startup_s", *timed, "after the first"]
    print(f"{'mode':<9} {'start':<10} " + " ".join(f"{c:>16}" for c in columns) + f" {'cache entries':>14}")
    for row in rows:
        print(f"{row['mode']:<9} {row['start']:<10} "
              + " ".join(f"{row.get(c, float('nan')):>15.2f}s" for c in columns) + f" {row['entries']:>14}")
    print("seconds from the request until the script finished; the first page includes the app's imports;\n"
          "'after the first': the sum of the other pages' figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
