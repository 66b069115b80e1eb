"""The installable package: `pip install .` into a fresh virtual environment gives a `pmap-lab` command
that trains headless (`pmap-lab train --steps 10 --json`) and serves the app (`pmap-lab`), away from the
repository: everything comes from the installed package (the router, the labs, the worksheets, the export
templates, the Streamlit settings).

The package itself is installed by pip (`pip install . -c constraints.txt`, run in a copy of the
repository); its pinned dependencies are put there first by uv where it is installed (from uv's cache)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import psutil
import pytest
from mlflow.tracking import MlflowClient

from harness.app_server import JAX_CACHE_VARIABLES
from harness.processes import ROOT, free_port, new_tracking_store, python_env, run_coroutine, wait_until_idle
from pmap_core.runtime import COMPILATION_CACHE_FOLDER

# What `pip install .` would not read, left out of the copy it installs from (the copy keeps the
# build's own folders, build/ and *.egg-info, out of the working tree).
NOT_INSTALLED = (".git", ".venv", ".pytest_cache", ".ruff_cache", ".hypothesis", "test-artifacts", "build", "mlruns",
                 "mlartifacts", ".whl", "__pycache__", "*.egg-info", "*.db", "*.db-journal", "deploy")

# Run by its path in the installed environment: nothing of the repository is on its path.
CHECK_PACKAGED = ROOT / "tests" / "children" / "installed_package.py"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> pathlib.Path:
    """A fresh virtual environment with the repository installed in it (not editable); its bin folder."""
    folder = tmp_path_factory.mktemp("package")
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_INSTALLED))
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    constraints = ["-c", str(ROOT / "constraints.txt")]
    # The pinned dependencies first, with uv where it is installed (from its cache, in seconds); then
    # pip builds and installs the package itself, which is what `pip install .` does once they are there.
    uv = next((str(path) for path in (ROOT / ".venv" / "bin" / "uv",) if path.exists()), shutil.which("uv"))
    if uv:
        dependencies = [uv, "pip", "install", "--quiet", "--python", python, "-r", str(source / "requirements.txt"),
                        *constraints]
        done = subprocess.run(dependencies, capture_output=True, text=True, timeout=900, cwd=folder)
        assert done.returncode == 0, f"the dependencies' install failed:\n{done.stderr[-3000:]}"
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", ".", *constraints], capture_output=True,
                          text=True, timeout=900, cwd=source)
    assert done.returncode == 0, f"pip install . failed:\n{done.stderr[-3000:]}"
    yield venv / "bin"
    shutil.rmtree(folder, ignore_errors=True)


def run_installed(bin_dir: pathlib.Path, args: list[str], cwd: pathlib.Path, env: dict[str, str] | None = None,
                  timeout: float = 300) -> subprocess.CompletedProcess:
    """A command of the environment, away from the repository (installed_env, another working directory)."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=installed_env(bin_dir, env))


def installed_env(bin_dir: pathlib.Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """No PYTHONPATH (nothing from the repository), the environment's bin first on PATH, and bytecode
    written: the first command compiles the packages it imports once for the next ones."""
    return python_env(path=(), drop=("PYTHONDONTWRITEBYTECODE",),
                      env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **(env or {})})


def test_pmap_lab_help_and_train_run_from_the_installed_package(installed, tmp_path):
    helped = run_installed(installed, [str(installed / "pmap-lab"), "--help"], tmp_path)
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert "pmap-lab" in helped.stdout and "train" in helped.stdout and "app" in helped.stdout

    packaged = run_installed(installed, [str(installed / "python"), str(CHECK_PACKAGED)], tmp_path)
    assert packaged.returncode == 0, packaged.stderr[-3000:]
    found = json.loads(packaged.stdout.strip().splitlines()[-1])
    assert pathlib.Path(found["pmap_core"]).is_relative_to(installed.parent)  # not the repository's
    assert sorted(found["sheets"]) == sorted(path.stem for path in (ROOT / "worksheets").glob("*.toml"))
    assert found["broken"] == [] and found["script"] > 0

    uri = new_tracking_store(tmp_path / "runs.db")
    trained = run_installed(installed, [str(installed / "pmap-lab"), "train", "--steps", "10", "--json"], tmp_path,
                            env={"MLFLOW_TRACKING_URI": uri})
    assert trained.returncode == 0, trained.stderr[-3000:]
    result = json.loads(trained.stdout)
    assert result["steps"] == 10 and result["fell_back_to"] is None
    history = MlflowClient(uri).get_metric_history(result["run_id"], "loss")
    assert len(history) == 10
    assert max(history, key=lambda metric: metric.step).value == pytest.approx(result["final_loss"])

    refused = run_installed(installed, [str(installed / "pmap-lab"), "train", "--steps", "0"], tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stderr


@contextlib.contextmanager
def installed_app(bin_dir: pathlib.Path, cwd: pathlib.Path, env: dict[str, str], command: list[str] | None = None,
                  health: str = "/_stcore/health") -> Iterator[tuple[str, list[str]]]:
    """`pmap-lab app` of the environment in `cwd`, with JAX's own cache variables left out (the app decides
    where its cache goes, as in a deployment); yields its address and its command line once it answers
    /_stcore/health, and stops it with SIGTERM, as a restart does, once it has finished what it started (its
    warm-up compiles the default pages' programs: stopped midway, it would leave some to the next start)."""
    port = int(command[command.index("--server.port") + 1]) if command else free_port()
    command = command or [str(bin_dir / "pmap-lab"), "app", "--server.port", str(port)]
    environ = {name: value for name, value in installed_env(bin_dir, env).items() if name not in JAX_CACHE_VARIABLES}
    log = cwd / f"server-{port}.log"
    with log.open("wb") as output:
        server = subprocess.Popen(command, cwd=cwd, env=environ, stdout=output, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and server.poll() is None:
            with contextlib.suppress(OSError), urllib.request.urlopen(url + health, timeout=2) as reply:
                if reply.read() == b"ok":
                    break
            time.sleep(0.3)
        else:
            pytest.fail(f"pmap-lab did not answer {health} (exit status {server.poll()}):\n"
                        f"{log.read_text(errors='replace')[-3000:]}")
        # The installed router and the lab's settings (the installed copy of .streamlit/config.toml).
        command = psutil.Process(server.pid).cmdline()
        assert str(bin_dir.parent) in " ".join(command) and "streamlit_app.py" in " ".join(command)
        yield url, command
        wait_until_idle(server.pid)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=30)


def open_pages(url: str, pages: list[str]) -> list[str]:
    """One session opens `pages` in turn over Streamlit's protocol; the errors it saw."""
    from harness.protocol import ProtocolSession

    async def opened() -> list[str]:
        session = ProtocolSession(type("Server", (), {"url": url})(), "package")
        try:
            await session.connect()
            for page in pages:
                await asyncio.wait_for(session.open(page), 180)
        finally:
            await session.close()
        return session.errors

    return run_coroutine(opened())


SERVED_PAGES = ["home", "worksheet", "collectives"]  # collectives compiles programs at its first render


def _cache_stamps(folder: pathlib.Path) -> dict[str, bytes]:
    """Each compiled program in the cache and its last read (`<key>-atime`, rewritten on every hit)."""
    return {path.name: path.with_name(path.name.replace("-cache", "-atime")).read_bytes()
            for path in folder.glob("*-cache")}


def test_pmap_lab_serves_the_installed_app_and_a_restart_reads_its_compilation_cache(installed, tmp_path):
    """`pmap-lab` serves the installed app with the lab's settings; and the warm restart from the install
    DEPLOY.md documents: the first start fills `.jax-cache` beside the sqlite store, and the second start
    reads what the first wrote instead of compiling it."""
    env = {"MLFLOW_TRACKING_URI": new_tracking_store(tmp_path / "mlflow.db")}
    cache = tmp_path / COMPILATION_CACHE_FOLDER
    with installed_app(installed, tmp_path, env) as (url, command):
        assert "--server.enableXsrfProtection=true" in command and "--client.showErrorDetails=none" in command
        assert open_pages(url, SERVED_PAGES) == []
    written = _cache_stamps(cache)
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.glob("server-*.log"))
    assert written, f"the installed server wrote nothing to {cache}:\n{logs[-3000:]}"

    with installed_app(installed, tmp_path, env) as (url, _):
        assert open_pages(url, SERVED_PAGES) == []  # the same pages: the same programs, each read back
    read = _cache_stamps(cache)
    assert set(read) == set(written), "the restarted server compiled the same page's programs again"
    assert all(read[name] != written[name] for name in written), "the restarted server did not read every program"


def _unit(name: str, srv: pathlib.Path, bin_dir: pathlib.Path) -> str:
    """deploy/<name> for this test's host: the package's environment for /srv/pmap-lab/venv, `srv` for the
    rest of /srv/pmap-lab (each must appear, as written)."""
    text = (ROOT / "deploy" / name).read_text()
    assert "/srv/pmap-lab/venv/bin/" in text and "WorkingDirectory=/srv/pmap-lab\n" in text, name
    return text.replace("/srv/pmap-lab/venv", str(bin_dir.parent)).replace("/srv/pmap-lab", str(srv))


def test_the_service_units_verify_and_the_apps_execstart_serves_its_sub_path(installed, tmp_path):
    """deploy/pmap-lab@.service and deploy/mlflow.service pass `systemd-analyze verify` against the installed
    package, and the app unit's ExecStart, run as written (its Environment= lines, %i a free port), serves
    the app under /pmap-lab/."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not found (the units are checked where systemd is installed)")
    port = free_port()
    units = tmp_path / "units"
    units.mkdir()
    for env_file in ("app.env", "mlflow.env"):
        (tmp_path / env_file).write_text("")
    app_unit = _unit("pmap-lab@.service", tmp_path, installed)
    (units / f"pmap-lab@{port}.service").write_text(app_unit)
    (units / "mlflow.service").write_text(_unit("mlflow.service", tmp_path, installed))
    for unit in units.iterdir():
        done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and unit.name not in done.stderr, (unit.name, done.stderr)

    service = dict(line.split("=", 1) for line in app_unit.split("[Service]")[1].split("[")[0].splitlines()
                   if "=" in line and not line.startswith("#") and not line.startswith("Environment="))
    env = dict(line.removeprefix("Environment=").split("=", 1) for line in app_unit.splitlines()
               if line.startswith("Environment="))
    command = shlex.split(service["ExecStart"].replace("%i", str(port)))
    assert command[1:3] == ["app", "--server.port"] and "--server.baseUrlPath" in command
    with installed_app(installed, tmp_path, env, command=command, health="/pmap-lab/_stcore/health") as (url, _):
        assert open_pages(url + "/pmap-lab", ["home"]) == []
