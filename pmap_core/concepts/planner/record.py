"""A plan as an MLflow run, and back: `log_plan` records one `PlanResult` as a run of its own experiment
(`PLAN_EXPERIMENT`, apart from the training runs the Experiments page compares), with one child run per checked
layout (MLflow's `mlflow.parentRunId` tag, which `Tracker.start_run(parent_run_id=…)` writes); `read_plan` reads
a plan run back with its children.

The plan run's params: the model, the hardware (each with its source), the devices, the workload, the assumptions
and the chosen layout (the first plan that fits; none fitting, the one with least memory), each layout field under
`layout.`; the verdict's parts under `verdict.`. Its metrics: the chosen layout's predictions (`memory.*` in bytes,
`comm.<axis>.bytes|seconds`, `compute_s`, `bubble`, `step_s`, `mfu`, `hfu`, …) and how many layouts fit
(`plans_fitting`, `plans_unfit`).

A check is any object with the fields of `check.CheckedPlan` (layout, prediction, compiled_peak_bytes,
predicted_bytes, hlo_bytes, memory_ratio, axis_ratios, reasons): its child run holds the layout's params and its
predicted beside its compiled program's figures (`predicted.*`; `compiled.peak_bytes`, compiler-reported, and
`hlo.bytes.*`, read from the HLO; `ratio.*`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pmap_core.concepts.planner.predict import Layout, Prediction
from pmap_core.concepts.planner.search import PlanResult
from pmap_core.tracking import check_tracking_uri, store_uri, stored_count
from pmap_core.validation import LabInputError

PLAN_EXPERIMENT = "pmap-lab-plans"
LAB_TAG = "planner"
PLAN_KIND, CHECK_KIND = "plan", "plan_check"
LAYOUT_PREFIX = "layout."
PARENT_TAG = "mlflow.parentRunId"
MAX_CHILDREN = 1000
_RUN_ID = re.compile(r"[0-9a-f]{32}")


@dataclasses.dataclass(frozen=True)
class StoredRun:
    """One run as the store holds it; a plan run carries its check runs in `children`, in the order logged."""

    run_id: str
    name: str
    status: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    children: tuple[StoredRun, ...] = ()

    def layout(self) -> Layout:
        """The layout the run's `layout.*` params name."""
        return layout_from_params(self.params)


def layout_params(layout: Layout) -> dict[str, Any]:
    """A layout's fields as params, under `layout.`, with its label."""
    fields = {LAYOUT_PREFIX + name: value for name, value in dataclasses.asdict(layout).items()}
    return {**fields, LAYOUT_PREFIX + "devices": layout.devices, LAYOUT_PREFIX + "label": layout.label()}


def layout_from_params(params: Mapping[str, str]) -> Layout:
    values: dict[str, Any] = {}
    for field in dataclasses.fields(Layout):
        text = params.get(LAYOUT_PREFIX + field.name)
        if text is None:
            continue
        if field.type in ("bool", bool):
            values[field.name] = text == "True"
        elif field.type in ("int", int):
            values[field.name] = int(text)
        else:
            values[field.name] = text
    return Layout(**values)


def prediction_metrics(p: Prediction, prefix: str = "") -> dict[str, float]:
    """A prediction's figures as metrics: memory parts in bytes, bytes and seconds per mesh axis, compute, bubble,
    step time, MFU, HFU, whether it fits (1/0)."""
    memory = {f"memory.{name}": value for name, value in dataclasses.asdict(p.memory).items()}
    figures = {**memory, "memory.total": p.memory.total, "memory.budget": p.memory_budget,
               "compute_s": p.compute_s, "bubble": p.bubble, "exposed_comm_s": p.exposed_comm_s,
               "step_s": p.step_s, "mfu": p.mfu, "hfu": p.hfu, "model_flops": p.model_flops,
               "hardware_flops": p.hardware_flops, "fits": float(p.fits)}
    for comm in p.comm:
        figures[f"comm.{comm.axis}.bytes"] = comm.bytes
        figures[f"comm.{comm.axis}.seconds"] = comm.seconds
    return {prefix + name: value for name, value in figures.items()}


def comm_params(p: Prediction) -> dict[str, Any]:
    """Where each axis's communication runs: its size, level (node or cluster) and link."""
    out: dict[str, Any] = {}
    for comm in p.comm:
        out.update({f"comm.{comm.axis}.size": comm.size, f"comm.{comm.axis}.level": comm.level,
                    f"comm.{comm.axis}.link": comm.link})
    return out


def chosen(result: PlanResult) -> tuple[Prediction | None, bool]:
    """The plan a run records: the first that fits (True), or the layout with least memory (False)."""
    if result.plans:
        return result.plans[0].prediction, True
    if result.unfit:
        return result.unfit[0].prediction, False
    return None, False


BY_OPERATION = "by operation"


def plan_params(result: PlanResult) -> dict[str, Any]:
    model, hardware, workload, assumptions = result.model, result.hardware, result.workload, result.assumptions
    params: dict[str, Any] = {
        "model": model.key, "model_name": model.name, "model_source": model.source, "model_params": model.params,
        "hardware": hardware.key, "hardware_name": hardware.name, "hardware_source": hardware.source,
        "devices": result.devices, "seq_len": workload.seq_len, "sequences": workload.sequences,
        "global_batch_tokens": workload.tokens, "precision": workload.precision, "optimizer": workload.optimizer,
        **{f"assume.{name}": value for name, value in dataclasses.asdict(assumptions).items()},
    }
    if assumptions.achievable is None:  # each operation at its own rate (`compute`)
        params["assume.achievable"] = BY_OPERATION
    prediction, fits = chosen(result)
    if prediction is not None:
        params.update({**layout_params(prediction.layout), "chosen_fits": fits, **comm_params(prediction)})
    verdict = result.verdict
    if verdict is not None:
        params.update({"verdict.bound": verdict.bound, "verdict.separating": verdict.separating or "",
                       "verdict.faster_unfitting": verdict.faster_unfitting.label() if verdict.faster_unfitting
                       else ""})
    return params


def plan_metrics(result: PlanResult) -> dict[str, float]:
    prediction, _ = chosen(result)
    metrics = prediction_metrics(prediction) if prediction is not None else {}
    metrics.update({"plans_fitting": len(result.plans), "plans_unfit": len(result.unfit),
                    "layouts": len(result.plans) + len(result.unfit)})
    if result.verdict is not None:
        metrics.update({"verdict.bound_s": result.verdict.bound_s, "verdict.separating_s": result.verdict.separating_s})
    return _finite(metrics)


def check_params(check: Any, rank: int) -> dict[str, Any]:
    reasons = tuple(getattr(check, "reasons", ()) or ())
    return {**layout_params(check.layout), "rank": rank, **comm_params(check.prediction),
            "reasons": "; ".join(reasons)}


def check_metrics(check: Any) -> dict[str, float]:
    """A checked layout's predicted figures beside its compiled program's (the compiler-reported peak, the HLO's
    bytes per axis), and their ratios."""
    metrics = prediction_metrics(check.prediction, "predicted.")
    if check.compiled_peak_bytes is not None:
        metrics["compiled.peak_bytes"] = check.compiled_peak_bytes
    for axis, value in (check.predicted_bytes or {}).items():
        metrics[f"predicted.bytes.{axis}"] = value
    for axis, value in (check.hlo_bytes or {}).items():
        metrics[f"hlo.bytes.{axis}"] = value
    if check.memory_ratio is not None:
        metrics["ratio.memory"] = check.memory_ratio
    for axis, value in (check.axis_ratios or {}).items():
        if value is not None:
            metrics[f"ratio.bytes.{axis}"] = value
    return _finite(metrics)


def _finite(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Only finite numbers: a store takes no None, and a NaN or infinity says nothing a plot can draw."""
    return {name: float(value) for name, value in metrics.items()
            if isinstance(value, (int, float)) and math.isfinite(float(value))}


def _tracker(tracker_or_uri: Any) -> Any:
    if isinstance(tracker_or_uri, str):
        from pmap_core.tracking.mlflow_backend import Tracker

        return Tracker(check_tracking_uri(tracker_or_uri), experiment=PLAN_EXPERIMENT)
    return tracker_or_uri


def run_name(result: PlanResult) -> str:
    return f"plan {result.model.key} on {result.devices} × {result.hardware.key}"


def log_plan(result: PlanResult, tracker_or_uri: Any, checks: Iterable[Any] = ()) -> str:
    """Record `result` as one run, and each of `checks` as a child run under it; returns the plan run's id in the
    store it went to (`tracker.active_uri`: after a fallback, the fallback store). A URI gets a `Tracker` on the
    plan experiment; a tracker given (a `RunTracker`) writes to its own."""
    tracker = _tracker(tracker_or_uri)
    checks = list(checks)
    tags = {"lab": LAB_TAG, "kind": PLAN_KIND, "checks": str(len(checks))}
    with tracker.run(run_name(result), plan_params(result), tags) as run_id:
        tracker.log_metrics(run_id, plan_metrics(result))
        for rank, check in enumerate(checks, start=1):
            name = f"check {rank}: {check.layout.label()}"
            with tracker.run(name, check_params(check, rank), {"lab": LAB_TAG, "kind": CHECK_KIND},
                             parent_run_id=run_id) as child:
                tracker.log_metrics(child, check_metrics(check))
    return tracker.store_run_id(run_id)


def _stored(run: Any, children: Sequence[StoredRun] = ()) -> StoredRun:
    return StoredRun(run.info.run_id, run.info.run_name or "", run.info.status, dict(run.data.params),
                     dict(run.data.metrics), dict(run.data.tags), tuple(children))


def read_plan(run_id: str, uri: str) -> StoredRun:
    """The plan run `run_id` of the store `uri`, with its check runs (by rank)."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise LabInputError("plan_run", "no plan run {run_id!r} in this store", run_id=run_id)
    client = MlflowClient(tracking_uri=store_uri(check_tracking_uri(uri)))
    try:
        run = client.get_run(run_id)
    except MlflowException:
        raise LabInputError("plan_run", "no plan run {run_id!r} in this store", run_id=run_id) from None
    found = client.search_runs([run.info.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{run_id}'",
                               max_results=MAX_CHILDREN)
    children = sorted((_stored(child) for child in found),
                      key=lambda child: stored_count(child.params.get("rank")) or 0)
    return _stored(run, children)
