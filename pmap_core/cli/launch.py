"""`python -m pmap_core launch --processes P --devices-per-process N train …`: one machine, P processes.

The launcher starts P local copies of `python -m pmap_core train … --coordinator-address
127.0.0.1:<free port> --num-processes P --process-id i` (each with N simulated CPU devices), prints
their output lines prefixed by the process, stops every process when one dies or time runs out,
and prints process 0's result on stdout. On a real cluster, start the same `train` command on
each machine by hand with `--coordinator-address/--num-processes/--process-id`. The command's
`--tracking-uri` reaches the processes as `MLFLOW_TRACKING_URI`, not on their command lines, which `ps`
shows to every user (a URI may hold credentials).

`train --dataset-size S` is the per-host loading path (`pmap_core.tracking.per_host`): each process reads
only its own devices' rows of each step's global batch; process 0 records one MLflow run for the group.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pmap_core.cli import training
from pmap_core.cli.output import progress
from pmap_core.train import launch
from pmap_core.train.config import default_batch
from pmap_core.validation import LabInputError

DEFAULT_TIMEOUT_S = 300


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "launch", help="start P local jax.distributed processes running one command",
        description="Start P processes on 127.0.0.1 that train as one through jax.distributed "
                    "(process 0 serves the coordinator), stream their output, and clean them all up.")
    parser.add_argument("--processes", type=int, required=True, help=f"P (1–{launch.MAX_PROCESSES})")
    parser.add_argument("--devices-per-process", type=int, default=2, help="simulated CPU devices in each process")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds after which every process is stopped (default {DEFAULT_TIMEOUT_S})")
    parser.add_argument("--late", type=float, default=0.0, help="start the last process this many seconds late")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command each process runs: train …")
    parser.set_defaults(run=run_launch)


TRACKING_OPTION = "--tracking-uri"


def check_command(command: list[str], processes: int, devices_per_process: int) -> argparse.Namespace:
    """Refuse, before any process starts, a command the group cannot run; the command's settings."""
    if not command or command[0] != "train":
        raise LabInputError("bad_launch_command", "launch runs `train …`, got {value!r}", value=" ".join(command))
    args = training.parse(command)
    batch = args.global_batch or default_batch(args.devices or processes * devices_per_process, args.accum_steps)
    launch.check_group(processes, devices_per_process, batch, args.devices, args.dataset_size)
    return args


def without_tracking_uri(command: list[str]) -> list[str]:
    """`command` less its `--tracking-uri` options (`--tracking-uri X`, `--tracking-uri=X`, or a prefix
    argparse accepts, such as `--tracking X`): the processes get the URI through their environment."""
    kept, skip_value = [], False
    for token in command:
        name, has_value, _ = token.partition("=")
        if skip_value:
            skip_value = False
        elif name.startswith("--") and len(name) > 2 and TRACKING_OPTION.startswith(name):
            skip_value = not has_value
        else:
            kept.append(token)
    return kept


def run_launch(args: argparse.Namespace) -> int:
    settings = check_command(args.command, args.processes, args.devices_per_process)
    delays = [0.0] * (args.processes - 1) + [args.late]
    with launch.ProcessGroup(without_tracking_uri(args.command), args.processes, args.devices_per_process,
                             args.timeout, delays, tracking_uri=settings.tracking_uri,
                             join_timeout_s=settings.init_timeout) as group:
        progress(f"launching {args.processes} processes × {args.devices_per_process} devices, "
                 f"coordinator {group.address}")
        for line in group.lines():
            if line is not None and line.stream != "stdout":
                who = "launcher" if line.process < 0 else f"process {line.process}"
                progress(f"[{who}] {line.text}")
        outcome = group.outcome()
    if not outcome.ok:
        print(f"error: the run did not finish: {launch.describe_failure(outcome)}; every process has ended",
              file=sys.stderr)
        return 1
    sys.stdout.write(outcome.stdout[0] + "\n")
    return 0
