"""The server's memory after a reader has visited every page (home and every lab, both languages).

Starts `streamlit run` on 127.0.0.1, visits each page in Chromium at its
default settings, and prints the server's resident memory (RSS of the server
process and its children, read with psutil) after each page and at its peak.
The deployment budget is 1.5 GB; the exit status is 1 above it.

    .venv/bin/python -m benchmarks.memory_after_all_labs
"""

from __future__ import annotations

import argparse
import sys

from harness import browser as bs

BUDGET_BYTES = 1.5e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default="en,zh")
    args = parser.parse_args()
    with bs.server_and_browser() as (server, browser):
        peak = start = bs.server_rss_bytes(server)
        print(f"{'page':<22} {'lang':<4} {'RSS MiB':>8} {'exception':>9}")
        print(f"{'(server started)':<22} {'':<4} {start / 2**20:>8.0f}")
        page = browser.new_page(viewport=bs.VIEWPORT)
        for lang in args.languages.split(","):
            for script, url_path in bs.iter_all_pages():
                bs.open_app_page(page, bs.page_url(server, url_path, lang=lang), timeout_ms=240_000)
                rss = bs.server_rss_bytes(server)
                peak = max(peak, rss)
                failed = "yes" if bs.exception_texts(page) else "no"
                print(f"{script:<22} {lang:<4} {rss / 2**20:>8.0f} {failed:>9}", flush=True)
        page.close()
        final = bs.server_rss_bytes(server)
    verdict = "within" if peak < BUDGET_BYTES else "OVER"
    print(f"server RSS after every page: {final / 2**20:.0f} MiB; peak {peak / 2**20:.0f} MiB "
          f"({peak / 1e9:.2f} GB, {verdict} the 1.5 GB budget)")
    return 0 if peak < BUDGET_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
