"""The MLflow backend: the `Tracker` (explicit run ids, batched writes, a local fallback) and the
store operations it shares with the class pages (the lab's experiment, batched writes, closing the
runs a failing store was left with).

When the store cannot be used — a server that does not answer, a sqlite store another process
keeps locked, any failed write after a retry — the tracker switches to a local sqlite store
(`fell_back_to`) and replays what its runs had already logged there, so the user's training still
completes and nothing is lost.

Every tracker with open runs is in a process-wide registry; when the process exits (a SIGTERM to
the CLI or to `streamlit run`, whose script threads die with the process) an `atexit` hook writes
what is pending and ends every run still open as KILLED, so no run stays RUNNING.

Writes go through one writer thread of our own rather than MLflow's asynchronous logging: a
failed write must be known at once (to switch stores mid-run and replay in order), and an idle
tracker must hold no thread — MLflow's queue keeps its threads for the life of its store.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from mlflow.entities import Metric, Param
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode
from mlflow.tracking import MlflowClient

from pmap_core.tracking import (
    DB_DRIVERS,
    EXPERIMENT,
    FAILED,
    FALLBACK_TRACKING_URI,
    FINISHED,
    KILLED,
    LOCK_PROBE_TIMEOUT_S,
    REACHABILITY_TIMEOUT_S,
    RunContext,
    absolute_sqlite_uri,
    redact_uri,
    server_reachable,
    store_dialect,
    store_locked,
    store_uri,
    tracking_uri,
)

log = logging.getLogger(__name__)
REASON_CHARS = 200  # a store's error in a line about it: its first line, at most this long


class RetriedError(Exception):
    """A write the store kept refusing while it was tried again for `waited_s` (`Tracker._retry_on_server`)."""

    def __init__(self, error: Exception, waited_s: float):
        super().__init__(str(error))
        self.error, self.waited_s = error, waited_s


def error_reason(error: Exception) -> str:
    """A store's error in a few words, for the one line that says a run left it: the error's type and the first line
    of its message, shortened, credentials redacted (MLflow's own messages run to several lines and kilobytes)."""
    if isinstance(error, RetriedError):
        return f"it did not take a write for {error.waited_s:.0f} s: {error_reason(error.error)}"
    first = (str(error).strip().splitlines() or [""])[0]
    text = redact_uri(f"{type(error).__name__}: {first}" if first else type(error).__name__)
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"

# MLflow's defaults retry an unreachable server for about four minutes per call.
# These make a dead server known within seconds; the user can still override them. MLflow also prints
# its own links to a server's runs on stdout (no Model-training view, the server's address rather than
# PMAP_LAB_MLFLOW_UI_URL): the lab makes its own (`run_link`).
HTTP_ENV_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5",
                     "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true"}
MAX_METRICS_PER_BATCH = 1000  # MLflow's limit for one log_batch call
MAX_PARAMS_PER_BATCH = 100
MOVED_TO_TAG = "pmap_lab.moved_to"  # on a run a failed store was left with: "<fallback uri> <run id there>"
# On every run the lab creates: a run whose creation is tried again (its answer lost when a database restarted)
# is found by it instead of made twice.
CREATION_TAG = "pmap_lab.creation"
# MLflow 3's UI opens an experiment without this tag in its GenAI view; with it, as model training.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
# A write that failed on a locked sqlite store (after MLflow's own 20 s wait) is retried once the
# lock is gone, if it goes within this time; otherwise everything moves to the fallback store.
LOCKED_RETRY_WAIT_S = 5.0
# A write that failed on a database server (PostgreSQL restarted, a connection dropped), directly or behind
# a tracking server (which answers 5xx meanwhile), is tried again while the server answers within this
# time; otherwise everything moves to the fallback store.
DATABASE_RETRY_WAIT_S = 10.0
DATABASE_RETRY_PAUSE_S = 0.5

_live_trackers: weakref.WeakSet[Tracker] = weakref.WeakSet()  # trackers that started a run


# -- store operations (no tracker needed) ---------------------------------------------

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


def write_metrics(client: MlflowClient, run_id: str, entries: Sequence[tuple[str, float, int | None]],
                  timestamp_ms: int | None = None) -> None:
    """`timestamp_ms` fixed by the caller makes the write idempotent: sent again after a lost answer, the same
    rows meet the store's primary key (key, timestamp, step, value) and MLflow keeps one of each."""
    now = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    metrics = [Metric(key, value, now, step or 0) for key, value, step in entries]
    for start in range(0, len(metrics), MAX_METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + MAX_METRICS_PER_BATCH])


def close_moved_runs(uri: str, moved: Sequence[tuple[str, str]], fallback_uri: str) -> None:
    """Best effort, in the background: the runs a failing store was left with mid-run end FAILED
    there (not RUNNING forever), tagged with where they went on, once the store answers again."""
    try:
        client = MlflowClient(tracking_uri=store_uri(uri))
        for old_id, new_id in moved:
            client.set_tag(old_id, MOVED_TO_TAG, f"{fallback_uri} {new_id}")
            client.set_terminated(old_id, status=FAILED)
    except Exception as error:  # noqa: BLE001 - the store is still failing: its runs stay as they are
        log.info("tracking: could not close the runs left in %s: %s", redact_uri(uri), redact_uri(str(error))[:300])


# -- the tracker --------------------------------------------------------------------------

@dataclasses.dataclass
class _RunRecord:
    """One run: what was written (kept for a replay into the fallback store) and what waits."""

    name: str
    params: dict[str, str]
    tags: dict[str, str]
    parent_run_id: str | None
    metrics: list[tuple[str, float, int | None]] = dataclasses.field(default_factory=list)  # written
    pending: list[tuple[str, float, int | None]] = dataclasses.field(default_factory=list)  # not yet
    store_run_id: str = ""  # the run's id in the store currently in use
    status: str | None = None  # set once the run has ended
    creation: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)  # CREATION_TAG's value
    creation_tried_in: str = ""  # the store a creation was last sent to
    tasks: list[Future] = dataclasses.field(default_factory=list)


class Tracker(RunContext):
    """Logs runs to one MLflow store through `MlflowClient`, with explicit run ids.

    Writes go to a background writer thread, in order, so training never waits for
    the store; metrics logged while the writer is busy are merged into one request.
    `end_run` waits until everything of the run is written (and raises what failed).

    `uri` defaults to `tracking_uri()`. If the store cannot be reached (at start
    or in the middle of a run), logging continues in `fallback_uri`, and
    `fell_back_to` names it so the user can be told where the runs went.
    """

    def __init__(self, uri: str | None = None, experiment: str = EXPERIMENT,
                 fallback_uri: str = FALLBACK_TRACKING_URI):
        for name, value in HTTP_ENV_DEFAULTS.items():
            os.environ.setdefault(name, value)
        self.uri = uri or tracking_uri()
        self.experiment = experiment
        # Absolute, so that a message names a file the user can find (and MLflow, which keeps one store
        # per URI in a process, never reaches a file opened from another working directory).
        self.fallback_uri = absolute_sqlite_uri(fallback_uri)
        self.fell_back_to: str | None = None
        self.fallback_reason: str | None = None
        self._runs: dict[str, _RunRecord] = {}  # by the id start_run returned
        self._records: list[_RunRecord] = []  # every run, from the moment its creation is asked for
        self._lock = threading.Lock()  # guards _runs, pending lists and the writer; never held during I/O
        self._writer: ThreadPoolExecutor | None = None
        self._client: MlflowClient | None = None
        self._experiment_id: str | None = None
        if not server_reachable(self.uri):
            self._fall_back(f"it did not answer within {REACHABILITY_TIMEOUT_S:g} s")
        elif store_locked(self.uri):
            self._fall_back(f"another process has kept it locked for over {LOCK_PROBE_TIMEOUT_S:g} s")

    @property
    def active_uri(self) -> str:
        """The store runs are written to now: `uri`, or the fallback after a failure."""
        return self.fell_back_to or self.uri

    # -- the interface shared with NullTracker ------------------------------------

    def start_run(self, name: str, params: Mapping[str, Any], tags: Mapping[str, Any] | None = None,
                  parent_run_id: str | None = None) -> str:
        """Create a run with its params and tags; returns the run id to pass to every other call.

        The id is the run's id in the store (`store_run_id`) unless the store changed on a fallback.
        """
        record = _RunRecord(name, {k: str(v) for k, v in params.items()},
                            {k: str(v) for k, v in (tags or {}).items()}, parent_run_id)
        with self._lock:
            self._records.append(record)
        _live_trackers.add(self)
        self._submit(record, lambda: self._guarded(lambda: self._create(record, with_params=False)))
        record.tasks[-1].result()  # the id comes from the store; the params follow in the background
        run_id = record.store_run_id
        with self._lock:
            self._runs[run_id] = record
        self._submit(record, lambda: self._guarded(lambda: self._write_params(record)))
        return run_id

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log several metrics at once."""
        self._log(run_id, [(key, float(value), step) for key, value in metrics.items()])

    def log_series(self, run_id: str, key: str, values: Sequence[float], start_step: int = 0) -> None:
        """Log a metric history (e.g. the loss per step), batched (up to 1000 points a request)."""
        self._log(run_id, [(key, float(value), start_step + i) for i, value in enumerate(values)])

    def end_run(self, run_id: str, status: str = FINISHED) -> None:
        """Write what is pending, mark the run ended; returns once it is stored."""
        record = self._runs[run_id]

        def finish() -> None:
            self._flush(record)
            self._guarded(lambda: self.client.set_terminated(record.store_run_id, status=status))
            record.status = status

        self._submit(record, finish)
        try:
            for task in list(record.tasks):
                task.result()
        finally:
            self._release_writer()

    def end_open_runs(self, status: str = KILLED) -> int:
        """End every run not ended yet as `status`, after writing what it has pending; returns how
        many. Runs on the calling thread (at exit the writer thread is gone); never raises."""
        with self._lock:
            records = [record for record in self._records if record.status is None]
        ended = 0
        for record in reversed(records):  # children before their parent
            for task in list(record.tasks):
                with contextlib.suppress(Exception):  # a failed write is retried below
                    task.result(timeout=30)
            if record.status is not None or not record.store_run_id:
                continue
            try:
                self._flush(record)
                self._guarded(lambda r=record: self.client.set_terminated(r.store_run_id, status=status))
                record.status = status
                ended += 1
            except Exception as error:  # noqa: BLE001 - at exit nothing is left to tell
                log.error("could not end MLflow run %s in %s: %s", record.store_run_id,
                          redact_uri(self.active_uri), redact_uri(str(error))[:300])
        return ended

    def store_run_id(self, run_id: str) -> str:
        """The id under which `run_id` lives in `active_uri` (a new one after a fallback)."""
        return self._runs[run_id].store_run_id

    # -- internals --------------------------------------------------------------------

    @property
    def client(self) -> MlflowClient:
        if self._client is None:
            self._client = MlflowClient(tracking_uri=store_uri(self.active_uri))
        return self._client

    def _submit(self, record: _RunRecord, task: Callable[[], None]) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="mlflow-writer")
            record.tasks.append(self._writer.submit(task))

    def _release_writer(self) -> None:
        """Stop the writer thread once no run is open, so idle trackers hold no thread."""
        with self._lock:
            if self._writer is not None and all(r.status for r in self._runs.values()):
                self._writer.shutdown(wait=False)
                self._writer = None

    def _experiment(self) -> str:
        if self._experiment_id is None:
            self._experiment_id = experiment_id(self.client, self.experiment)
        return self._experiment_id

    def _create(self, record: _RunRecord, with_params: bool = True) -> None:
        tags = dict(record.tags)
        if record.parent_run_id:
            parent = self._runs.get(record.parent_run_id)
            tags["mlflow.parentRunId"] = parent.store_run_id if parent else record.parent_run_id
        run = self._created_before(record) if record.creation_tried_in == self.active_uri else None
        if run is None:
            record.creation_tried_in = self.active_uri
            run = self.client.create_run(self._experiment(), tags={**tags, CREATION_TAG: record.creation},
                                         run_name=record.name)
        record.store_run_id = run.info.run_id
        if with_params:
            self._write_params(record)

    def _created_before(self, record: _RunRecord):
        """The run an earlier try made in the active store (its answer lost), or None."""
        found = self.client.search_runs([self._experiment()], f"tags.`{CREATION_TAG}` = '{record.creation}'",
                                        max_results=1)
        return found[0] if found else None

    def _write_params(self, record: _RunRecord) -> None:
        write_params(self.client, record.store_run_id, record.params)

    def _write_metrics(self, record: _RunRecord, entries: Sequence[tuple[str, float, int | None]],
                       timestamp_ms: int | None = None) -> None:
        write_metrics(self.client, record.store_run_id, entries, timestamp_ms)

    def _log(self, run_id: str, entries: list[tuple[str, float, int | None]]) -> None:
        if not entries:
            return
        record = self._runs[run_id]
        with self._lock:
            already_waiting = bool(record.pending)
            record.pending.extend(entries)
        if not already_waiting:  # otherwise the flush already queued takes these too
            self._submit(record, lambda: self._flush(record))

    def _flush(self, record: _RunRecord) -> None:
        """Runs on the writer: everything pending for the run, in as few requests as possible."""
        with self._lock:
            entries, record.pending = record.pending, []
        if not entries:
            return
        # One timestamp for every try: a database that committed before the connection dropped keeps one copy.
        timestamp_ms = int(time.time() * 1000)
        try:
            self._guarded(lambda: self._write_metrics(record, entries, timestamp_ms))
        except BaseException:
            with self._lock:  # nothing is dropped: they wait for the next write (or the exit hook)
                record.pending[:0] = entries
            raise
        record.metrics.extend(entries)

    def _guarded(self, write: Callable[[], None]) -> None:
        """Run one write; if the store fails, move to the fallback and write there.

        A sqlite store locked by another process is retried first, once the lock is gone
        (MLflow has already waited 20 s on it); a store that stays locked is left.
        """
        try:
            write()
        except Exception as error:
            if self.fell_back_to is not None or getattr(error, "error_code", None) == "INVALID_PARAMETER_VALUE":
                raise  # nowhere left to go, or a write no store would take
            if store_dialect(self.uri) in DB_DRIVERS or self._server_error(error):
                error = self._retry_on_server(write, error)
                if error is None:
                    return
            elif "locked" in str(error) and not store_locked(self.uri, LOCKED_RETRY_WAIT_S):
                try:
                    write()
                    return
                except Exception as again:  # noqa: BLE001 - the fallback below takes the write
                    error = again
            self._fall_back(error_reason(error))
            write()

    def _server_error(self, error: Exception) -> bool:
        """Whether a tracking server answered a write with an error of its own side (5xx: its database
        restarting, say) and still answers: worth waiting for. A server that is gone is left at once."""
        status = error.get_http_status_code() if isinstance(error, MlflowException) else 500
        return (self.uri.startswith(("http://", "https://")) and status >= 500
                and server_reachable(self.uri, REACHABILITY_TIMEOUT_S))

    def _retry_on_server(self, write: Callable[[], None], error: Exception) -> Exception | None:
        """Try a write that failed on a database server, or on a tracking server in front of one, again
        each time the server answers, for up to DATABASE_RETRY_WAIT_S (a restart takes seconds; the pool
        reconnects); None once it is written, else the last error. Writes run in the background: the
        training goes on meanwhile."""
        started = time.monotonic()
        deadline = started + DATABASE_RETRY_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(DATABASE_RETRY_PAUSE_S)
            if not server_reachable(self.uri, min(REACHABILITY_TIMEOUT_S, max(0.1, deadline - time.monotonic()))):
                continue
            try:
                write()
                return None
            except Exception as again:  # noqa: BLE001 - tried again until the deadline, then the fallback
                error = again
        return RetriedError(error, time.monotonic() - started)

    def _fall_back(self, reason: str) -> None:
        """Switch to the local fallback store and replay every run written so far."""
        self.fell_back_to = self.fallback_uri
        self.fallback_reason = reason
        # The one line that says so, WARNING: the app server's log and the CLI's stderr show it (nobody gives our
        # loggers a handler: Python's last resort writes them to stderr).
        log.warning("tracking: %s failed (%s); runs go to %s", redact_uri(self.uri), reason, self.fallback_uri)
        self._client = None
        self._experiment_id = None
        with self._lock:
            records = [record for record in self._records if record.store_run_id]
        moved: list[tuple[str, str]] = []  # (id in the failed store, id in the fallback) of open runs
        # Children refer to their parent's new id, so replay parents first (insertion order).
        for record in records:
            old_id = record.store_run_id
            self._create(record)
            if record.metrics:
                self._write_metrics(record, record.metrics)
            if record.status:
                self.client.set_terminated(record.store_run_id, status=record.status)
            else:
                moved.append((old_id, record.store_run_id))
        if moved:  # not daemon: the CLI waits for it (seconds: the HTTP timeout, the sqlite lock)
            threading.Thread(target=close_moved_runs, args=(self.uri, moved, self.fallback_uri),
                             name="mlflow-close-moved", daemon=False).start()


@atexit.register
def end_open_runs_at_exit(status: str = KILLED) -> None:
    """At exit (SIGTERM, a server restart, the end of the CLI), every run still open ends KILLED (or `status`: FAILED
    for a process that lost its group)."""
    for tracker in list(_live_trackers):
        tracker.end_open_runs(status)
