"""What trainers, benchmarks and pages need from tracking, by its public names; each lives in a module
of its own concern:

- `uris`: where runs go (`tracking_uri`, `store_uri`), the checks that refuse a store that could never
  work, and `redact_uri`, through which every URI is shown or logged;
- `probes`: whether a store can be used now (a locked sqlite file, a server that does not answer);
- `links`: links into MLflow's own UI, and the command that opens it;
- `runs`: run statuses, the `RunTracker` protocol, `NullTracker`, the tags that say where a run ran.

The MLflow implementation is `pmap_core.tracking.mlflow_backend.Tracker`; the training callback is
`pmap_core.tracking.callback.TrackingCallback`.
"""

from __future__ import annotations

from pmap_core.tracking.links import (
    DEFAULT_MLFLOW_UI_PORT,
    DEFAULT_MLFLOW_UI_URL,
    LOCAL_HOSTS,
    MAX_COMPARED_RUNS,
    MLFLOW_UI_URL_ENV,
    MODEL_TRAINING_VIEW,
    compare_link,
    experiment_link,
    mlflow_ui_url,
    run_link,
    ui_command,
)
from pmap_core.tracking.probes import (
    DB_PORTS,
    LOCK_PROBE_TIMEOUT_S,
    REACHABILITY_TIMEOUT_S,
    database_reachable,
    server_reachable,
    store_locked,
)
from pmap_core.tracking.runs import (
    DIVERGED_METRIC,
    EXPERIMENT,
    FAILED,
    FINISHED,
    KILLED,
    MAX_STORED_COUNT,
    NullTracker,
    RunContext,
    RunTracker,
    runtime_tags,
    status_after,
    stored_count,
)
from pmap_core.tracking.uris import (
    DB_DRIVERS,
    DEFAULT_DB_DRIVER,
    DEFAULT_TRACKING_URI,
    FALLBACK_TRACKING_URI,
    REDACTED,
    REMOTE_SCHEMES,
    SQLITE_HEADER,
    absolute_sqlite_uri,
    check_tracking_uri,
    redact_uri,
    sqlite_path,
    store_dialect,
    store_uri,
    tracking_uri,
)

__all__ = [
    "DB_DRIVERS", "DB_PORTS", "DEFAULT_DB_DRIVER", "DEFAULT_MLFLOW_UI_PORT", "DEFAULT_MLFLOW_UI_URL",
    "DEFAULT_TRACKING_URI", "DIVERGED_METRIC", "EXPERIMENT", "FAILED", "FALLBACK_TRACKING_URI", "FINISHED",
    "KILLED", "LOCAL_HOSTS", "LOCK_PROBE_TIMEOUT_S", "MAX_COMPARED_RUNS", "MAX_STORED_COUNT", "MLFLOW_UI_URL_ENV",
    "MODEL_TRAINING_VIEW", "REACHABILITY_TIMEOUT_S", "REDACTED", "REMOTE_SCHEMES", "SQLITE_HEADER", "NullTracker",
    "RunContext", "RunTracker", "absolute_sqlite_uri", "check_tracking_uri", "compare_link", "database_reachable",
    "experiment_link", "mlflow_ui_url", "redact_uri", "run_link", "runtime_tags", "server_reachable",
    "sqlite_path", "status_after", "store_dialect", "store_locked", "store_uri", "stored_count", "tracking_uri",
    "ui_command",
]
