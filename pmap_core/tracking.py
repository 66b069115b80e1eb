"""What trainers and benchmarks need from a tracker (`RunTracker`), a tracker that records nothing,
and where runs go: the store's URI and the tags that say where a run ran.

The MLflow implementation is `pmap_core.mlflow_tracker.Tracker`. Every call names its run id:
nothing relies on MLflow's thread-local "active run", so two sessions of one server can train at
once without mixing runs.
"""

from __future__ import annotations

import contextlib
import os
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from pmap_core.runtime import describe_runtime

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
FALLBACK_TRACKING_URI = "sqlite:///mlflow-fallback.db"
EXPERIMENT = "pmap-lab"

FINISHED, FAILED, KILLED = "FINISHED", "FAILED", "KILLED"
REACHABILITY_TIMEOUT_S = 3.0


def tracking_uri() -> str:
    """`MLFLOW_TRACKING_URI` when set, otherwise the local sqlite store."""
    return os.environ.get("MLFLOW_TRACKING_URI", "").strip() or DEFAULT_TRACKING_URI


def ui_command(uri: str | None = None) -> str:
    """The shell command that opens the MLflow UI on the same store."""
    uri = uri or tracking_uri()
    if uri.startswith(("http://", "https://")):
        return f"# the runs are on the server itself: open {uri} in a browser"
    return f"mlflow ui --backend-store-uri {uri} --host 127.0.0.1 --port 5000"


def runtime_tags(lab: str) -> dict[str, str]:
    """Tags that say where a run ran, so laptop and GPU runs can be told apart."""
    info = describe_runtime()
    return {
        "jax_version": info.jax_version,
        "backend": info.backend,
        "device_kind": info.device_kind,
        "device_count": str(info.device_count),
        "simulated": str(info.simulated).lower(),
        "physical_cores": str(info.physical_cores),
        "lab": lab,
    }


def server_reachable(uri: str, timeout_s: float = REACHABILITY_TIMEOUT_S) -> bool:
    """True for local stores; for an http(s) server, whether /health answers within `timeout_s`."""
    if not uri.startswith(("http://", "https://")):
        return True
    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout_s):
            return True
    except urllib.error.HTTPError:
        return True  # it answered (a proxy may guard /health); the writes will tell if it works
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError):
        return False


class RunTracker(Protocol):
    """What trainers and benchmarks need from a tracker: runs with explicit ids, metrics, an end.

    `start_run` returns the id every other call takes; after a fallback (`fell_back_to`) the run
    lives on in `active_uri` under `store_run_id(id)`.
    """

    active_uri: str
    fell_back_to: str | None
    fallback_reason: str | None

    def start_run(self, name: str, params: Mapping[str, Any], tags: Mapping[str, Any] | None = None,
                  parent_run_id: str | None = None) -> str: ...

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], step: int | None = None) -> None: ...

    def log_series(self, run_id: str, key: str, values: Sequence[float], start_step: int = 0) -> None: ...

    def end_run(self, run_id: str, status: str = FINISHED) -> None: ...

    def run(self, name: str, params: Mapping[str, Any], tags: Mapping[str, Any] | None = None,
            parent_run_id: str | None = None) -> AbstractContextManager[str]: ...

    def store_run_id(self, run_id: str) -> str: ...


def status_after(error: BaseException) -> str:
    """How a run that `error` interrupted ends: FAILED on an error; KILLED when it was stopped
    (Ctrl-C, SIGTERM's SystemExit, a Streamlit Stop or rerun — none of them an `Exception`)."""
    return FAILED if isinstance(error, Exception) else KILLED


class RunContext:
    """`run()`, shared by both trackers, in terms of their `start_run` and `end_run`."""

    @contextlib.contextmanager
    def run(self, name: str, params: Mapping[str, Any], tags: Mapping[str, Any] | None = None,
            parent_run_id: str | None = None) -> Iterator[str]:
        """A run that always ends: FINISHED, or `status_after` what interrupted it."""
        run_id = self.start_run(name, params, tags, parent_run_id)
        status = FINISHED
        try:
            yield run_id
        except BaseException as error:
            status = status_after(error)
            raise
        finally:
            self.end_run(run_id, status)


class NullTracker(RunContext):
    """The Tracker interface that logs nothing: for tests and offline use."""

    uri = "none"
    active_uri = "none"
    fell_back_to: str | None = None
    fallback_reason: str | None = None

    def __init__(self) -> None:
        self._count = 0

    def start_run(self, name: str, params: Mapping[str, Any], tags: Mapping[str, Any] | None = None,
                  parent_run_id: str | None = None) -> str:
        self._count += 1
        return f"null-{self._count}"

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], step: int | None = None) -> None:
        pass

    def log_series(self, run_id: str, key: str, values: Sequence[float], start_step: int = 0) -> None:
        pass

    def end_run(self, run_id: str, status: str = FINISHED) -> None:
        pass

    def store_run_id(self, run_id: str) -> str:
        return run_id
