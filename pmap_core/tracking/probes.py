"""Whether a store can be used now, found out in seconds: a sqlite file locked by another writer, a
database server whose port does not answer, an MLflow server whose /health does not."""

from __future__ import annotations

import base64
import os
import socket
import sqlite3
import ssl
import urllib.error
import urllib.parse
import urllib.request

from pmap_core.tracking.uris import sqlite_path

REACHABILITY_TIMEOUT_S = 3.0
LOCK_PROBE_TIMEOUT_S = 1.0  # how long a store may stay locked before the runs go to the fallback
DB_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}


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
