"""Headless commands: `python -m pmap_core <command> …` on the same code path as the labs.

Each command module registers its own sub-parser, imported only when its command is named; bad input is
reported as one line on stderr with exit status 2, never a traceback (with `--json`, also as one JSON object
with an `error` on stdout: `output.fail`). SIGTERM (what `timeout`,
systemd or a container runtime sends) stops a command like Ctrl-C does: every open
MLflow run ends KILLED with what it logged so far, and the status is 143.

A process of a `jax.distributed` group that loses another one (a collective fails, or a process sent no heartbeat
for the heartbeat timeout) says so in one line and exits with status 1, its MLflow run (process 0's) ended FAILED
with the losses logged so far (`lost_group`); in a group, both exits are immediate (`distributed.leave_now`):
JAX's shutdown barrier would wait for the lost process for JAX's heartbeat timeout, then abort.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pmap_core import versions
from pmap_core.cli.output import (
    JSON_FLAG,
    USAGE_STATUS,
    Parser,
    UsageError,
    ask_json,
    fail,
    json_error,
    progress,
)
from pmap_core.runtime import configure_runtime
from pmap_core.train.launch import TERMINATED
from pmap_core.validation import LabInputError

TERMINATED_STATUS = 128 + signal.SIGTERM
# Every command: the module of pmap_core.cli that parses and runs it, and the line the overview shows. A module
# (with what it imports: JAX, MLflow) is imported only when its command is named, so that `--help` and
# `--version` answer at once (benchmarks/bench_cli_start.py).
COMMANDS = {
    "train": ("training", "train one model data-parallel and track it in MLflow"),
    "sweep": ("training", "train once per device count (1, 2, 4, …) and compare"),
    "bench": ("bench", "benchmarks of this runtime"),
    "launch": ("launch", "start P jax.distributed processes running one command (locally, or through mpirun or "
                         "srun)"),
    "export": ("export", "print a lab as a standalone JAX script or notebook (only jax and numpy)"),
    "store": ("store", "look after the class store (check that a class can use it; move fallback runs back into it)"),
    "plan": ("plan", "rank every layout of D devices (data, pipeline, expert, context, tensor) for a model on a "
                     "cluster, predicted"),
}
_OVERVIEW_OPTIONS = ("-h", "--help", "--version")


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


def named_command(argv: Sequence[str]) -> str | None:
    """The command `argv` names, or None where the overview answers first (`--help`, `--version`)."""
    for word in argv:
        if word in _OVERVIEW_OPTIONS:
            return None
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of `argv`: the command it names in full (its module imported), every other one by its name."""
    # Raw: the version lines print as written, not refilled into one paragraph.
    parser = Parser(prog="python -m pmap_core", description=__doc__.splitlines()[0],
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=version_text(versions.running()),
                        help="show the running JAX and Python beside the versions the lab was verified on")
    commands = parser.add_subparsers(dest="command", required=True)
    named = named_command(argv)
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        names = [name for name, (owner, _) in COMMANDS.items() if owner == module]
        if named in names:
            importlib.import_module(f"pmap_core.cli.{module}").register(commands)
        else:
            for name in names:
                commands.add_parser(name, help=COMMANDS[name][1])
    return parser


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """`argv` parsed, with the parser of the command it names."""
    return build_parser(argv).parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = argparse.Namespace(json=JSON_FLAG in argv)  # until parsed: a usage error answers as asked
    try:
        configure_runtime()
    except ValueError as error:  # PMAP_LAB_DEVICES
        return fail(str(error), USAGE_STATUS, _as_json(args))
    try:
        args = parse_args(argv)
        ask_json(_as_json(args))
        with _sigterm_raises():
            return int(args.run(args) or 0)
    except UsageError as error:
        error.report(_as_json(args))
    except LabInputError as error:
        return fail(str(error), USAGE_STATUS, _as_json(args), error.code)
    except Terminated:
        grouped = _in_group()
        if grouped:
            from pmap_core.cli import lost_group

            lost_group.claim()  # the group's watch must not end this process meanwhile
        _end_open_runs()
        said = f"{TERMINATED} every open MLflow run ended as KILLED with the losses logged so far"
        progress(said)
        if _as_json(args):
            json_error(said, TERMINATED_STATUS, "terminated")
        if grouped:
            from pmap_core.train import distributed

            distributed.leave_now(TERMINATED_STATUS)
        return TERMINATED_STATUS
    except Exception as error:
        _leave_a_lost_group(error)
        if not _as_json(args):
            raise
        traceback.print_exc()
        return fail(f"{type(error).__name__}: {error}", 1, True, "internal")


def _as_json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def _in_group() -> bool:
    """Whether this process joined a jax.distributed group (a command that never imported it did not)."""
    return "pmap_core.train.distributed" in sys.modules and sys.modules["pmap_core.train.distributed"].in_group()


def _leave_a_lost_group(error: Exception) -> None:
    """A process of a jax.distributed group whose collective failed says so and leaves at once (`lost_group`)."""
    if not _in_group():
        return
    from jax.errors import JaxRuntimeError

    from pmap_core.cli import lost_group

    if isinstance(error, JaxRuntimeError):
        lost_group.leave(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)


def _end_open_runs() -> None:
    """End every MLflow run this process still has open (as KILLED), after writing what it has pending."""
    if "pmap_core.tracking.mlflow_backend" in sys.modules:
        sys.modules["pmap_core.tracking.mlflow_backend"].end_open_runs_at_exit()
