"""A run's profile, captured after its training and logged to its MLflow run as an artifact.

A profile never fails the run it belongs to: whatever stops it (a trace already running, a store that refuses the
files) is said once, in the result's `error`, and the training's result stands as it is.
"""

from __future__ import annotations

import os
from typing import Any

from pmap_core.profiling.capture import profile_run
from pmap_core.validation import LabInputError

ARTIFACT_PATH = "profile"  # the folder of the run's artifacts that holds its trace


def log_trace(tracking_uri: str, run_id: str, folder: str) -> str:
    """The profile run's folder (`.xplane.pb`, `perfetto_trace.json.gz`) logged to `run_id` under
    `profile/plugins/profile/<time>/`, the layout XProf reads; returns the artifact folder's URI."""
    from mlflow.tracking import MlflowClient

    from pmap_core.tracking import store_uri

    client = MlflowClient(store_uri(tracking_uri))
    relative = os.path.join(ARTIFACT_PATH, "plugins", "profile", os.path.basename(folder))
    client.log_artifacts(run_id, folder, relative)
    return f"{client.get_run(run_id).info.artifact_uri}/{ARTIFACT_PATH}"


def profile_and_log(config: Any, steps: int, log_dir: str, tracking_uri: str | None,
                    run_id: str | None) -> dict[str, Any]:
    """Trace `steps` steps of `config`'s program under `log_dir`, log them to the run (where there is one), and
    say what came of it: `Profile.summary()` and the artifact's URI, or an `error`."""
    try:
        profile = profile_run(config, steps, log_dir)
        result: dict[str, Any] = profile.summary()
        result["artifact_uri"] = None
        if tracking_uri and run_id:
            try:
                result["artifact_uri"] = log_trace(tracking_uri, run_id, profile.folder)
            except Exception as error:  # noqa: BLE001 - the store refused: the trace stays where it was written
                result["error"] = f"the trace was not logged to MLflow: {error}"
        return result
    except LabInputError as error:
        return {"error": str(error)}
    except Exception as error:  # noqa: BLE001 - a failed trace never fails the training run
        return {"error": f"no trace: {type(error).__name__}: {error}"}
