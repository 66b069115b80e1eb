"""The pipeline lab in real Chromium, drawn once per action in one language each: in English at D = 2 it opens
with no exception and no error box and its timeline drawn, its Measure button drawn disabled until a
prediction, which then measures; in 中文 at D = 4, P = 2 the button trains two pipelines side by side and the page
shows each mesh axis's bytes and the scaling ratio from what ran. The figures, at D = 1, 2, 3, 4 and 8 and in both
languages, are the AppTests' (tests/pages/test_pipeline_page.py, tests/pages/test_moved_from_browser.py)."""

from __future__ import annotations

import pytest

from harness import browser as bs
from labs.texts import table as text_table

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

TEXTS = text_table("pipeline")
MEASURE = ".st-key-pipeline-measure button"
GUESS = ".st-key-pipeline-guess"
SETTINGS = {"devices": 2, "microbatches": 4, "rows": 4, "hidden": 16}


@pytest.fixture(scope="module")
def context():
    yield from bs.shared_context(_missing)


def test_the_page_draws_the_schedule_and_measures_after_a_prediction(context):
    lang = "en"
    page = context.new_page()
    try:
        bs.open_app_page(page, bs.page_url(bs.shared_server(), "pipeline", lang=lang, **SETTINGS))
        shot = bs.save_screenshot(page, f"pipeline-{lang}")
        assert not bs.exception_texts(page), shot
        main = page.locator(bs.MAIN)
        assert main.locator("h1").first.inner_text().strip() == TEXTS["title"][lang], shot
        shown = main.inner_text()
        assert f"{1 / 5:.4f}" in shown, shot  # the bubble (P − 1)/(M + P − 1) at P = 2, M = 4, counted
        assert main.locator(".vega-embed").count() >= 1, shot  # the timeline
        assert page.locator(MEASURE).first.is_disabled(), shot  # a prediction first
        page.locator(GUESS).get_by_text(TEXTS["guess.1f1b"][lang], exact=True).click()
        bs.wait_ready(page, rerun=True)
        page.locator(MEASURE).first.click()
        bs.wait_ready(page, timeout_ms=240_000, rerun=True)
        shot = bs.save_screenshot(page, f"pipeline-{lang}-measured")
        assert not bs.exception_texts(page), shot
        assert not page.locator('[data-testid="stAlertContentError"]').count(), shot
        shown = main.inner_text()
        assert TEXTS["memory.heading"][lang] in shown, shot
        assert "t_f" in shown and "(M + P − 1)(t_f + t_b)" in shown, shot  # the fits, from what ran (P = 2)
    finally:
        page.close()


def test_at_d4_two_pipelines_train_side_by_side_and_show_their_bytes(context):
    lang = "zh"
    page = context.new_page()
    try:
        bs.open_app_page(page, bs.page_url(bs.shared_server(), "pipeline", lang=lang, devices=4, stages=2, layers=4,
                                           microbatches=4, rows=4, hidden=16))
        main = page.locator(bs.MAIN)
        page.locator(".st-key-pipeline-train_data button").first.click()
        bs.wait_ready(page, timeout_ms=240_000, rerun=True)
        shot = bs.save_screenshot(page, f"pipeline-{lang}-data-axis")
        assert not bs.exception_texts(page), shot
        assert not page.locator('[data-testid="stAlertContentError"]').count(), shot
        shown = main.inner_text()
        assert TEXTS["scaling.heading"][lang] in shown, shot
        assert "1,668" in shown and "5,120" in shown, shot  # 2(X − 1)/X × (1,664 + 4) bytes; 2 × 10 slots × 256
    finally:
        page.close()
