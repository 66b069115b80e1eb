"""Read tracked runs back from an MLflow store into pandas DataFrames.

The experiments page compares runs with these tables; every value comes from
the store, so what the page shows is what MLflow's own UI shows
(`ui_command()` prints the command that opens it on the same store).

Training runs come in three implementations (the param `impl`: pmap, shard_map, jit). Runs recorded
before that param existed were all pmap and count as pmap (`LEGACY_IMPL`); a sweep that compares
implementations has a parent whose `impl` lists them ("pmap,shard_map,jit") and a child per
implementation and D. A sweep's parent is no training run: its figures are its children's, so its
typed figure columns stay empty and every comparison here leaves it out (`compared_runs`). Only the
plain replicated SGD step (`setup` "sgd · dp") exists in all three; runs with another optimizer,
strategy, accumulation or gradient dtype (jit only) are told apart by their `setup` and left out of
`impl_comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from pmap_core.tracking import DIVERGED_METRIC, EXPERIMENT, store_uri, stored_count, tracking_uri, ui_command
from pmap_core.tracking.mlflow_backend import CREATION_TAG
from pmap_core.train.advice import DEFAULT_IMPL, advise_at

__all__ = ["LEGACY_IMPL", "PLAIN_SETUP", "RUN_COLUMNS", "compared_runs", "experiment_of", "filter_impl",
           "impl_comparison", "impls_of", "load_runs", "loss_histories", "scaling_table", "setup_label", "sweep_runs",
           "ui_command"]

RUN_COLUMNS = ["run_id", "experiment_id", "run_name", "status", "start_time", "duration_s", "parent_run_id", "is_sweep",
               "lab", "model", "impl", "setup", "devices", "num_processes", "global_batch", "scaling", "throughput",
               "steady_throughput", "scaling_ratio", "efficiency", "final_loss", DIVERGED_METRIC]
# Typed copies of the most used params and metrics, next to every "params.*"/"metrics.*"/"tags.*" column.
_INT_PARAMS = ("devices", "global_batch")
_TEXT_PARAMS = ("model", "scaling")
_METRICS = ("throughput", "steady_throughput", "scaling_ratio", "efficiency", "final_loss", DIVERGED_METRIC)
# A training run without the `impl` param was recorded before it existed, when every run was pmap.
LEGACY_IMPL = "pmap"
# The training state's settings (TrainConfig) and their values in the plain replicated SGD step;
# a run recorded before a setting existed had that value.
_SETUP_DEFAULTS = {"optimizer": "sgd", "strategy": "dp", "accum_steps": "1", "grad_dtype": "float32"}
PLAIN_SETUP = "sgd · dp"


def setup_label(params: dict[str, str]) -> str:
    """"optimizer · strategy", then " · K=<accum_steps>" and the gradient dtype where they are not
    the plain step's: "sgd · dp" for the step all three implementations run."""
    value = {name: params.get(name) or default for name, default in _SETUP_DEFAULTS.items()}
    label = f"{value['optimizer']} · {value['strategy']}"
    if value["accum_steps"] != _SETUP_DEFAULTS["accum_steps"]:
        label += f" · K={value['accum_steps']}"
    if value["grad_dtype"] != _SETUP_DEFAULTS["grad_dtype"]:
        label += f" · {value['grad_dtype']}"
    return label


def _client(uri: str | None) -> Any:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=store_uri(uri or tracking_uri()))


def _filter(model: str | None, global_batch: int | None) -> str:
    clauses = []
    if model:
        clauses.append(f"params.model = '{model.replace(chr(39), '')}'")
    if global_batch:
        clauses.append(f"params.global_batch = '{int(global_batch)}'")
    return " and ".join(clauses)


def load_runs(uri: str | None = None, experiment: str = EXPERIMENT, model: str | None = None,
              global_batch: int | None = None, max_results: int = 1000, impl: str | None = None) -> pd.DataFrame:
    """One row per run, newest first: RUN_COLUMNS, then `params.*`, `metrics.*` and `tags.*`.

    `model` and `global_batch` filter in the store; `impl` filters here (`filter_impl`), since runs
    recorded before the param existed have none and count as pmap. An unknown experiment gives an
    empty table.
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
            "experiment_id": info.experiment_id,
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
        training = row["model"] is not None
        row["impl"] = data.params.get("impl") or (LEGACY_IMPL if training else None)
        row["setup"] = setup_label(data.params) if training else None
        for name in _INT_PARAMS:  # other labs' runs may hold e.g. a list of device counts here
            row[name] = stored_count(data.params.get(name))
        # Runs of one process recorded before `num_processes` existed carry `processes` (or nothing).
        row["num_processes"] = stored_count(data.params.get("num_processes") or data.params.get("processes")) or (
            1 if training else None)
        for name in _METRICS:  # a sweep's parent recorded before its curves had names of their own held D = max's
            row[name] = None if row["is_sweep"] else data.metrics.get(name)
        row.update({f"params.{k}": v for k, v in data.params.items()})
        row.update({f"metrics.{k}": v for k, v in data.metrics.items()})
        row.update({f"tags.{k}": v for k, v in data.tags.items() if not k.startswith("mlflow.") and k != CREATION_TAG})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=None if rows else RUN_COLUMNS)
    for name in (*_INT_PARAMS, "num_processes"):
        frame[name] = frame[name].astype("Int64")
    return filter_impl(frame, impl)


def experiment_of(run_id: str, uri: str | None = None) -> str | None:
    """The id of the experiment `run_id` is in, or None when the store does not hold the run."""
    from mlflow.exceptions import MlflowException

    try:
        return _client(uri).get_run(run_id).info.experiment_id
    except MlflowException:
        return None


def run_with_seed(seed: int, since_s: float, uri: str | None = None,
                  experiment: str = EXPERIMENT) -> tuple[str, str] | None:
    """(run id, status) of the newest run of `experiment` whose param `seed` is `seed` and that started at or after
    `since_s` (seconds since the epoch), or None: how a page finds the run of a group it started with a seed of its
    own, when the group never printed its result (a process was killed)."""
    client = _client(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return None
    runs = client.search_runs([found.experiment_id], f"params.seed = '{int(seed)}' and attributes.start_time >= "
                              f"{int(since_s * 1000)}", max_results=1, order_by=["attributes.start_time DESC"])
    return (runs[0].info.run_id, runs[0].info.status) if runs else None


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


def compared_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The training runs among `runs`: what a comparison takes (a sweep's parent only sums up its children)."""
    return runs if runs.empty else runs[~runs["is_sweep"].astype(bool)]


def scaling_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Both throughputs, S(D) and E(D) against D for finished training runs (sweep parents left out)."""
    columns = ["run_id", "run_name", "model", "impl", "setup", "scaling", "global_batch", "devices", "throughput",
               "steady_throughput", "scaling_ratio", "efficiency", "tags.backend", "tags.simulated",
               "tags.physical_cores"]
    if runs.empty:
        return pd.DataFrame(columns=columns)
    training = runs["model"].notna() & runs["devices"].notna()  # other labs log other kinds of runs
    finished = compared_runs(runs[training & (runs["status"] == "FINISHED") & runs["throughput"].notna()])
    present = [c for c in columns if c in finished.columns]
    return finished[present].sort_values(["model", "global_batch", "impl", "devices"], ignore_index=True)


def sweep_runs(runs: pd.DataFrame, parent_run_id: str) -> pd.DataFrame:
    """The child runs of one sweep, by device count (then implementation, for a sweep that compares them)."""
    if runs.empty:
        return runs
    children = runs[runs["parent_run_id"] == parent_run_id]
    return children.sort_values(["devices", "impl"], kind="stable", ignore_index=True)


def impls_of(value: object) -> tuple[str, ...]:
    """The implementations one run's `impl` names: one for a training run, several for the parent
    of a sweep that compares them ("pmap,shard_map,jit"), none for another lab's run."""
    if not isinstance(value, str):
        return ()
    return tuple(part.strip() for part in value.split(",") if part.strip())


def filter_impl(runs: pd.DataFrame, impl: str | None) -> pd.DataFrame:
    """The runs of one implementation (None: all runs). A sweep parent stays when it compared
    `impl` with others; runs of other labs (no `impl`) go."""
    if not impl or runs.empty:
        return runs
    return runs[runs["impl"].map(lambda value: impl in impls_of(value)).astype(bool)]


def impl_comparison(table: pd.DataFrame, metric: str = "steady_throughput",
                    order: Sequence[str] = ("pmap", "shard_map", "jit")) -> pd.DataFrame:
    """The implementations side by side: one row per model, global batch, scaling mode and D; one
    column per implementation (those of `order` first) holding the median `metric` of its runs
    (`scaling_table` rows of the plain step, PLAIN_SETUP: the only one all three run), then
    `fastest` (the implementation with the largest median there), `runs` (how many runs the row
    stands on) and `<default>_share` (the training lab's default implementation's median over the
    fastest's; see `train.advice`)."""
    keys = ["model", "global_batch", "scaling", "devices"]
    share = f"{DEFAULT_IMPL}_share"
    measured = table
    if not table.empty:
        plain = table["setup"] == PLAIN_SETUP if "setup" in table else True
        measured = table[plain & table[metric].notna() & (table[metric] > 0)]
    if measured.empty:  # no implementation to put side by side
        return pd.DataFrame(columns=[*keys, "fastest", "runs", share])
    present = set(measured["impl"])
    impls = [i for i in order if i in present] + sorted(present - set(order))
    medians = measured.groupby([*keys, "impl"], dropna=False)[metric].median().unstack("impl")
    wide = medians.reindex(columns=impls).reset_index()
    wide.columns.name = None
    counts = measured.groupby(keys, dropna=False).size().rename("runs").reset_index()
    wide = wide.merge(counts, on=keys)
    advice = [advise_at(int(row["devices"]), {i: row[i] for i in impls}) for _, row in wide.iterrows()]
    wide["fastest"] = [a.fastest for a in advice]
    wide[share] = [a.default_share for a in advice]
    wide["devices"] = wide["devices"].astype(int)
    return wide[[*keys, *impls, "fastest", "runs", share]].sort_values(keys, ignore_index=True)
