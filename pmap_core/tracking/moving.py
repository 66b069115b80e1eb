"""Moving the runs of a fallback store (`mlflow-fallback.db`) back into the class store.

A run that left the class store mid-run (its store failed for longer than the tracker waits) lives on
in the fallback store with every loss; the class store keeps a partial copy of what it had taken: FAILED
and tagged `pmap_lab.moved_to` when the store answered again while the training ran, else RUNNING. Both
copies carry the run's creation tag (`pmap_lab.creation`). Moving copies each ended run of the fallback
store into the class store (same experiment name, run name, params, tags, every metric point with its
step and time, status and times; a sweep's children under their moved parent), then ends the partial
copy it replaces FAILED and deletes it (MLflow's soft delete: `mlflow runs restore` brings it back). Each
copy is tagged `pmap_lab.moved_from` with the run's id in the fallback store, so moving again copies nothing
twice; runs still open are left.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from mlflow.entities import Metric, ViewType
from mlflow.tracking import MlflowClient

from pmap_core.tracking import FAILED, FINISHED, KILLED, store_uri
from pmap_core.tracking.mlflow_backend import (
    CREATION_TAG,
    MAX_METRICS_PER_BATCH,
    MOVED_TO_TAG,
    experiment_id,
    write_params,
)

MOVED_FROM_TAG = "pmap_lab.moved_from"  # on a run moved back into the class store: its id in the fallback store
PARENT_TAG = "mlflow.parentRunId"
_PAGE = 1000


@dataclasses.dataclass(frozen=True)
class MoveReport:
    moved: list[tuple[str, str]]  # (id in the fallback store, id in the class store), moved now
    already: list[tuple[str, str]]  # moved before
    still_open: list[str]  # RUNNING in the fallback store: a training may still be writing them
    replaced: list[str]  # partial copies the class store kept, ended FAILED and deleted


def _runs(client: MlflowClient, experiment: str, filter_string: str = "") -> Iterator:
    token = None
    while True:
        page = client.search_runs([experiment], filter_string, ViewType.ACTIVE_ONLY, _PAGE,
                                  ["attributes.start_time ASC"], page_token=token)  # in the order they ran
        yield from page
        token = page.token
        if not token:
            return


def _parents_first(runs: list) -> list:
    """A sweep's parent before its children (a child names its parent's new id)."""
    ids = {run.info.run_id for run in runs}
    ordered: list = []
    placed: set[str] = set()
    while len(ordered) < len(runs):
        ready = [run for run in runs if run.info.run_id not in placed
                 and (run.data.tags.get(PARENT_TAG) not in ids or run.data.tags.get(PARENT_TAG) in placed)]
        ready = ready or [run for run in runs if run.info.run_id not in placed]  # a loop of parents: as they come
        ordered.extend(ready)
        placed.update(run.info.run_id for run in ready)
    return ordered


def _copy(source: MlflowClient, target: MlflowClient, run, experiment: str, parent: str | None) -> str:
    tags = {key: value for key, value in run.data.tags.items() if key != MOVED_TO_TAG}
    tags[MOVED_FROM_TAG] = run.info.run_id
    if parent is not None:
        tags[PARENT_TAG] = parent
    created = target.create_run(experiment, start_time=run.info.start_time, tags=tags,
                                run_name=run.info.run_name)
    new_id = created.info.run_id
    write_params(target, new_id, run.data.params)
    points = [Metric(key, metric.value, metric.timestamp, metric.step)
              for key in run.data.metrics for metric in source.get_metric_history(run.info.run_id, key)]
    for start in range(0, len(points), MAX_METRICS_PER_BATCH):
        target.log_batch(new_id, metrics=points[start:start + MAX_METRICS_PER_BATCH])
    target.set_terminated(new_id, status=run.info.status, end_time=run.info.end_time)  # last: a copy is complete
    return new_id


def _partial_copies(target: MlflowClient, experiment: str, run) -> list:
    """The class store's own copies of a fallback run that left it mid-run: tagged with where the run went,
    or carrying its creation tag and not themselves a moved copy (the tag travels with every copy)."""
    old_id = run.info.run_id
    found = {copy.info.run_id: copy for copy in _runs(target, experiment, f"tags.`{MOVED_TO_TAG}` LIKE '% {old_id}'")}
    creation = run.data.tags.get(CREATION_TAG, "")
    if re.fullmatch(r"[0-9a-f]{32}", creation):  # the tracker's uuid4 hex: safe inside a filter
        for copy in _runs(target, experiment, f"tags.`{CREATION_TAG}` = '{creation}'"):
            if MOVED_FROM_TAG not in copy.data.tags:
                found[copy.info.run_id] = copy
    return list(found.values())


def move_fallback_runs(source_uri: str, target_uri: str) -> MoveReport:
    """Copy every ended run of `source_uri` (a fallback store) into `target_uri` (the class store) that
    is not there yet; see the module's docstring. Idempotent."""
    source = MlflowClient(store_uri(source_uri))
    target = MlflowClient(store_uri(target_uri))
    report = MoveReport([], [], [], [])
    new_ids: dict[str, str] = {}
    for experiment in source.search_experiments(ViewType.ACTIVE_ONLY):
        runs = _parents_first(list(_runs(source, experiment.experiment_id)))
        if not runs:
            continue
        into = experiment_id(target, experiment.name)
        for run in runs:
            old_id = run.info.run_id
            if run.info.status not in (FINISHED, FAILED, KILLED):
                report.still_open.append(old_id)
                continue
            copies = list(_runs(target, into, f"tags.`{MOVED_FROM_TAG}` = '{old_id}'"))
            done = [copy for copy in copies if copy.info.status == run.info.status and copy.info.end_time]
            if done:
                new_ids[old_id] = done[0].info.run_id
                report.already.append((old_id, done[0].info.run_id))
                continue
            for unfinished in copies:  # a move interrupted half-way: copied again below
                target.delete_run(unfinished.info.run_id)
            parent = run.data.tags.get(PARENT_TAG)
            new_ids[old_id] = _copy(source, target, run, into, new_ids.get(parent, parent) if parent else None)
            report.moved.append((old_id, new_ids[old_id]))
            for partial in _partial_copies(target, into, run):
                if partial.info.status not in (FINISHED, FAILED, KILLED):  # restored, it shows FAILED
                    target.set_terminated(partial.info.run_id, status=FAILED)
                target.delete_run(partial.info.run_id)
                report.replaced.append(partial.info.run_id)
    return report
