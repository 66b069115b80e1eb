"""MLflow store operations that need no tracker: batched writes, the lab's experiment, and closing
the runs a failing store was left with."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

from mlflow.entities import Metric, Param
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode
from mlflow.tracking import MlflowClient

from pmap_core.tracking import FAILED, redact_uri

log = logging.getLogger(__name__)

# MLflow's defaults retry an unreachable server for about four minutes per call.
# These make a dead server known within seconds; the user can still override them.
HTTP_ENV_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}
MAX_METRICS_PER_BATCH = 1000  # MLflow's limit for one log_batch call
MAX_PARAMS_PER_BATCH = 100
MOVED_TO_TAG = "pmap_lab.moved_to"  # on a run a failed store was left with: "<fallback uri> <run id there>"
# MLflow 3's UI opens an experiment without this tag in its GenAI view; with it, as model training.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}


def experiment_id(client: MlflowClient, name: str) -> str:
    """The experiment's id, created on first use and tagged as model training — also when it
    was created untagged (by an older version of the lab or by hand)."""
    found = client.get_experiment_by_name(name)
    if found is None:
        try:
            return client.create_experiment(name, tags=EXPERIMENT_KIND)
        except MlflowException as error:
            # Another app process on the same store created it since we looked: use theirs.
            if error.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
                raise
            found = client.get_experiment_by_name(name)
    for key, value in EXPERIMENT_KIND.items():
        if key not in found.tags:
            client.set_experiment_tag(found.experiment_id, key, value)
    return found.experiment_id


def write_params(client: MlflowClient, run_id: str, params: Mapping[str, str]) -> None:
    entries = [Param(k, v) for k, v in params.items()]
    for start in range(0, len(entries), MAX_PARAMS_PER_BATCH):
        client.log_batch(run_id, params=entries[start:start + MAX_PARAMS_PER_BATCH])


def write_metrics(client: MlflowClient, run_id: str, entries: Sequence[tuple[str, float, int | None]]) -> None:
    now = int(time.time() * 1000)
    metrics = [Metric(key, value, now, step or 0) for key, value, step in entries]
    for start in range(0, len(metrics), MAX_METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + MAX_METRICS_PER_BATCH])


def close_moved_runs(uri: str, moved: Sequence[tuple[str, str]], fallback_uri: str) -> None:
    """Best effort, in the background: the runs a failing store was left with mid-run end FAILED
    there (not RUNNING forever), tagged with where they went on, once the store answers again."""
    try:
        client = MlflowClient(tracking_uri=uri)
        for old_id, new_id in moved:
            client.set_tag(old_id, MOVED_TO_TAG, f"{fallback_uri} {new_id}")
            client.set_terminated(old_id, status=FAILED)
    except Exception as error:  # noqa: BLE001 - the store is still failing: its runs stay as they are
        log.info("tracking: could not close the runs left in %s: %s", redact_uri(uri), redact_uri(str(error))[:300])
