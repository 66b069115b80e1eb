"""Many students at once: N browser sessions run the heaviest labs together on one server.

Starts `streamlit run` on 127.0.0.1 and Debian's Chromium, opens N sessions on
the labs that use `heavy_jobs.heavy_job`, presses each page's primary button at once,
and prints how long until every session finished, the server's peak memory
(RSS, children included) and how many sessions showed the 'queued' notice.

    .venv/bin/python -m benchmarks.load_sessions --sessions 8 --heavy-jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys

from tests import browser_support as bs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--heavy-jobs", type=int, default=None,
                        help="PMAP_LAB_HEAVY_JOBS for the server (default: its own default, one per core)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    labs = bs.heavy_labs()
    env = {"PMAP_LAB_HEAVY_JOBS": str(args.heavy_jobs)} if args.heavy_jobs else {}
    with bs.server_and_browser(env) as (server, browser):
        report = bs.run_sessions(server, browser, labs, args.sessions)
    figures = {
        "sessions": report.sessions,
        "labs": report.labs,
        "heavy_jobs": args.heavy_jobs or "default (one per core)",
        "all_done_s": round(report.wall_s, 1),
        "slowest_session_s": round(max(report.finished_s), 1),
        "fastest_session_s": round(min(report.finished_s), 1),
        "server_rss_start_mib": round(report.start_rss_bytes / 2**20),
        "server_rss_peak_mib": round(report.peak_rss_bytes / 2**20),
        "sessions_shown_queued": report.queued_seen,
        "sessions_with_exception": sorted(report.exceptions),
        "unfinished": report.unfinished,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")
    return 1 if report.exceptions or report.unfinished else 0


if __name__ == "__main__":
    sys.exit(main())
