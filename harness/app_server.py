"""An app server to restart: `streamlit run` in a folder of its own (its store, its compilation cache),
stopped as a restart stops it, and the first renders of a new session timed at the server.

The restart benchmark (`benchmarks.bench_restart`) prints these figures; the compilation-cache tests
check what a restarted server reads.
"""

from __future__ import annotations

import asyncio
import pathlib
import subprocess
import time
import urllib.request

from harness import browser as bs
from harness.processes import ROOT, free_port, new_tracking_store, run_coroutine, start_python
from harness.protocol import ProtocolSession

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
