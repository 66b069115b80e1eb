"""What trainers and benchmarks need from a tracker (`RunTracker`), a tracker that records nothing,
and where runs go: the store's URI and the tags that say where a run ran.

The MLflow implementation is `pmap_core.tracking.mlflow_backend.Tracker`. Every call names its run id:
nothing relies on MLflow's thread-local "active run", so two sessions of one server can train at
once without mixing runs.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import os
import pathlib
import re
import socket
import sqlite3
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from pmap_core.runtime import describe_runtime
from pmap_core.validation import LabInputError

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
FALLBACK_TRACKING_URI = "sqlite:///mlflow-fallback.db"
EXPERIMENT = "pmap-lab"

FINISHED, FAILED, KILLED = "FINISHED", "FAILED", "KILLED"
DIVERGED_METRIC = "diverged_at_step"  # a FAILED training run's first step whose loss was not a finite number
REACHABILITY_TIMEOUT_S = 3.0
LOCK_PROBE_TIMEOUT_S = 1.0  # how long a store may stay locked before the runs go to the fallback
# The drivers SQLAlchemy needs for each database scheme MLflow accepts (the app installs none of them).
DB_DRIVERS = {"postgresql": ("psycopg2", "psycopg"), "mysql": ("pymysql", "MySQLdb"), "mssql": ("pyodbc", "pymssql")}
# The driver SQLAlchemy (2.1) opens a URI that names none with: `postgresql://` takes psycopg 3, not the
# psycopg2 the lab pins, so `store_uri` names the installed one.
DEFAULT_DB_DRIVER = {"postgresql": "psycopg", "mysql": "MySQLdb", "mssql": "pyodbc"}
DB_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}
REMOTE_SCHEMES = ("http", "https", "databricks")
REDACTED = "***"
SQLITE_HEADER = b"SQLite format 3\x00"
# Query or connection-string fields whose values are secrets.
_SECRET_FIELDS = (r"(?:token|access_token|auth|authorization|password|passwd|pwd|secret|api_key|apikey|key"
                  r"|sig|signature|credential|credentials)")
# The user information runs to the *last* @ of the authority (which ends at /, ?, # or a space): a password
# may hold an unescaped @, and urllib splits it the same way.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/\s?#]+)@")
_SECRET_VALUE = re.compile(rf"(?i)(?P<name>\b{_SECRET_FIELDS})=(?P<value>[^&;\s'\"]+)")


def tracking_uri() -> str:
    """`MLFLOW_TRACKING_URI` when set, otherwise the local sqlite store."""
    return os.environ.get("MLFLOW_TRACKING_URI", "").strip() or DEFAULT_TRACKING_URI


def redact_uri(text: str) -> str:
    """`text` (a URI, or a message that quotes one) with its credentials replaced by `***`.

    A tracking URI comes from the environment and may carry a password or a token
    (`https://user:token@host`, `?token=…`, `password=…`); it is shown on pages every visitor
    sees, in CLI output and in logs, so it is shown and logged only through this function.
    """
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", str(text))
    return _SECRET_VALUE.sub(lambda m: f"{m['name']}={REDACTED}", text)


def sqlite_path(uri: str) -> pathlib.Path | None:
    """The file of a `sqlite:///…` store (None for other stores and in-memory sqlite)."""
    if not uri.startswith("sqlite://"):
        return None
    path = urllib.parse.urlsplit(uri).path
    path = path[1:] if path.startswith("/") else path  # sqlite:///rel.db -> rel.db; sqlite:////abs -> /abs
    return pathlib.Path(path) if path and path != ":memory:" else None


def check_tracking_uri(uri: str) -> str:
    """`uri` when MLflow can use it as a store; a one-line `LabInputError` (before any training)
    for a store that could never work: MLflow would loop on retries or fail with a traceback."""
    shown = redact_uri(uri)
    scheme = uri.split(":", 1)[0].lower() if ":" in uri else ""
    dialect = scheme.split("+", 1)[0]

    def refuse(reason: str) -> LabInputError:
        return LabInputError("tracking_uri", "tracking store {uri}: {reason}", uri=shown, reason=reason)

    if scheme == "file" or not scheme:
        raise refuse("this MLflow refuses file stores (mlruns folders); use sqlite:///mlflow.db")
    if dialect == "sqlite":
        path = sqlite_path(uri)
        if path is None:
            return uri
        if path.is_dir():
            raise refuse(f"{path} is a directory; name a database file in it, e.g. {path / 'mlflow.db'}")
        for folder in (path.parent, *path.parent.parents):
            if folder.exists() and not folder.is_dir():
                raise refuse(f"{folder} is a file, not a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)  # what MLflow does first
        except OSError as error:
            raise refuse(f"cannot create the directory {path.parent} ({error.strerror or error})") from None
        if path.exists() and not os.access(path, os.R_OK | os.W_OK):
            raise refuse(f"{path} cannot be read and written")
        if path.is_file() and path.stat().st_size:
            with path.open("rb") as file:
                if file.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                    raise refuse(f"{path} is not a sqlite database")
        if not path.exists() and not os.access(path.parent, os.W_OK | os.X_OK):
            raise refuse(f"cannot create {path}: the directory {path.parent} is not writable")
        return uri
    if dialect in DB_DRIVERS:
        if "+" in scheme:
            drivers: tuple[str, ...] = (scheme.split("+", 1)[1],)
        else:
            drivers = DB_DRIVERS[dialect]
        if not any(importlib.util.find_spec(name) for name in drivers):
            raise refuse(f"needs a database driver that is not installed ({' or '.join(drivers)})")
        return uri
    if scheme in REMOTE_SCHEMES:
        return uri
    raise refuse(f"unknown scheme {scheme}: use sqlite:///mlflow.db or an http(s) MLflow server")


def store_dialect(uri: str) -> str:
    """The database a store URI names, without its driver: `postgresql` for `postgresql+psycopg2://…`."""
    return uri.partition("://")[0].split("+", 1)[0].lower() if "://" in uri else ""


def store_uri(uri: str) -> str:
    """The URI MLflow is given for the store `uri`: a database URI that names no driver gets the one
    installed when SQLAlchemy's default is not (`postgresql://` -> `postgresql+psycopg2://`); any
    other URI as it is. What the lab shows stays `uri` (through redact_uri)."""
    scheme, separator, rest = uri.partition("://")
    dialect = scheme.lower()
    if not separator or dialect not in DB_DRIVERS or importlib.util.find_spec(DEFAULT_DB_DRIVER[dialect]):
        return uri
    for name in DB_DRIVERS[dialect]:
        if importlib.util.find_spec(name):
            return f"{scheme}+{name.lower()}://{rest}"
    return uri


def absolute_sqlite_uri(uri: str) -> str:
    """A sqlite URI whose relative path is made absolute against the working directory now: the
    runs land in one file wherever the process is later, and a message can say where that is."""
    path = sqlite_path(uri)
    if path is None or path.is_absolute() or not uri.startswith("sqlite:///") or "?" in uri:
        return uri
    return f"sqlite:///{os.path.abspath(path)}"


def store_locked(uri: str, timeout_s: float = LOCK_PROBE_TIMEOUT_S, write: bool = True) -> bool:
    """Whether another process holds a lock on a sqlite store for longer than `timeout_s`.

    MLflow waits 20 s on a locked sqlite store per write (and loops on retries when it opens one),
    so a locked store is found out here, in seconds, before it is used.
    """
    path = sqlite_path(uri)
    if path is None or not path.is_file():
        return False
    try:
        connection = sqlite3.connect(path, timeout=timeout_s)
        try:
            if write:
                connection.execute("BEGIN IMMEDIATE")
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            connection.rollback()
        finally:
            connection.close()
    except sqlite3.OperationalError as error:
        return "locked" in str(error) or "busy" in str(error)
    return False


def ui_command(uri: str | None = None) -> str:
    """The shell command that opens the MLflow UI on the same store (credentials redacted), on the
    port the app's links to it point at (PMAP_LAB_MLFLOW_UI_URL, when it names this machine)."""
    uri = redact_uri(store_uri(uri or tracking_uri()))  # the URI `mlflow ui` (no lab code) can open
    if uri.startswith(("http://", "https://")):
        return f"# the runs are on the server itself: open {uri} in a browser"
    ui = urllib.parse.urlsplit(mlflow_ui_url(uri) or DEFAULT_MLFLOW_UI_URL)
    port = ui.port if ui.hostname in LOCAL_HOSTS and ui.port else DEFAULT_MLFLOW_UI_PORT
    return f"mlflow ui --backend-store-uri {uri} --host 127.0.0.1 --port {port}"


# -- links into MLflow's own UI -------------------------------------------------------

MLFLOW_UI_URL_ENV = "PMAP_LAB_MLFLOW_UI_URL"
DEFAULT_MLFLOW_UI_PORT = 5000
DEFAULT_MLFLOW_UI_URL = f"http://127.0.0.1:{DEFAULT_MLFLOW_UI_PORT}"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# MLflow 3's UI opens an experiment in its GenAI view (traces, tokens) whatever the experiment's tags
# say; this query lands in its Model-training view (runs, metrics, params).
MODEL_TRAINING_VIEW = "workflowType=machine_learning"
MAX_COMPARED_RUNS = 100  # MLflow's compare page shows every run side by side: more help no one
_STORE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # MLflow's run ids (32 hex digits) and experiment ids
_UNSAFE_IN_URL = re.compile(r"[\s\x00-\x1f\x7f\\<>\"'`{}|^]")


def _plain_http(url: str) -> str | None:
    """`url` as scheme://host[:port][/path] when it is a plain http(s) address with no credentials
    (query and fragment dropped), else None."""
    if _UNSAFE_IN_URL.search(url):
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    try:
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError:
        return None
    return f"{parts.scheme.lower()}://{parts.netloc}{parts.path.rstrip('/')}"


def mlflow_ui_url(uri: str | None = None) -> str | None:
    """Where a browser opens MLflow's UI on the lab's store: the setting PMAP_LAB_MLFLOW_UI_URL; without
    it, the tracking server itself when the store `uri` is one (its credentials left out), otherwise
    DEFAULT_MLFLOW_UI_URL (what `ui_command` starts). None when the setting is no plain http(s)
    address, or carries credentials: then no link is made."""
    setting = os.environ.get(MLFLOW_UI_URL_ENV, "").strip()
    if setting:
        return _plain_http(setting)
    uri = uri or tracking_uri()
    if uri.startswith(("http://", "https://")):
        parts = urllib.parse.urlsplit(uri)
        server = urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))
        return _plain_http(server)
    return DEFAULT_MLFLOW_UI_URL


def _ids(*ids: object) -> bool:
    return all(isinstance(i, str) and _STORE_ID.fullmatch(i) for i in ids)


def run_link(ui_url: str | None, experiment_id: object, run_id: object) -> str | None:
    """The run's page in MLflow's UI at `ui_url`, in its Model-training view; None without a UI or
    for an id that is no store id."""
    if ui_url is None or not _ids(experiment_id, run_id):
        return None
    return f"{ui_url}/#/experiments/{experiment_id}/runs/{run_id}?{MODEL_TRAINING_VIEW}"


def experiment_link(ui_url: str | None, experiment_id: object) -> str | None:
    """The experiment's runs in MLflow's UI, in its Model-training view."""
    if ui_url is None or not _ids(experiment_id):
        return None
    return f"{ui_url}/#/experiments/{experiment_id}/runs?{MODEL_TRAINING_VIEW}"


def compare_link(ui_url: str | None, runs: Sequence[tuple[object, object]]) -> str | None:
    """MLflow's compare page for `runs` ((experiment id, run id) pairs; the first MAX_COMPARED_RUNS
    distinct runs), in the Model-training view; None for fewer than two runs or an odd id. The form
    is the UI's own (`/compare-runs?runs=[…]&experiments=[…]`, JSON lists)."""
    chosen = list(dict.fromkeys(runs))
    run_ids = list(dict.fromkeys(run for _, run in chosen))[:MAX_COMPARED_RUNS]
    if ui_url is None or len(run_ids) < 2 or not _ids(*(i for pair in chosen for i in pair)):
        return None
    experiment_ids = list(dict.fromkeys(e for e, run in chosen if run in run_ids))
    query = urllib.parse.urlencode({"runs": json.dumps(run_ids, separators=(",", ":")),
                                    "experiments": json.dumps(experiment_ids, separators=(",", ":"))},
                                   quote_via=urllib.parse.quote)
    return f"{ui_url}/#/compare-runs?{query}&{MODEL_TRAINING_VIEW}"


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


def database_reachable(uri: str, timeout_s: float = REACHABILITY_TIMEOUT_S) -> bool:
    """For a database server named by host (`postgresql://…@host:port/db`), whether its port takes a
    connection within `timeout_s`: for one that does not, MLflow retries opening the store for about
    100 s (and a host that drops packets holds each try). True for any other URI (a local socket is
    not probed)."""
    parts = urllib.parse.urlsplit(uri)
    dialect = parts.scheme.split("+", 1)[0].lower()
    try:
        host, port = parts.hostname, parts.port or DB_PORTS.get(dialect)
    except ValueError:  # a port that is no number: the driver says so
        return True
    if dialect not in DB_PORTS or not host or port is None:
        return True
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def _mlflow_tls() -> ssl.SSLContext:
    """TLS as MLflow's client does it: MLFLOW_TRACKING_INSECURE_TLS (no check, a test's own certificate) or
    MLFLOW_TRACKING_SERVER_CERT_PATH (a CA bundle), so the probe reaches what MLflow's writes reach."""
    context = ssl.create_default_context(cafile=os.environ.get("MLFLOW_TRACKING_SERVER_CERT_PATH") or None)
    if os.environ.get("MLFLOW_TRACKING_INSECURE_TLS", "").strip().lower() == "true":
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def server_reachable(uri: str, timeout_s: float = REACHABILITY_TIMEOUT_S) -> bool:
    """For an http(s) server, whether /health answers within `timeout_s`; for a database server, whether
    its port answers (`database_reachable`); True for local stores."""
    if not uri.startswith(("http://", "https://")):
        return database_reachable(uri, timeout_s)
    parts = urllib.parse.urlsplit(uri)
    netloc = parts.netloc.rpartition("@")[2]  # urllib would take user:password@ for the host
    health = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/") + "/health", "", ""))
    request = urllib.request.Request(health)
    if parts.username is not None:
        credentials = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        request.add_header("Authorization", "Basic " + base64.b64encode(credentials.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=timeout_s, context=_mlflow_tls()):
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
