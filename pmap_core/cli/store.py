"""`python -m pmap_core store move-fallback [--from URI] [--to URI]`: the runs that went to the fallback store
(`mlflow-fallback.db`, when the class store failed) copied back into the class store; see
pmap_core/tracking/moving.py. Safe to run again: a run already moved is not copied twice.

`python -m pmap_core store check [--store URI] [--env-file PATH]`: whether the deployment can hold a class (the
class store takes a run, the teacher key has a length the app accepts); see pmap_core/tracking/readiness.py."""

from __future__ import annotations

import argparse
import os
from typing import Any

from pmap_core.cli.output import emit, fail
from pmap_core.tracking import (
    DEFAULT_TRACKING_URI,
    FALLBACK_TRACKING_URI,
    absolute_sqlite_uri,
    check_tracking_uri,
    redact_uri,
    server_reachable,
    sqlite_path,
)
from pmap_core.validation import TEACHER_KEY_ENV, LabInputError


def register(subparsers: Any) -> None:
    store = subparsers.add_parser(
        "store", description="Look after the class store: check that a class can use it; move fallback runs back "
                             "into it.")
    commands = store.add_subparsers(dest="store_command", required=True)
    move = commands.add_parser(
        "move-fallback", help="copy the runs of the fallback store back into the class store",
        description="Copy every ended run of the fallback store (where runs go when the class store fails) into "
                    "the class store: its experiment, params, tags, every metric point, status and times; the "
                    "partial copy the class store kept (the same creation tag) is ended FAILED and deleted "
                    "(MLflow's soft delete). Runs already moved are not copied again; runs still open are left "
                    "for a later move.")
    move.add_argument("--from", dest="source", default=FALLBACK_TRACKING_URI,
                      help="the fallback store (default: mlflow-fallback.db in the working directory)")
    move.add_argument("--to", dest="target", default=None,
                      help="the class store (default: MLFLOW_TRACKING_URI; keep passwords out of command lines)")
    move.add_argument("--json", action="store_true", help="print the result as one JSON object")
    move.set_defaults(run=run_move_fallback)
    check = commands.add_parser(
        "check", help="check the deployment as a class uses it: the class store takes a run; the teacher key's length",
        description="Write a tag to a run of the check's own (experiment pmap-lab-checks) in the class store and "
                    "read it back through MLflow's API (an mlflow server answers /health while its database is "
                    "down), and check the teacher key's length (the app refuses another; under streamlit run "
                    "every page shows only the refusal). Exits 1 with one line naming what is wrong.")
    check.add_argument("--store", default=None,
                       help="the class store (default: MLFLOW_TRACKING_URI, else sqlite:///mlflow.db here, as the app)")
    check.add_argument("--env-file", default=None,
                       help="the app processes' environment file (systemd's EnvironmentFile=, e.g. "
                            "/srv/pmap-lab/app.env): its settings count over this process's environment")
    check.add_argument("--json", action="store_true", help="print the result as one JSON object")
    check.set_defaults(run=run_check)


def run_move_fallback(args: argparse.Namespace) -> int:
    from pmap_core.tracking.moving import move_fallback_runs

    target = args.target or os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if not target:
        raise LabInputError("no_store", "name the class store: --to URI, or set MLFLOW_TRACKING_URI")
    check_tracking_uri(target)
    source = absolute_sqlite_uri(check_tracking_uri(args.source))
    path = sqlite_path(source)
    if path is not None and not path.is_file():
        raise LabInputError("no_fallback", "no fallback store at {path}", path=path)
    if absolute_sqlite_uri(target) == source:
        raise LabInputError("same_store", "the fallback store and the class store are the same store")
    if not server_reachable(target):
        return fail(f"the class store {redact_uri(target)} does not answer; nothing was moved", 1, args.json,
                    "store_unreachable")
    report = move_fallback_runs(source, target)
    emit({"from": redact_uri(source), "to": redact_uri(target), "moved": len(report.moved),
          "already_moved": len(report.already), "still_open": len(report.still_open),
          "partial_copies_deleted": len(report.replaced),
          "runs": [{"fallback_run_id": old, "run_id": new} for old, new in report.moved]}, args.json)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from pmap_core.tracking.readiness import NotReady, check_store, check_teacher_key_setting, read_env_file

    try:
        environ = {**os.environ, **(read_env_file(args.env_file) if args.env_file else {})}
        check_teacher_key_setting(environ)
        uri = args.store or environ.get("MLFLOW_TRACKING_URI", "").strip() or DEFAULT_TRACKING_URI
        run_id = check_store(uri)
    except NotReady as error:
        return fail(str(error), 1, args.json, "not_ready")
    emit({"store": redact_uri(uri), "check_run_id": run_id,
          "teacher_key": "set" if environ.get(TEACHER_KEY_ENV, "").strip() else "unset"}, args.json)
    return 0
