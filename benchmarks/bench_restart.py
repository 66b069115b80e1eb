"""A warm restart: the first renders of a restarted app server, with JAX's compilation cache and without.

    .venv/bin/python -m benchmarks.bench_restart                   # five labs, then a training run
    .venv/bin/python -m benchmarks.bench_restart --pages collectives sharded_dp --restarts 2

For each mode (the cache beside the store, as the app keeps it by default; `PMAP_LAB_COMPILATION_CACHE=off`)
one working folder with its own sqlite store: `streamlit run` starts, one session speaks Streamlit's
websocket protocol (benchmarks.load_protocol) and opens each page in turn, then presses Train on the
training page; the server stops (SIGTERM) and starts again in the same folder, and a new session
does the same. Printed: the seconds from each request until the script has finished (the server's
side of a first render: imports for the first page, compiles, the run) and their sum after the
first page, the server's start until healthy, and the cache's entries after each start. Loopback only; JAX's own
JAX_COMPILATION_CACHE_* variables are left out of the servers' environment.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
import tempfile

from benchmarks.load_sessions import URL_PATHS
from harness.app_server import cache_entries, render, start_app, stop_app
from pmap_core.runtime import COMPILATION_CACHE_ENV, COMPILATION_CACHE_FOLDER


def measure(mode: str, env: dict[str, str], pages: list[str], train: bool, restarts: int) -> list[dict]:
    folder = pathlib.Path(tempfile.mkdtemp(prefix=f"pmap-lab-restart-{mode.replace(' ', '-')}-"))
    rows = []
    try:
        for start in range(restarts + 1):
            server, startup_s = start_app(folder, env)
            try:
                times = render(server, pages, train)
            finally:
                stop_app(server)
            rows.append({"mode": mode, "start": "first" if start == 0 else f"restart {start}",
                         "startup_s": startup_s, **times,
                         "entries": len(cache_entries(folder / COMPILATION_CACHE_FOLDER))})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=["applications", "collectives", "device_mapping", "mesh_2d",
                                                       "training"], choices=sorted(URL_PATHS),
                        help="the labs each session opens, in order (script names)")
    parser.add_argument("--no-train", action="store_true", help="do not press Train on the training page")
    parser.add_argument("--restarts", type=int, default=1, help="restarts after the first start")
    args = parser.parse_args(argv)
    modes = {"cache": {}, "no cache": {COMPILATION_CACHE_ENV: "off"}}
    rows = [row for mode, env in modes.items()
            for row in measure(mode, env, args.pages, not args.no_train, args.restarts)]
    timed = [*args.pages, *([] if args.no_train else ["training: Train"])]
    for row in rows:  # the first page pays the app's imports too, compiled or not
        row["after the first"] = sum(row.get(name, 0.0) for name in timed[1:])
    columns = ["startup_s", *timed, "after the first"]
    print(f"{'mode':<9} {'start':<10} " + " ".join(f"{c:>16}" for c in columns) + f" {'cache entries':>14}")
    for row in rows:
        print(f"{row['mode']:<9} {row['start']:<10} "
              + " ".join(f"{row.get(c, float('nan')):>15.2f}s" for c in columns) + f" {row['entries']:>14}")
    print("seconds from the request until the script finished; the first page includes the app's imports;\n"
          "'after the first': the sum of the other pages' figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
