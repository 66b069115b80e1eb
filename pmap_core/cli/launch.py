"""`python -m pmap_core launch --processes P --devices-per-process N train …`: one machine, P processes.

The launcher starts P local copies of `python -m pmap_core train … --coordinator-address
127.0.0.1:<free port> --num-processes P --process-id i` (each with N simulated CPU devices), prints
their output lines prefixed by the process, stops every process when one dies or time runs out,
and prints process 0's result on stdout. On a real cluster, start the same `train` command on
each machine by hand with `--coordinator-address/--num-processes/--process-id`.

`train --dataset-size S` is the per-host loading path (`data_loading`): each process reads only
its own devices' rows of each step's global batch; process 0 records one MLflow run for the group.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from typing import Any

import numpy as np

from pmap_core.cli.output import emit, progress, stdout_to_stderr
from pmap_core.train import launch
from pmap_core.train import loading as data_loading
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


def check_command(command: list[str], processes: int, devices_per_process: int) -> None:
    """Refuse, before any process starts, a command the group cannot run."""
    if not command or command[0] != "train":
        raise LabInputError("bad_launch_command", "launch runs `train …`, got {value!r}", value=" ".join(command))
    from pmap_core.cli.commands import build_parser

    args = build_parser().parse_args(command)
    launch.check_group(processes, devices_per_process, args.global_batch, args.devices, args.dataset_size)


def run_launch(args: argparse.Namespace) -> int:
    check_command(args.command, args.processes, args.devices_per_process)
    delays = [0.0] * (args.processes - 1) + [args.late]
    with launch.ProcessGroup(args.command, args.processes, args.devices_per_process, args.timeout,
                             delays) as group:
        progress(f"launching {args.processes} processes × {args.devices_per_process} devices, "
                 f"coordinator {group.address}")
        for line in group.lines():
            if line is not None and line.stream != "stdout":
                who = "launcher" if line.process < 0 else f"process {line.process}"
                progress(f"[{who}] {line.text}")
        outcome = group.outcome()
    if not outcome.ok:
        reason = "time limit reached" if outcome.timed_out else (
            f"process {outcome.dead} failed ({launch.describe_exit(outcome.returncodes[outcome.dead])})"
            if outcome.dead is not None else "a process failed")
        print(f"error: the run did not finish: {reason}; every process has ended", file=sys.stderr)
        return 1
    sys.stdout.write(outcome.stdout[0] + "\n")
    return 0


def run_per_host(args: argparse.Namespace) -> int:
    """`train --dataset-size S` in this process: its share of the group's training, then the result."""
    from jax.errors import JaxRuntimeError

    from pmap_core.cli.training import join_and_configure, make_tracker
    from pmap_core.train.config import validate

    with stdout_to_stderr():
        config, info = join_and_configure(args)
        config = validate(config)
        data_loading.check_sizes(args.dataset_size, config.global_batch, config.devices)
        tracker = make_tracker(args, info)
        progress(f"process {info.process_id} of {info.num_processes}: {info.local_devices} local devices "
                 f"of {config.devices}, reading only its rows of each global batch of {config.global_batch}")
        try:
            summary = _train_and_log(args, config, tracker)
        except JaxRuntimeError as error:
            first = str(error).strip().splitlines()[0]
            print(f"error: process {info.process_id} lost contact with the group: {first}", file=sys.stderr)
            return 1
    emit(summary, args.json)
    return 0


def _train_and_log(args: argparse.Namespace, config: Any, tracker: Any) -> dict[str, Any]:
    import jax
    from jax.experimental import multihost_utils

    from pmap_core.tracking import runtime_tags
    from pmap_core.tracking.callback import run_name, run_params

    def on_step(step: int, loss: float) -> None:
        progress(f"step {step}/{config.steps}  loss {loss:.6g}")

    count = jax.process_count()
    params = {**run_params(config), "num_processes": count, "dataset_size": args.dataset_size}
    with tracker.run(f"{run_name(config)}-P{count}", params, runtime_tags("multiprocess")) as run_id:
        result = data_loading.train_per_host(config, args.dataset_size, on_step)
        # A collective over the processes: every one sends its timings, process 0 records them all.
        mine = np.asarray([result.step_times_s, result.load_times_s])
        times = np.asarray(multihost_utils.process_allgather(mine)).reshape(count, 2, -1)
        timings = process_timings(times[:, 0], times[:, 1])
        tracker.log_series(run_id, "loss", result.losses)
        tracker.log_metrics(run_id, {
            "final_loss": result.losses[-1], "num_processes": count, "compile_time_s": result.compile_time_s,
            "throughput": config.steps * config.global_batch / float(np.sum(times[0])),
            "step_time_s": statistics.median(result.step_times_s), **timings})
    logged = result.process_index == 0 and not args.no_tracking
    return {**host_summary(result), "timings": timings, "run_id": tracker.store_run_id(run_id) if logged else None,
            "impl": config.impl, "devices": config.devices, "global_batch": config.global_batch}


def process_timings(step_times: np.ndarray, load_times: np.ndarray) -> dict[str, float]:
    """Per process: the median step time and the median time to read its rows and build the arrays."""
    out: dict[str, float] = {}
    for i, (steps, loads) in enumerate(zip(step_times, load_times, strict=True)):
        out[f"step_time_s.process_{i}"] = float(np.median(steps))
        out[f"load_time_s.process_{i}"] = float(np.median(loads))
    return out


def host_summary(result: data_loading.HostResult) -> dict[str, Any]:
    """A HostResult as JSON: arrays as nested lists."""
    summary = dataclasses.asdict(result)
    summary["params"] = {name: np.asarray(value).tolist() for name, value in result.params.items()}
    return json.loads(json.dumps(summary, default=float))
