"""How a process of a `jax.distributed` group leaves once the group is broken.

Another process died or stopped answering: a collective failed in this process (`JaxRuntimeError`, which
`commands.main` catches), or a process sent no heartbeat for the heartbeat timeout (`distributed.watch_group`, in
a thread of its own). Either way this process says so in one line on stderr, ends every MLflow run it has open as
FAILED (what was logged, the losses so far, is written first) and exits with status 1 at once
(`distributed.leave_now`): JAX's shutdown barrier at exit would wait for the lost process until JAX's heartbeat
timeout, then abort.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import NoReturn

from pmap_core.cli.output import json_asked, json_error, progress
from pmap_core.train import distributed

STATUS = 1
CODE = "lost_group"  # the JSON error's code, with --json
LOST_CONTACT = "lost contact with the group:"  # in the line a process that leaves the group writes
_leaving = threading.Lock()  # the first caller leaves; another (the watch and the main thread at once) waits for it


def claim() -> None:
    """Be the one caller that ends this process (the others wait for it to): `leave`, or the SIGTERM handling of
    `commands.main`, which ends the runs KILLED."""
    if not _leaving.acquire(blocking=False):
        threading.Event().wait()  # the other caller ends the process


def leave(reason: str) -> NoReturn:
    """Say why, end this process's open MLflow runs as FAILED, exit with STATUS."""
    claim()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a launcher's SIGTERM must not cut the lines below
    ended = ""
    if "pmap_core.tracking.mlflow_backend" in sys.modules:
        from pmap_core.tracking import FAILED, mlflow_backend

        mlflow_backend.end_open_runs_at_exit(FAILED)
        if distributed.process_info().is_leader:
            ended = "; the group's MLflow run ended FAILED with the losses logged so far"
    said = f"process {distributed.process_info().process_id} {LOST_CONTACT} {reason}{ended}"
    progress(f"error: {said}")
    if json_asked():
        json_error(said, STATUS, CODE)
    distributed.leave_now(STATUS)
