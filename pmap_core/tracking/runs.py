"""Runs as trainers and benchmarks see them: the statuses a run ends with, what a tracker must do
(`RunTracker`), a tracker that records nothing, the tags that say where a run ran, and counts read back.

Every call names its run id: nothing relies on MLflow's thread-local "active run", so two sessions of
one server can train at once without mixing runs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from pmap_core.runtime import describe_runtime

EXPERIMENT = "pmap-lab"
FINISHED, FAILED, KILLED = "FINISHED", "FAILED", "KILLED"
DIVERGED_METRIC = "diverged_at_step"  # a FAILED training run's first step whose loss was not a finite number
_COUNT = re.compile(r"[0-9]{1,18}")
MAX_STORED_COUNT = 2**31 - 1


def stored_count(value: object) -> int | None:
    """A count (devices, a batch, processes) read back from a store: a whole number from 1 written
    with the digits 0-9, else None. A store may hold anything another program wrote there: "²" and
    "①" pass `str.isdigit` yet `int` refuses them, "１２" is not what the lab writes, and a long
    number overflows a table's int64 column or `int` itself; the value stays readable as text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1 <= value <= MAX_STORED_COUNT else None
    if not isinstance(value, str) or not _COUNT.fullmatch(value.strip(" ")):
        return None
    number = int(value.strip(" "))
    return number if 1 <= number <= MAX_STORED_COUNT else None


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
