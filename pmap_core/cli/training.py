"""`python -m pmap_core train …` and `python -m pmap_core sweep …`: the training lab, headless.

Both run what the training page runs (`train.loop.train`, `train.loop.sweep`, with a
`TrackingCallback`) and record MLflow runs in the same store under the same metric names.
`sweep --meshes all` trains the MLP once per data × model shape of D instead
(`concepts.mesh_2d.sweep_meshes`, what the mesh_2d page runs), or with `--mesh-axis seq` the transformer once
per data × seq shape (context parallelism): one child run per shape.
Progress goes to stderr; the result to stdout (`--json`: one JSON object). With
`--coordinator-address/--num-processes/--process-id` several processes train as one through
`jax.distributed`; only process 0 writes to MLflow.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from mlflow.tracking import MlflowClient

from pmap_core import profiling
from pmap_core.cli import lost_group
from pmap_core.cli.output import Parser, emit, json_error, progress, stdout_to_stderr
from pmap_core.concepts import mesh_2d
from pmap_core.profiling import record
from pmap_core.tracking import (
    NullTracker,
    RunTracker,
    check_tracking_uri,
    mlflow_ui_url,
    per_host,
    redact_uri,
    run_link,
    store_uri,
    tracking_uri,
)
from pmap_core.tracking.callback import TrackingCallback, mesh_of, point_metrics, result_metrics
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import config as train_config
from pmap_core.train import distributed, loading, loop, programs
from pmap_core.train import mesh as train_mesh
from pmap_core.train import plan as train_plan
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.train.settings import declarations, defaults, help_of, settings_of
from pmap_core.validation import LabInputError, check_devices


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """`argv` (`train …` or `sweep …`) parsed as `python -m pmap_core` parses it."""
    parser = Parser(prog="python -m pmap_core")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(list(argv))


def register(subparsers: Any) -> None:
    train = subparsers.add_parser("train", description="Train one model data-parallel (pmap, shard_map or jit); "
                                                       "log the run to MLflow.")
    _add_settings(train)
    _add_profile_options(train)
    train.set_defaults(run=run_train)
    sweep = subparsers.add_parser("sweep", description="Train once per device count; throughput, scaling ratio and "
                                                       "efficiency against D = 1, as a parent MLflow run with one "
                                                       "child per D (one process: a multi-process group has no "
                                                       "smaller D).")
    _add_settings(sweep, sweep=True)
    sweep.add_argument("--device-counts", type=_int_list, default=None,
                       help="comma-separated device counts (default: 1, 2, 4, … up to --devices)")
    sweep.add_argument("--meshes", type=_meshes, default=None, metavar="all|XxY,…",
                       help="instead of device counts, train the MLP (impl tensor) once per data × model shape of "
                            "--devices devices: all of them (the model axis dividing --hidden), or the listed "
                            "shapes, e.g. 4x2,2x4; one child run per shape")
    sweep.add_argument("--mesh-axis", choices=tuple(mesh_2d.SWEEP_AXES), default=train_mesh.MODEL_AXIS,
                       help="with --meshes, the axis beside data: model (impl tensor, the MLP unless --model says "
                            "otherwise) or seq (impl context: the transformer, its --context scheme, every shape "
                            "whose seq axis the scheme accepts) (default: %(default)s)")
    sweep.set_defaults(run=run_sweep)


def _add_profile_options(parser: argparse.ArgumentParser) -> None:
    """--profile and its options: how a run is observed, not a setting of its program."""
    group = parser.add_argument_group("profile (JAX's profiler)")
    group.add_argument("--profile", action="store_true",
                       help="after training, trace --profile-steps steps of the run's program (after one warm-up "
                            "call, from its initial parameters) with JAX's profiler: the trace (.xplane.pb, "
                            "perfetto_trace.json.gz) under --profile-dir and in the MLflow run's artifact folder "
                            "profile/; the output gains profile: the trace's path and each device's compute, "
                            "collective, waiting and idle seconds per step. A failed trace fails nothing: it says why")
    group.add_argument("--profile-steps", type=_profile_steps, default=profiling.DEFAULT_PROFILE_STEPS,
                       help=f"steps traced (1–{profiling.MAX_PROFILE_STEPS}; default: %(default)s)")
    group.add_argument("--profile-dir", default="profiles",
                       help="the log directory the trace is written to, as XProf reads it (xprof server --logdir DIR) "
                            "(default: %(default)s)")


def _profile_steps(text: str) -> int:
    try:
        return profiling.check_steps(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {profiling.MAX_PROFILE_STEPS}, "
                                         f"got {text!r}") from None


def _profile(args: argparse.Namespace, config: train_config.TrainConfig, tracked: Any,
             info: distributed.ProcessInfo) -> dict[str, Any]:
    """`--profile`: the run's program traced after its training and logged to its run; what went wrong is said
    once and fails nothing."""
    if info.num_processes > 1:
        result: dict[str, Any] = {"error": "--profile traces a run of one process"}
    else:
        run_id = tracked.run_id if tracked.run_id and not tracked.fell_back_to and not args.no_tracking else None
        result = record.profile_and_log(config, args.profile_steps, os.path.abspath(args.profile_dir),
                                        tracked.tracking_uri, run_id)
    progress(f"profile: {result['error']}" if "error" in result else f"profile: the trace is {result['trace']}")
    return result


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def setting_owners() -> dict[str, list[dataclasses.Field]]:
    """Every setting a run may be given, under the impl of the program that declares it ("": TrainConfig's own,
    those of every run), in the registry's order: each name once."""
    owners: dict[str, list[dataclasses.Field]] = {"": list(settings_of(train_config.TrainConfig))}
    for entry in programs.REGISTRY.values():
        if entry.settings:
            owners.setdefault(entry.selected_by, []).extend(settings_of(entry.settings))
    return owners


def setting_fields(flags: bool = True) -> list[dataclasses.Field]:
    """Every setting a run may be given (`flags`: those with a flag of their own): TrainConfig's own, then each
    registered program's (the field of the program that owns it: its help, choices, limits)."""
    return [field for fields in setting_owners().values() for field in fields if field.metadata["flag"] or not flags]


def _add_settings(parser: argparse.ArgumentParser, sweep: bool = False) -> None:
    add = parser.add_argument
    for impl, fields in setting_owners().items():
        group = parser.add_argument_group(f"impl {impl}'s settings") if impl else parser
        for field in (field for field in fields if field.metadata["flag"]):
            meta = field.metadata
            group.add_argument("--" + field.name.replace("_", "-"), type=meta["kind"], choices=meta["choices"],
                               default=meta["cli_default"], help=help_of(field) or None)
    impls = programs.impls()
    add("--impl", choices=(*impls, "all") if sweep else impls, default=None,
        help=f"how the step is written: pmap, shard_map or jit with shardings, or a registered program "
             f"(default: {train_config.TrainConfig.impl}; jit when --optimizer/--strategy/--accum-steps/--grad-dtype/"
             "--precision leave the replicated SGD step)" + ("; all: every implementation at every D" if sweep else ""))
    add("--tracking-uri", default=None, help="MLflow store (default: $MLFLOW_TRACKING_URI or sqlite:///mlflow.db)")
    add("--no-tracking", action="store_true", help="do not log to MLflow")
    add("--json", action="store_true", help="print one JSON object on stdout")
    group = parser.add_argument_group("multi-process (jax.distributed)")
    group.add_argument("--coordinator-address", default=None, help="host:port of process 0")
    group.add_argument("--num-processes", type=int, default=1)
    group.add_argument("--process-id", type=int, default=0)
    group.add_argument("--init-timeout", type=int, default=120,
                       help="seconds to wait for every process to join (default 120)")
    group.add_argument("--heartbeat-timeout", type=int, default=100,
                       help="seconds without a heartbeat after which a process counts as dead (default 100)")
    group.add_argument("--cluster", choices=(distributed.AUTO, *distributed.CLUSTERS), default=None,
                       help="join the group a cluster's launcher started (srun, mpirun, a Kubernetes Job): "
                            "jax.distributed.initialize() reads the coordinator, the number of processes and this "
                            "process's id from its environment; auto: the first detector that finds its launcher")
    if not sweep:
        add("--mesh", type=_mesh, default=None, metavar="data=X,AXIS=Y",
            help=_mesh_help())
        group.add_argument("--dataset-size", type=int, default=0,
                           help="train on a dataset of this many samples, shuffled per epoch, each process "
                                "reading only its own devices' rows (default: one fixed global batch)")


def _meshes(text: str) -> str | list[tuple[int, int]]:
    """"all", or "4x2,2x4" -> [(4, 2), (2, 4)]."""
    if text.strip() == "all":
        return "all"
    try:
        shapes = [tuple(int(n) for n in part.lower().split("x")) for part in text.split(",") if part.strip()]
        if shapes and all(len(shape) == 2 for shape in shapes):
            return shapes
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"expected all, or shapes such as 4x2,2x4, got {text!r}")


def _mesh_help() -> str:
    """`--mesh`'s help, from each axis's declaration by the program that splits over it (`setting(..., axis=)`)."""
    axes = train_config.axis_fields()
    owners = {declarations()[name] for name in axes.values()}
    fields = {field.name: field for cls in owners for field in settings_of(cls)}
    beside = " ".join(f"{axis} (impl {programs.impl_of_axis(axis)}): {help_of(fields[name])}."
                      for axis, name in axes.items())
    return (f"the run's layout over X·Y devices, one size per mesh axis ({train_mesh.DATA_AXIS}, {', '.join(axes)}), "
            f"the batch over {train_mesh.DATA_AXIS}; the axis beside it selects the program that owns it. {beside}")


def _mesh(text: str) -> dict[str, int]:
    """"data=2,stage=4" -> {"data": 2, "stage": 4}: mesh axes as `train.mesh` names them, each with a whole number
    of devices ≥ 1."""
    try:
        sizes = {axis.strip(): int(size) for axis, size in (part.split("=") for part in text.split(","))}
    except ValueError:
        sizes = {}
    unknown = [axis for axis in sizes if axis not in train_mesh.MESH_AXES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown mesh axis {unknown[0]!r} in {text!r}; "
                                         f"the mesh axes are {', '.join(train_mesh.MESH_AXES)}")
    if not sizes or min(sizes.values()) < 1:
        raise argparse.ArgumentTypeError(f"expected axis=size pairs such as data=2,model=4 or data=2,stage=4, with "
                                         f"whole numbers ≥ 1, got {text!r}")
    return sizes


def _with_batch(config: train_config.TrainConfig, args: argparse.Namespace) -> train_config.TrainConfig:
    """The batch asked for, or the default for the run's devices and micro-batches."""
    if args.global_batch is not None:
        return dataclasses.replace(config, global_batch=args.global_batch)
    return dataclasses.replace(config, global_batch=train_config.default_batch(config.devices, config.accum_steps))


def join_and_configure(args: argparse.Namespace) -> tuple[train_config.TrainConfig, distributed.ProcessInfo]:
    """Join the process group (before any JAX work), then build the config the user asked for."""
    info = distributed.join_group(args.coordinator_address, args.num_processes, args.process_id,
                                  args.init_timeout, args.heartbeat_timeout, args.cluster, lost_group.leave)
    model = args.model or _meshes_model(args)
    given = {field.name: getattr(args, field.name) for field in setting_fields()
             if field.name not in ("model", "devices", "global_batch", "pipeline_stages")}
    flat = train_config.setting_names()
    config = train_config.TrainConfig(
        model=model, devices=args.devices if args.devices is not None else info.global_devices,
        global_batch=args.global_batch or 0, options=_options(given, args.impl, flat),
        **{name: value for name, value in given.items() if name in flat},
    )
    impl = {None: _selected_impl(config), "all": IMPLEMENTATIONS[0]}.get(args.impl, args.impl)
    mesh = getattr(args, "mesh", None)
    stages = getattr(args, "pipeline_stages", None)
    if mesh is None and stages is not None:  # the older flag: P stages, on P devices unless --devices says more
        devices = args.devices if args.devices is not None else stages
        mesh = {train_mesh.DATA_AXIS: max(1, devices // stages), train_mesh.STAGE_AXIS: stages}
        if devices % stages:  # the pipeline's own check says why
            impl = programs.impl_of_axis(train_mesh.STAGE_AXIS)
            return _with_batch(dataclasses.replace(config, impl=impl, devices=devices, pipeline_stages=stages),
                               args), info
    if mesh is not None:
        return _with_batch(_on_mesh(config, mesh, args.devices), args), info
    return _with_batch(dataclasses.replace(config, impl=impl), args), info


def _selected_impl(config: train_config.TrainConfig) -> str:
    """The impl of a run that names none: that of the first program one of whose selecting settings
    (`Program.selects`) the run sets away from its default, else TrainConfig's."""
    for entry in programs.REGISTRY.values():
        own = defaults(entry.settings) if entry.settings else {}
        if any(getattr(config, name) != own[name] for name in entry.selects):
            return entry.selected_by
    return config.impl


def _meshes_model(args: argparse.Namespace) -> str:
    """The model a run trains when none is named: a sweep of meshes the MLP on data × model, the transformer on
    data × seq (the only model with positions); otherwise TrainConfig's."""
    if getattr(args, "meshes", None) is None:
        return train_config.TrainConfig.model
    return "transformer" if args.mesh_axis == train_mesh.SEQ_AXIS else "mlp"


def _on_mesh(config: train_config.TrainConfig, mesh: dict[str, int], devices: int | None) -> train_config.TrainConfig:
    """The run `--mesh data=X,<axis>=Y` asks for (`config.mesh`): the product of the sizes as D, each axis's size,
    and the impl of the program that owns the first axis beside data (`validate` refuses a second one that no
    program composes with it)."""
    size = math.prod(mesh.values())
    if devices is not None and devices != size:
        raise LabInputError("mesh_devices", "--mesh {mesh} uses {size} devices, not {devices}",
                            mesh=train_config.mesh_label(mesh), size=size, devices=devices)
    fields = train_config.axis_fields()
    others = [axis for axis in train_mesh.MESH_AXES if axis in mesh and axis != train_mesh.DATA_AXIS]
    impl = programs.impl_of_axis(others[0]) if others else config.impl
    return dataclasses.replace(config, impl=impl, devices=size, **{fields[axis]: mesh[axis] for axis in others})


def _options(given: dict[str, Any], impl: str | None, flat: set[str]) -> tuple[tuple[str, Any], ...]:
    """The settings of the registered program `impl` that are not TrainConfig's own (`TrainConfig.options`)."""
    entry = programs.REGISTRY.get(impl or "")
    owned = {field.name for field in settings_of(entry.settings)} if entry and entry.settings else set()
    return tuple(sorted((name, value) for name, value in given.items() if name in owned and name not in flat))


def make_tracker(args: argparse.Namespace, info: distributed.ProcessInfo) -> RunTracker:
    """Only process 0 writes to MLflow: one run per training, however many processes took part."""
    if args.no_tracking or not info.is_leader:
        return NullTracker()
    # A store that fails, now or during the run, is left for the fallback store: the tracker says so in one line.
    return Tracker(check_tracking_uri(args.tracking_uri or tracking_uri()))  # a hopeless store: exit 2


def _report_untracked(tracked: Any) -> None:
    if tracked.error:
        progress(f"tracking: the run could not be recorded ({tracked.error}); the result below is complete")


def _chunk_progress(steps_done: int, losses: Sequence[float], total: int) -> None:
    progress(f"step {steps_done}/{total}  loss {losses[-1]:.6g}")


def _point_progress(point: loop.SweepPoint, index: int, total: int) -> None:
    result = point.result
    progress(f"run {index + 1}/{total}: D = {point.devices} ({result.config.impl}), "
             f"{result.throughput:,.0f} samples/s, final loss {result.final_loss:.6g}")


def _run_summary(result: loop.TrainResult, scaling: dict[str, float]) -> dict[str, Any]:
    """One run as the JSON reports it: the settings marked `reported` (those of one model only for its runs),
    a registered program's own, then the metrics under MLflow's names."""
    config = result.config
    settings = {field.name: getattr(config, field.name) for field in setting_fields(flags=False)
                if field.metadata["reported"] in (True, config.model) and hasattr(config, field.name)}
    summary: dict[str, Any] = {
        **settings, **config.derived(), **dict(config.options),
        "scaling_ratio": None, "efficiency": None, "hardware_ceiling": None, "baseline_throughput": None,
        **result_metrics(result), **scaling, "replicas_identical": result.replicas_identical,
    }
    if config.model == "linear":
        summary["params"] = {name: float(value) for name, value in result.params.items()}
    return summary


def mlflow_run_url(tracked: Any) -> str | None:
    """The run's page in MLflow's UI, made as the app makes its "Open in MLflow" links (PMAP_LAB_MLFLOW_UI_URL,
    the Model-training view); None for a run in the fallback store (the UI shows the class store)."""
    if tracked.fell_back_to or not tracked.run_id:
        return None
    try:
        experiment = MlflowClient(store_uri(tracked.tracking_uri)).get_run(tracked.run_id).info.experiment_id
    except Exception:  # noqa: BLE001 - a store that stopped answering: no link, the run id is printed
        return None
    return run_link(mlflow_ui_url(tracked.tracking_uri), experiment, tracked.run_id)


def _tracking_fields(tracked: Any, info: distributed.ProcessInfo) -> dict[str, Any]:
    logged = info.is_leader and tracked.tracking_uri != NullTracker.active_uri
    return {
        "run_id": tracked.run_id if logged else None,
        "mlflow_run_url": mlflow_run_url(tracked) if logged else None,
        "tracking_uri": redact_uri(tracked.tracking_uri) if logged else None,
        "fell_back_to": tracked.fell_back_to,
        "logging_s": tracked.logging_s,
        "process_id": info.process_id,
        "num_processes": info.num_processes,
    }


INTERRUPTED_STATUS = 130  # 128 + SIGINT, as a shell reports Ctrl-C


def _interruptible(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Ctrl-C stops the command with status 130 and a line saying the run ended as KILLED, not a traceback."""
    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except KeyboardInterrupt:
            said = "interrupted: the MLflow run ended as KILLED"
            progress(said)
            if args.json:
                json_error(said, INTERRUPTED_STATUS, "interrupted")
            return INTERRUPTED_STATUS

    return run


@_interruptible
def run_train(args: argparse.Namespace) -> int:
    if args.dataset_size:
        return _run_per_host(args)
    with stdout_to_stderr():
        config, info = join_and_configure(args)
        config = train_plan.validate(config, train_config.HEADLESS_MAX_WORK)
        tracker = make_tracker(args, info)
        progress(f"training {config.model} with {config.impl} on {config.devices} devices "
                 f"(process {info.process_id} of {info.num_processes}), global batch {config.global_batch}")
        tracking = TrackingCallback(tracker)
        chunks = loop.Progress(on_chunk=functools.partial(_chunk_progress, total=config.steps))
        tracked = tracking.tracked(loop.train(config, [tracking, chunks]))
        _report_untracked(tracked)
        profile = {"profile": _profile(args, config, tracked, info)} if args.profile else {}
    emit({**_run_summary(tracked.result, {}), **_tracking_fields(tracked, info), **profile}, args.json)
    return 0


def _run_per_host(args: argparse.Namespace) -> int:
    """`train --dataset-size S` in this process: its share of the group's training, then the result."""
    with stdout_to_stderr():
        config, info = join_and_configure(args)
        config = train_plan.validate(config, train_config.HEADLESS_MAX_WORK)
        loading.check_sizes(args.dataset_size, config.global_batch, config.devices)
        tracker = make_tracker(args, info)
        progress(f"process {info.process_id} of {info.num_processes}: {info.local_devices} local devices "
                 f"of {config.devices}, reading only its rows of each global batch of {config.global_batch}")
        # A lost process fails a collective here (JaxRuntimeError): commands.main says it and leaves at once.
        summary = per_host.run_per_host(config, args.dataset_size, tracker,
                                        lambda step, loss: _chunk_progress(step, [loss], config.steps))
    emit(summary, args.json)
    return 0


@_interruptible
def run_sweep(args: argparse.Namespace) -> int:
    if args.meshes is not None:
        return _run_mesh_sweep(args)
    with stdout_to_stderr():
        config, info = join_and_configure(args)
        counts = [check_devices(count) for count in args.device_counts] if args.device_counts else None
        config = train_plan.validate(config, train_config.HEADLESS_MAX_WORK)
        impls = IMPLEMENTATIONS if args.impl == "all" else None
        train_plan.check_sweep(config, counts, impls, train_config.HEADLESS_MAX_WORK)
        tracker = make_tracker(args, info)
        tracking = TrackingCallback(tracker)
        sweep = loop.sweep(config, counts, [tracking, loop.Progress(on_point=_point_progress)], impls)
        tracked = tracking.tracked_sweep(sweep)
        _report_untracked(tracked)
    logged = info.is_leader and not args.no_tracking
    runs = [{**_run_summary(point.result, point_metrics(point)), "run_id": child if logged else None}
            for point, child in zip(sweep.points, tracked.child_run_ids, strict=True)]
    summary = {"mode": sweep.mode, "runs": runs, **_tracking_fields(tracked, info)}
    _emit_runs(summary, args.json)
    return 0


def _emit_runs(summary: dict[str, Any], as_json: bool) -> None:
    """A sweep's result: the whole summary as JSON, or its runs as lines and the rest after them."""
    if as_json:
        emit(summary, True)
    else:
        _print_runs(summary["runs"])
        emit({k: v for k, v in summary.items() if k != "runs"}, False)


def _print_runs(runs: list[dict[str, Any]]) -> None:
    for run in runs:
        mesh = f" mesh {run['mesh']}" if "," in run["mesh"] else ""
        print(f"{run['impl']} D={run['devices']}{mesh}: throughput {run['throughput']:,.0f} samples/s, "
              f"S={run['scaling_ratio']:.3f}, E={run['efficiency']:.3f}, final loss {run['final_loss']:.6g}")


def _mesh_progress(point: loop.SweepPoint, index: int, total: int) -> None:
    config, result = point.result.config, point.result
    axis = programs.extras(config.impl).mesh_axis
    progress(f"run {index + 1}/{total}: mesh data={config.mesh_data},{axis}={mesh_of(config)[1]}, "
             f"{result.steady_throughput:,.0f} samples/s steady, "
             f"{result.footprint.comm_bytes_per_step:,.0f} bytes sent per step per device")


def _run_mesh_sweep(args: argparse.Namespace) -> int:
    """`sweep --meshes …`: one run per data × model (or, `--mesh-axis seq`, data × seq) shape of D devices, under
    one parent run."""
    if args.device_counts or args.impl is not None:
        raise LabInputError("meshes_alone", "--meshes trains every shape of one D with its axis's program (tensor on "
                            "model, context on seq); leave out {option}",
                            option="--device-counts" if args.device_counts else "--impl")
    shapes = None if args.meshes == "all" else args.meshes
    if shapes and args.devices is None:
        args.devices = shapes[0][0] * shapes[0][1]
    with stdout_to_stderr():
        config, info = join_and_configure(args)
        mesh_2d.mesh_configs(config, shapes, args.mesh_axis)  # every shape checked before the first run
        tracker = make_tracker(args, info)
        tracking = TrackingCallback(tracker)
        meshes = mesh_2d.sweep_meshes(config, _mesh_progress, [tracking], shapes, args.mesh_axis)
        tracked = tracking.tracked_sweep(meshes.sweep)
        _report_untracked(tracked)
    logged = info.is_leader and not args.no_tracking
    runs = [{**_run_summary(run.result, point_metrics(run.point)), "run_id": child if logged else None,
             "collectives": [dataclasses.asdict(row) for row in run.collectives]}
            for run, child in zip(meshes.runs, tracked.child_run_ids, strict=True)]
    fastest = meshes.fastest
    summary = {"mode": meshes.config.scaling, "axis": meshes.axis,
               "meshes": [f"{r.data}x{r.model}" for r in meshes.runs],
               "skipped": [f"{d}x{m}" for d, m in meshes.skipped], "fastest": f"{fastest.data}x{fastest.model}",
               "runs": runs, **_tracking_fields(tracked, info)}
    _emit_runs(summary, args.json)
    return 0
