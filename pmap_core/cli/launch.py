"""`python -m pmap_core launch [--via local|mpirun|srun] --processes P --devices-per-process N train …`.

`--via local` (the default) starts P local copies of `python -m pmap_core train … --coordinator-address
127.0.0.1:<free port> --num-processes P --process-id i` (each with N simulated CPU devices). `--via mpirun`
and `--via srun` have a cluster's launcher start them (`mpirun -np P`, `srun --ntasks P`), each running
`train … --cluster auto`: `jax.distributed.initialize()` with no arguments reads the coordinator, P and the
process's id from the environment mpirun or srun set (JAX's Open MPI and Slurm detectors). Either way the
launcher prints the processes' lines prefixed by the process, stops every process when one dies or time runs
out, and prints process 0's result on stdout. On a real cluster, run the same `train` command under the
cluster's own launcher (docs/DEPLOY.md: an sbatch script, mpirun), or on each machine by hand with
`--coordinator-address/--num-processes/--process-id`. The command's `--tracking-uri` reaches the processes
as `MLFLOW_TRACKING_URI`, not on their command lines, which `ps` shows to every user (a URI may hold
credentials).

`train --dataset-size S` is the per-host loading path (`pmap_core.tracking.per_host`): each process reads
only its own devices' rows of each step's global batch; process 0 records one MLflow run for the group.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from pmap_core.cli import training
from pmap_core.cli.output import JSON_FLAG, Parser, fail, progress
from pmap_core.train import launch
from pmap_core.train.config import default_batch
from pmap_core.validation import LabInputError

DEFAULT_TIMEOUT_S = 300


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "launch", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=command_help(),
        description="Start P processes that train as one through jax.distributed, stream their output, and clean\n"
                    "them all up: on 127.0.0.1 (process 0 serves the coordinator), or through mpirun or srun\n"
                    "(jax.distributed.initialize() finds the group from their environment).")
    parser.add_argument("--via", choices=launch.VIAS, default=launch.LOCAL,
                        help="what starts the processes: this command (local, the default), Open MPI's mpirun -np P, "
                             "or Slurm's srun --ntasks P")
    parser.add_argument("--processes", type=int, required=True, help=f"P (1–{launch.MAX_PROCESSES})")
    parser.add_argument("--devices-per-process", type=int, default=2, help="simulated CPU devices in each process")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds after which every process is stopped (default {DEFAULT_TIMEOUT_S})")
    parser.add_argument("--late", type=float, default=0.0,
                        help="start the last process this many seconds late (--via local only)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object on stdout: process 0's result (--json is passed on to train), "
                             "or the error that stopped the group")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command each process runs: train … (below)")
    parser.set_defaults(run=run_launch)


# The options of `train` that place a process in its group: launch sets them (check_command refuses them).
GROUP_OPTIONS = ("--coordinator-address", "--num-processes", "--process-id", "--cluster")


def command_help() -> str:
    """The settings the command `train` takes in a group: all of train's options but those launch sets."""
    parser = Parser(prog="python -m pmap_core")
    commands = parser.add_subparsers()
    training.register(commands)
    options = [action.option_strings[-1] for action in commands.choices["train"]._actions
               if action.option_strings and action.option_strings[-1] not in (*GROUP_OPTIONS, "--help")]
    listed = textwrap.fill(" ".join(options), 88, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)
    return f"the command: train with any of its settings (python -m pmap_core train --help):\n{listed}"


TRACKING_OPTION = "--tracking-uri"


def check_command(command: list[str], processes: int, devices_per_process: int) -> argparse.Namespace:
    """Refuse, before any process starts, a command the group cannot run; the command's settings."""
    if not command or command[0] != "train":
        raise LabInputError("bad_launch_command", "launch runs `train …`, got {value!r}", value=" ".join(command))
    args = training.parse(command)
    set_by_launch = (args.coordinator_address, args.num_processes != 1, args.process_id, args.cluster)
    given = [option for option, value in zip(GROUP_OPTIONS, set_by_launch, strict=True) if value]
    if given:
        raise LabInputError("launch_sets_group", "launch gives each process its place in the group; leave {option} "
                            "out of the command", option=given[0])
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


def start_group(args: argparse.Namespace, settings: argparse.Namespace) -> launch.ProcessGroup | launch.ClusterGroup:
    """The group `args` asks for, not started yet: P local processes, or P processes mpirun or srun starts."""
    command = without_tracking_uri(args.command)
    if args.via == launch.LOCAL:
        delays = [0.0] * (args.processes - 1) + [args.late]
        return launch.ProcessGroup(command, args.processes, args.devices_per_process, args.timeout, delays,
                                   tracking_uri=settings.tracking_uri, join_timeout_s=settings.init_timeout)
    if args.late:
        raise LabInputError("late_needs_local", "--late delays one process of the local launcher; {via} starts them "
                            "all at once", via=args.via)
    missing = launch.launcher_missing_reason(args.via)
    if missing:
        raise LabInputError("launcher_missing", "cannot launch through {via}: {reason}; or use --via local",
                            via=args.via, reason=missing)
    return launch.ClusterGroup(args.via, command, args.processes, args.devices_per_process, args.timeout,
                               tracking_uri=settings.tracking_uri, join_timeout_s=settings.init_timeout)


def run_launch(args: argparse.Namespace) -> int:
    args.json = args.json or JSON_FLAG in args.command  # a failure answers as the result would
    if args.json and JSON_FLAG not in args.command:
        args.command = [*args.command, JSON_FLAG]
    settings = check_command(args.command, args.processes, args.devices_per_process)
    with start_group(args, settings) as group:
        progress(f"launching {args.processes} processes × {args.devices_per_process} devices"
                 f"{'' if args.via == launch.LOCAL else ' through ' + args.via}, coordinator {group.address}")
        for line in group.lines():
            if line is not None and line.stream != "stdout":
                who = "launcher" if line.process < 0 else f"process {line.process}"
                progress(f"[{who}] {line.text}")
        outcome = group.outcome()
    if not outcome.ok:
        return fail(f"the run did not finish: {launch.describe_failure(outcome)}; every process has ended", 1,
                    args.json, "run_failed")
    sys.stdout.write(outcome.stdout[0] + "\n")
    return 0
