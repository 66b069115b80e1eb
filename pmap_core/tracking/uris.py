"""Where runs go: the tracking URI, the URI MLflow is given for a store, the checks that refuse a store
that could never work, and the redaction that keeps a URI's credentials off every page and log."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import urllib.parse

from pmap_core.validation import LabInputError

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
FALLBACK_TRACKING_URI = "sqlite:///mlflow-fallback.db"
# The drivers SQLAlchemy needs for each database scheme MLflow accepts (the app installs none of them).
DB_DRIVERS = {"postgresql": ("psycopg2", "psycopg"), "mysql": ("pymysql", "MySQLdb"), "mssql": ("pyodbc", "pymssql")}
# The driver SQLAlchemy (2.1) opens a URI that names none with: `postgresql://` takes psycopg 3, not the
# psycopg2 the lab pins, so `store_uri` names the installed one.
DEFAULT_DB_DRIVER = {"postgresql": "psycopg", "mysql": "MySQLdb", "mssql": "pyodbc"}
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
