"""`python -m pmap_core store move-fallback [--from URI] [--to URI]`: the runs that went to the fallback store
(`mlflow-fallback.db`, when the class store failed) copied back into the class store; see
pmap_core/tracking/moving.py. Safe to run again: a run already moved is not copied twice."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from pmap_core.cli.output import emit
from pmap_core.tracking import (
    FALLBACK_TRACKING_URI,
    absolute_sqlite_uri,
    check_tracking_uri,
    redact_uri,
    server_reachable,
    sqlite_path,
)
from pmap_core.validation import LabInputError


def register(subparsers: Any) -> None:
    store = subparsers.add_parser("store", help="look after the class store (move fallback runs back into it)")
    commands = store.add_subparsers(dest="store_command", required=True)
    move = commands.add_parser(
        "move-fallback", help="copy the runs of the fallback store back into the class store",
        description="Copy every ended run of the fallback store (where runs go when the class store fails) into "
                    "the class store: its experiment, params, tags, every metric point, status and times; the "
                    "partial FAILED copy the class store kept is deleted (MLflow's soft delete). Runs already "
                    "moved are not copied again; runs still open are left for a later move.")
    move.add_argument("--from", dest="source", default=FALLBACK_TRACKING_URI,
                      help="the fallback store (default: mlflow-fallback.db in the working directory)")
    move.add_argument("--to", dest="target", default=None,
                      help="the class store (default: MLFLOW_TRACKING_URI; keep passwords out of command lines)")
    move.add_argument("--json", action="store_true", help="print the result as one JSON object")
    move.set_defaults(run=run_move_fallback)


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
        print(f"error: the class store {redact_uri(target)} does not answer; nothing was moved", file=sys.stderr)
        return 1
    report = move_fallback_runs(source, target)
    emit({"from": redact_uri(source), "to": redact_uri(target), "moved": len(report.moved),
          "already_moved": len(report.already), "still_open": len(report.still_open),
          "partial_copies_deleted": len(report.replaced),
          "runs": [{"fallback_run_id": old, "run_id": new} for old, new in report.moved]}, args.json)
    return 0
