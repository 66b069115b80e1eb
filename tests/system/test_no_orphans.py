"""A multi-process run whose starter is killed outright (SIGKILL: no cleanup, no atexit) leaves no
process behind: the `launch` command, and the app server in the middle of a run started from the
Multi-process page. The children wait for a late process to join (silent, up to their join timeout
of 120 s), and their stdout and stderr are pipes whose reader has died."""

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import time
from urllib.parse import urlencode

import psutil
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from harness import browser as bs
from harness.processes import start_python
from harness.protocol import ProtocolSession

# Two processes join at once and wait for a third that starts a minute late.
GROUP = {"processes": 3, "per_process": 2, "batch": 12, "size": 24, "steps": 8, "late_s": 60, "init_timeout": 120}
LEFT_AFTER_S = 15  # the acceptance bound: no child alive this long after its starter was killed
PREPARE_S = 240    # starting a server or the processes, on cores shared with other tests


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
    return out


def joining_children(parent: int) -> list[int]:
    """The `pmap_core` children of `parent` once the first two are in `jax.distributed` (process 1
    connected to process 0's coordinator); an empty list before."""
    try:
        children = [c for c in psutil.Process(parent).children() if "pmap_core" in " ".join(c.cmdline())]
        ports = {c.laddr.port for c in children[0].net_connections("tcp") if c.status == psutil.CONN_LISTEN}
        joined = any(c.raddr and c.raddr.port in ports for c in children[1].net_connections("tcp"))
    except (psutil.Error, IndexError):
        return []
    return [c.pid for c in children] if joined else []


def wait_for_joining_children(parent: int) -> list[int]:
    deadline = time.monotonic() + PREPARE_S
    while time.monotonic() < deadline:
        if pids := joining_children(parent):
            return pids
        time.sleep(0.2)
    pytest.fail(f"the processes of pid {parent} did not start joining within {PREPARE_S} s")


def seconds_until_gone(pids: list[int]) -> float | None:
    """Seconds until none of `pids` is alive, or None when some still are after LEFT_AFTER_S; kills those."""
    started = time.monotonic()
    while time.monotonic() - started < LEFT_AFTER_S:
        if not alive(pids):
            return time.monotonic() - started
        time.sleep(0.1)
    for pid in alive(pids):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)  # each child leads its own process group
    return None


def test_sigkill_to_the_launch_command_leaves_no_process_behind():
    command = ["-m", "pmap_core", "launch", "--processes", str(GROUP["processes"]), "--devices-per-process",
               str(GROUP["per_process"]), "--late", str(GROUP["late_s"]), "train", "--json", "--no-tracking",
               "--global-batch", str(GROUP["batch"]), "--dataset-size", str(GROUP["size"]),
               "--steps", str(GROUP["steps"]), "--init-timeout", str(GROUP["init_timeout"])]
    launcher = start_python(command)  # its stdout and stderr are pipes, as its children's are to it
    try:
        pids = wait_for_joining_children(launcher.pid)
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(10)
        gone_s = seconds_until_gone(pids)
    finally:
        launcher.kill()
        launcher.communicate()
    assert gone_s is not None, f"processes {pids} still alive {LEFT_AFTER_S} s after the launcher was killed"
    print(f"every process ended {gone_s:.1f} s after the launcher was killed")


async def start_run_on_the_page(server: bs.Server) -> tuple[ProtocolSession, asyncio.Task]:
    """Open the Multi-process page with GROUP's settings and press its start button; the session, and
    the task that waits for the run's end."""
    session = ProtocolSession(server, "multiprocess")
    session.query = urlencode({"lang": "en", "fault": "late", **GROUP})
    await session.connect()
    await asyncio.wait_for(session.open("multiprocess"), PREPARE_S)
    assert not session.errors, session.errors
    button = next(w for w in session.widgets.values() if w.id.endswith("multiprocess.run"))
    pressed = asyncio.create_task(session.rerun(widget_states=[WidgetState(id=button.id, trigger_value=True)]))
    return session, pressed


def run_in_own_thread(coroutine_function):
    """asyncio.run in a thread of its own: a browser test earlier in this worker may have left
    Playwright's event loop running in the main thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine_function()).result()


def test_sigkill_to_the_app_server_mid_run_leaves_no_process_behind():
    # Slots for every process of the group (each one counts against the server's heavy-job slots).
    server = bs.start_server({"PMAP_LAB_HEAVY_JOBS": str(GROUP["processes"])}, timeout_s=PREPARE_S)

    async def scenario() -> tuple[list[int], float | None]:
        session, pressed = await start_run_on_the_page(server)
        try:
            pids = await asyncio.to_thread(wait_for_joining_children, server.process.pid)
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(10)
            return pids, await asyncio.to_thread(seconds_until_gone, pids)
        finally:
            pressed.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await pressed
            with contextlib.suppress(Exception):
                await session.close()

    try:
        pids, gone_s = run_in_own_thread(scenario)
    finally:
        bs.stop_server(server)
    assert gone_s is not None, f"processes {pids} still alive {LEFT_AFTER_S} s after the server was killed"
    print(f"every process ended {gone_s:.1f} s after the server was killed")
