"""Small helpers shared by the tests, the browser harness and the benchmarks.

Nothing here has side effects on import, so the benchmarks can use it outside pytest
(as `harness.processes`, run from the repository root).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.metadata
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Ignored by git, kept between runs, and pytest's own cache folder.
CACHE = ROOT / ".pytest_cache" / "pmap-lab"
# How long a server a test starts may take to answer: on 2 loaded cores an `mlflow server` took over 30 s
# (50 s to bind its port, measured) and `streamlit run` over a minute. A server that is up answers at once,
# so a generous budget costs only the tests whose server never comes up.
READY_BUDGET_S = 180.0
# The suite's LLVM optimisation level for XLA:CPU's generated code (tests/conftest.py says why).
SUITE_CODEGEN_FLAG = "--xla_backend_optimization_level=0"


def run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """asyncio.run(coroutine) in a thread of its own: in a test process that has driven Chromium,
    Playwright's sync API leaves its event loop marked as running in this thread, where asyncio.run
    refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def python_env(*, devices: int | str | None = None, env: Mapping[str, str] | None = None, inherit: bool = True,
               drop: Iterable[str] = (), path: Sequence[str | os.PathLike] = (ROOT,)) -> dict[str, str]:
    """The environment of a child Python process.

    This process's environment (or, with `inherit=False`, only a PATH to the system's programs),
    less the names in `drop`, with PYTHONPATH set to `path` (removed when `path` is empty),
    PMAP_LAB_DEVICES to `devices` when given, and `env` on top."""
    child = dict(os.environ) if inherit else {"PATH": "/usr/bin:/bin"}
    for name in drop:
        child.pop(name, None)
    if path:
        child["PYTHONPATH"] = os.pathsep.join(map(str, path))
    else:
        child.pop("PYTHONPATH", None)
    if devices is not None:
        child["PMAP_LAB_DEVICES"] = str(devices)
    return {**child, **(env or {})}


def python_command(code_or_args: str | Sequence[str | os.PathLike]) -> list[str]:
    """`python -c CODE` for a string, `python ARGS...` for a sequence (`["-m", "pmap_core", "train"]`)."""
    if isinstance(code_or_args, str):
        return [sys.executable, "-c", code_or_args]
    return [sys.executable, *map(str, code_or_args)]


def start_python(code_or_args: str | Sequence[str | os.PathLike], *, cwd: str | os.PathLike = ROOT,
                 devices: int | str | None = None, env: Mapping[str, str] | None = None, inherit: bool = True,
                 drop: Iterable[str] = (), path: Sequence[str | os.PathLike] = (ROOT,), **popen) -> subprocess.Popen:
    """A child Python process running `code_or_args` (see python_command) in the environment
    python_env builds; its stdout and stderr are pipes of text unless `popen` says otherwise."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **popen}
    return subprocess.Popen(python_command(code_or_args), cwd=cwd,
                            env=python_env(devices=devices, env=env, inherit=inherit, drop=drop, path=path), **options)


def run_python(code_or_args: str | Sequence[str | os.PathLike], *, timeout: float = 120,
               cwd: str | os.PathLike = ROOT, devices: int | str | None = None, env: Mapping[str, str] | None = None,
               inherit: bool = True, drop: Iterable[str] = (), path: Sequence[str | os.PathLike] = (ROOT,),
               check: bool = False) -> subprocess.CompletedProcess:
    """Run a child Python process to its end (start_python's arguments); its output comes back as text.

    Past `timeout` seconds the child is killed and subprocess.TimeoutExpired raised; with `check`,
    a non-zero exit status raises subprocess.CalledProcessError."""
    process = start_python(code_or_args, cwd=cwd, devices=devices, env=env, inherit=inherit, drop=drop, path=path)
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        process.kill()
        process.communicate()
        raise
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    if check:
        done.check_returncode()
    return done


def hold_lock(db_path: str | os.PathLike, seconds: float) -> subprocess.Popen:
    """Another process that keeps the store locked for `seconds`; returns once it holds the lock."""
    holder = start_python(["-m", "harness.lock_holder", str(db_path), str(seconds)], stderr=None)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def empty_tracking_store() -> pathlib.Path:
    """An MLflow sqlite store with its tables and nothing else, built once per MLflow version.

    Creating a store runs MLflow's schema migrations, which takes seconds; copying the built
    file takes none, so every store the tests make is a copy of this one.
    """
    template = CACHE / f"mlflow-empty-{importlib.metadata.version('mlflow')}.db"
    if not template.exists():
        from mlflow.tracking import MlflowClient

        template.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=template.parent) as folder:
            built = pathlib.Path(folder) / "empty.db"
            MlflowClient(f"sqlite:///{built}").search_experiments()
            os.replace(built, template)  # atomic: a concurrent run sees no half-built store
    return template


def new_tracking_store(path: str | os.PathLike) -> str:
    """A fresh, empty MLflow sqlite store at `path`; returns its tracking URI."""
    shutil.copyfile(empty_tracking_store(), path)
    return f"sqlite:///{path}"


def log_tail(path: str | os.PathLike, chars: int = 3000) -> str:
    """The end of a server's log file ("" when there is none yet)."""
    try:
        return pathlib.Path(path).read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def wait_until_idle(pid: int, busy_share: float = 0.1, window_s: float = 0.5, timeout_s: float = 120) -> float:
    """Wait until process `pid` uses less than `busy_share` of one CPU over `window_s` (a server whose pages' jobs and
    warm-up are done), `timeout_s` at most; the seconds waited."""
    import psutil

    process, start = psutil.Process(pid), time.monotonic()
    while time.monotonic() - start < timeout_s:
        before = sum(process.cpu_times()[:2])
        time.sleep(window_s)
        if sum(process.cpu_times()[:2]) - before < busy_share * window_s:
            break
    return time.monotonic() - start


def wait_until_answering(url: str, process: subprocess.Popen, log: Callable[[], str],
                         timeout_s: float = READY_BUDGET_S) -> None:
    """Poll GET `url` until it answers 200, for up to `timeout_s`. A server that exits first, or never
    answers, fails the wait with its own log (`log()`), which says why."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode} before {url} answered; "
                               f"its log:\n{log()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout_s:.0f} s; the server's log:\n{log()}")


# MLflow's job workers (Huey consumers for its GenAI jobs), which the lab never uses: without them `mlflow server
# --workers 1` is 2 processes and 0.49 GiB of resident memory instead of 10 and 1.7 GiB (measured here), as
# docs/DEPLOY.md runs it.
WITHOUT_MLFLOW_JOBS = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


class MlflowServer:
    """A real `mlflow server` on 127.0.0.1 over a fresh sqlite store in `folder` (or over `backend`, with
    `env` for its secrets, e.g. PGPASSWORD), in its own process group; its output goes to
    `folder`/mlflow-server.log."""

    def __init__(self, folder: pathlib.Path, backend: str | None = None, env: Mapping[str, str] | None = None):
        self.db = pathlib.Path(folder) / "server.db"
        self.uri = f"http://127.0.0.1:{free_port()}"
        self.log_path = pathlib.Path(folder) / "mlflow-server.log"
        with open(self.log_path, "wb") as log:
            self.process = start_python(
                ["-m", "mlflow", "server", "--backend-store-uri", backend or new_tracking_store(self.db),
                 "--host", "127.0.0.1", "--port", self.uri.rsplit(":", 1)[1], "--workers", "1"],
                cwd=folder, env={**WITHOUT_MLFLOW_JOBS, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
                text=False, start_new_session=True,
            )

    def log_tail(self, chars: int = 3000) -> str:
        return log_tail(self.log_path, chars)

    def wait_until_healthy(self, timeout_s: float = READY_BUDGET_S) -> None:
        """Until /health answers and the server has answered one request to its store: the first
        opens the store, about 10 times slower than the next (over a second here, more under load),
        which a test's 3 s reachability probe would take for a server that does not answer."""
        deadline = time.monotonic() + timeout_s
        wait_until_answering(self.uri + "/health", self.process, self.log_tail, timeout_s)
        search = urllib.request.Request(self.uri + "/api/2.0/mlflow/experiments/search", data=b'{"max_results": 1}',
                                        headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(search, timeout=max(30.0, deadline - time.monotonic())) as response:
            response.read()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server's process group with `sig`; one that has not ended within the readiness budget (a
        loaded machine can take long over its workers) is killed, so a stop never fails a test."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(READY_BUDGET_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def last_json_line(out: str) -> object:
    """The last line of a child's output that is a JSON value: JAX may write a line of its own after it
    (on 0.12, a source location such as `…/demo.py:130:10 (tutorial_batch)` at exit)."""
    for line in reversed(out.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    raise AssertionError(f"no JSON line in the child's output:\n{out[-3000:]}")


def json_at_device_counts(code_or_args: str | Sequence[str | os.PathLike] | Callable[[int], str | Sequence[str]],
                          device_counts: Iterable[int], *,
                          timeout: float = 300) -> dict[int, object]:
    """Run `code_or_args` (see python_command; `["-m", "tests.children.quiz_answers", "all"]`), or what a
    function of the device count gives, in one child per device count, all at once, each printing a JSON
    value as its last line (last_json_line); that value per device count. A child that fails fails the
    caller with its stderr."""
    command = code_or_args if callable(code_or_args) else lambda devices: code_or_args
    children = {devices: start_python(command(devices), devices=devices) for devices in device_counts}
    results = {}
    for devices, child in children.items():
        out, err = child.communicate(timeout=timeout)
        assert child.returncode == 0, f"D = {devices}:\n{err[-3000:]}"
        results[devices] = last_json_line(out)
    return results
