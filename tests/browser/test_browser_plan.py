"""The Plan a run page in real Chromium, in English: on a setting whose ranking takes seconds to plan (Llama 3 8B on
128 devices), the page's first run finishes with its settings and the ⏳ note of the planning running in the
background and no ranking yet; the ranking then shows by itself, no click needed. The figures are
the AppTests' (tests/pages/test_plan_page.py)."""

from __future__ import annotations

import json

import pytest

from harness import browser as bs
from labs.texts import table as text_table

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

TEXTS = text_table("plan")
SETTING = {"model": "llama3-8b", "devices": 128, "seq_len": 8192, "tokens": 128 * 8192}
RANKING = '[data-testid="stDataFrame"]'


# What the page showed when its first run ended (the address: the layout picker, drawn only once the plans are
# ranked, writes `layout=` into it), and whether the ⏳ note of the planning ever showed.
FIRST_ANSWER = """
window.__plan = {firstEnd: null, note: false};
new MutationObserver(() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const main = document.querySelector('[data-testid="stMain"]');
  if (main && main.textContent.includes(NOTE)) window.__plan.note = true;
  const state = app && app.getAttribute('data-test-script-state');
  if (state === 'running') window.__plan.ran = true;
  if (state === 'notRunning' && window.__plan.ran && window.__plan.firstEnd === null) {
    window.__plan.firstEnd = location.search;
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
""".replace("NOTE", json.dumps(TEXTS["planning"]["en"].split("{")[0]))


@pytest.fixture(scope="module")
def context():
    yield from bs.shared_context(_missing)


def test_the_first_answer_comes_before_the_ranking_which_then_shows_by_itself(context):
    page = context.new_page()
    page.add_init_script(FIRST_ANSWER)
    try:
        page.goto(bs.page_url(bs.shared_server(), "plan", lang="en", **SETTING), wait_until="commit")
        main = page.locator(bs.MAIN)
        main.get_by_text(TEXTS["verdict.heading"]["en"], exact=True).wait_for(timeout=600_000)  # no click
        bs.wait_ready(page)
        shot = bs.save_screenshot(page, "plan-ranked")
        assert not bs.exception_texts(page), shot
        seen = page.evaluate("window.__plan")
        assert seen["firstEnd"] is not None and "devices=128" in seen["firstEnd"], (seen, shot)
        assert "layout=" not in seen["firstEnd"], (seen, shot)  # the first run ended before the ranking
        assert seen["note"], (seen, shot)  # and said so
        assert "layout=" in page.url, shot
        assert TEXTS["planning"]["en"].split("{")[0] not in main.inner_text(), shot
        assert main.locator(RANKING).count() >= 2, shot  # the hardware's table and the ranking
    finally:
        page.close()
