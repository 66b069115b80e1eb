"""The 2-D mesh lab in real Chromium, in 中文: it opens on a data × model shape of D = 4 with no exception, its
heading in the page's language and JAX's own message verbatim (once the examples compiled in the background show),
and trains on that shape into MLflow (the run id shown as text). The same page in English, as AppTests:
tests/pages/test_moved_from_browser.py (the page) and tests/pages/test_mesh_2d_page.py (the run)."""

from __future__ import annotations

import re

import pytest

from harness import browser as bs
from labs.texts import table as text_table

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

TRAIN = ".st-key-mesh_2d-train button"
SETTINGS = {"devices": 4, "hidden": 16, "features": 4, "batch": 32, "steps": 10}
RUN_ID = re.compile(r"\b[0-9a-f]{32}\b")


@pytest.fixture(scope="module")
def context():
    yield from bs.shared_context(_missing)


def test_the_page_opens_and_trains_on_one_shape(context):
    lang = "zh"
    page = context.new_page()
    try:
        bs.open_app_page(page, bs.page_url(bs.shared_server(), "mesh-2d", lang=lang, **SETTINGS))
        main = page.locator(bs.MAIN)
        # The page answers before it compiles; what it compiles in the background shows once it is done.
        main.get_by_text("Contracting dimensions are sharded").first.wait_for(timeout=240_000)
        bs.wait_ready(page, timeout_ms=240_000)
        shot = bs.save_screenshot(page, f"mesh_2d-{lang}")
        assert not bs.exception_texts(page), shot
        title = text_table("mesh_2d")["title"][lang]
        assert main.locator("h1").first.inner_text().strip() == title, shot
        shown = main.inner_text()
        assert ("On 2 × 2: each device takes 16 rows" if lang == "en" else "在 2 × 2 上") in shown, shot
        assert "Contracting dimensions are sharded" in shown, shot  # JAX's message, verbatim, in both languages
        page.locator(TRAIN).click()
        bs.wait_ready(page, timeout_ms=240_000, rerun=True)
        shot = bs.save_screenshot(page, f"mesh_2d-{lang}-trained")
        assert not bs.exception_texts(page), shot
        assert not page.locator('[data-testid="stAlertContentError"]').count(), shot
        assert RUN_ID.search(main.inner_text()), shot  # the MLflow run's id, as plain text
    finally:
        page.close()
