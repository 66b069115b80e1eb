"""Links into MLflow's own UI (a run, an experiment, runs compared), in its Model-training view, and the
command that opens that UI on the lab's store."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Sequence

from pmap_core.tracking.uris import redact_uri, store_uri, tracking_uri

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

def ui_command(uri: str | None = None) -> str:
    """The shell command that opens the MLflow UI on the same store (credentials redacted), on the
    port the app's links to it point at (PMAP_LAB_MLFLOW_UI_URL, when it names this machine)."""
    uri = redact_uri(store_uri(uri or tracking_uri()))  # the URI `mlflow ui` (no lab code) can open
    if uri.startswith(("http://", "https://")):
        return f"# the runs are on the server itself: open {uri} in a browser"
    ui = urllib.parse.urlsplit(mlflow_ui_url(uri) or DEFAULT_MLFLOW_UI_URL)
    port = ui.port if ui.hostname in LOCAL_HOSTS and ui.port else DEFAULT_MLFLOW_UI_PORT
    return f"mlflow ui --backend-store-uri {uri} --host 127.0.0.1 --port {port}"
