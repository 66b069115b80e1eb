"""Headless commands: `python -m pmap_core <command> …` on the same code path as the labs.

Each command module registers its own sub-parser; bad input is reported as
one line on stderr with exit status 2, never a traceback. SIGTERM (what `timeout`,
systemd or a container runtime sends) stops a command like Ctrl-C does: every open
MLflow run ends KILLED with what it logged so far, and the status is 143.

A process of a `jax.distributed` group that loses another one (a collective fails, or a process sent no heartbeat
for the heartbeat timeout) says so in one line and exits with status 1, its MLflow run (process 0's) ended FAILED
with the losses logged so far (`lost_group`); in a group, both exits are immediate (`distributed.leave_now`):
JAX's shutdown barrier would wait for the lost process for JAX's heartbeat timeout, then abort.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from jax.errors import JaxRuntimeError

from pmap_core import versions
from pmap_core.cli import bench, export, launch, lost_group, plan, store, training
from pmap_core.runtime import configure_runtime
from pmap_core.train import distributed
from pmap_core.train.launch import TERMINATED
from pmap_core.validation import LabInputError

TERMINATED_STATUS = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM as an exception the training path sees. Not an `Exception`: runs it stops end KILLED."""


def _raise_terminated(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not interrupt the cleanup
    raise Terminated


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def version_text(running: versions.Versions) -> str:
    lines = running.lines()
    if running.other_jax_minor:
        lines.append(f"note: the lab's statements were checked on JAX {versions.minor(running.verified_jax)}; "
                     f"on {running.jax} some may not hold")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    # Raw: the version lines print as written, not refilled into one paragraph.
    parser = argparse.ArgumentParser(prog="python -m pmap_core", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=version_text(versions.running()),
                        help="show the running JAX and Python beside the versions the lab was verified on")
    commands = parser.add_subparsers(dest="command", required=True)
    for module in (training, bench, launch, export, store, plan):
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        configure_runtime()
    except ValueError as error:  # PMAP_LAB_DEVICES
        print(f"error: {error}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    try:
        with _sigterm_raises():
            return int(args.run(args) or 0)
    except LabInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except Terminated:
        grouped = distributed.in_group()
        if grouped:
            lost_group.claim()  # the group's watch must not end this process meanwhile
        _end_open_runs()
        print(f"{TERMINATED} every open MLflow run ended as KILLED with the losses logged so far", file=sys.stderr)
        if grouped:
            distributed.leave_now(TERMINATED_STATUS)
        return TERMINATED_STATUS
    except JaxRuntimeError as error:
        if not distributed.in_group():
            raise
        lost_group.leave(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)


def _end_open_runs() -> None:
    """End every MLflow run this process still has open (as KILLED), after writing what it has pending."""
    if "pmap_core.tracking.mlflow_backend" in sys.modules:
        sys.modules["pmap_core.tracking.mlflow_backend"].end_open_runs_at_exit()
