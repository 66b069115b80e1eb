"""Read tracked runs back from an MLflow store into pandas DataFrames.

The experiments page compares runs with these tables; every value comes from
the store, so what the page shows is what MLflow's own UI shows
(`ui_command()` prints the command that opens it on the same store).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from pmap_core.tracking import EXPERIMENT, tracking_uri, ui_command

__all__ = ["RUN_COLUMNS", "load_runs", "loss_histories", "scaling_table", "sweep_runs", "ui_command"]

RUN_COLUMNS = ["run_id", "run_name", "status", "start_time", "duration_s", "parent_run_id", "is_sweep",
               "lab", "model", "devices", "global_batch", "scaling", "throughput", "steady_throughput", "scaling_ratio",
               "efficiency",
               "final_loss"]
# Typed copies of the most used params and metrics, next to every "params.*"/"metrics.*"/"tags.*" column.
_INT_PARAMS = ("devices", "global_batch")
_TEXT_PARAMS = ("model", "scaling")
_METRICS = ("throughput", "steady_throughput", "scaling_ratio", "efficiency", "final_loss")


def _client(uri: str | None) -> Any:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri or tracking_uri())


def _whole_number(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def _filter(model: str | None, global_batch: int | None) -> str:
    clauses = []
    if model:
        clauses.append(f"params.model = '{model.replace(chr(39), '')}'")
    if global_batch:
        clauses.append(f"params.global_batch = '{int(global_batch)}'")
    return " and ".join(clauses)


def load_runs(uri: str | None = None, experiment: str = EXPERIMENT, model: str | None = None,
              global_batch: int | None = None, max_results: int = 1000) -> pd.DataFrame:
    """One row per run, newest first: RUN_COLUMNS, then `params.*`, `metrics.*` and `tags.*`.

    `model` and `global_batch` filter in the store. An unknown experiment gives an empty table.
    """
    client = _client(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return pd.DataFrame(columns=RUN_COLUMNS)
    runs = client.search_runs([found.experiment_id], filter_string=_filter(model, global_batch),
                              max_results=max_results, order_by=["attributes.start_time DESC"])
    rows = []
    for run in runs:
        info, data = run.info, run.data
        row: dict[str, Any] = {
            "run_id": info.run_id,
            "run_name": info.run_name,
            "status": info.status,
            "start_time": pd.to_datetime(info.start_time, unit="ms", utc=True),
            "duration_s": (info.end_time - info.start_time) / 1000 if info.end_time else None,
            "parent_run_id": data.tags.get("mlflow.parentRunId"),
            "is_sweep": data.tags.get("sweep") == "true",
            "lab": data.tags.get("lab"),
        }
        for name in _TEXT_PARAMS:
            row[name] = data.params.get(name)
        for name in _INT_PARAMS:  # other labs' runs may hold e.g. a list of device counts here
            row[name] = _whole_number(data.params.get(name))
        for name in _METRICS:
            row[name] = data.metrics.get(name)
        row.update({f"params.{k}": v for k, v in data.params.items()})
        row.update({f"metrics.{k}": v for k, v in data.metrics.items()})
        row.update({f"tags.{k}": v for k, v in data.tags.items() if not k.startswith("mlflow.")})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=None if rows else RUN_COLUMNS)
    for name in _INT_PARAMS:
        frame[name] = frame[name].astype("Int64")
    return frame


def loss_histories(run_ids: Sequence[str], uri: str | None = None, key: str = "loss") -> pd.DataFrame:
    """Long table (run_id, step, loss) of the chosen runs' loss per step, ready for one Altair line chart."""
    client = _client(uri)
    frames = []
    for run_id in run_ids:
        history = client.get_metric_history(run_id, key)
        frames.append(pd.DataFrame({"run_id": run_id, "step": [m.step for m in history],
                                    key: [m.value for m in history]}))
    if not frames:
        return pd.DataFrame(columns=["run_id", "step", key])
    return pd.concat(frames, ignore_index=True).sort_values(["run_id", "step"], ignore_index=True)


def scaling_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Both throughputs, S(D) and E(D) against D for finished training runs (sweep parents left out)."""
    columns = ["run_id", "run_name", "model", "scaling", "global_batch", "devices", "throughput",
               "steady_throughput", "scaling_ratio", "efficiency", "tags.backend", "tags.simulated",
               "tags.physical_cores"]
    if runs.empty:
        return pd.DataFrame(columns=columns)
    training = runs["model"].notna() & runs["devices"].notna()  # other labs log other kinds of runs
    finished = runs[training & (runs["status"] == "FINISHED") & ~runs["is_sweep"] & runs["throughput"].notna()]
    present = [c for c in columns if c in finished.columns]
    return finished[present].sort_values(["model", "global_batch", "devices"], ignore_index=True)


def sweep_runs(runs: pd.DataFrame, parent_run_id: str) -> pd.DataFrame:
    """The child runs of one sweep, by device count."""
    if runs.empty:
        return runs
    children = runs[runs["parent_run_id"] == parent_run_id]
    return children.sort_values("devices", ignore_index=True)
