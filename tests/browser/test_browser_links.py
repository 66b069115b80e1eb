"""Teacher links in real Chromium: a locked setting is drawn disabled with the link's value, a hidden
one is not drawn, and the share panel, opened and ticked, draws the link with the settings and locks. That the
hidden value still applies and that the share panel's link, opened, brings the settings and locks back are
AppTests (tests/pages/test_teacher_links.py)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from harness import browser as bs

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)


def _box(page, name: str):
    """The container of the widget keyed `collectives.<name>` (Streamlit's st-key-… class)."""
    return page.locator(bs.MAIN).locator(".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", f"collectives.{name}"))


def _assert_locked_view(page, where: str) -> None:
    assert not bs.exception_texts(page), where
    devices = _box(page, "devices").locator('input[type="range"]').first
    assert devices.input_value() == "2" and devices.is_disabled(), where
    op = _box(page, "op").locator('[role="combobox"]')
    assert op.input_value().startswith("psum ") and op.is_disabled(), where
    assert _box(page, "size").count() == 0, where  # hidden
    assert _box(page, "seed").locator("input").is_enabled(), where  # neither locked nor hidden


def test_locked_hidden_and_shared_link_in_chromium():
    if _missing:
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    from playwright.sync_api import expect

    server = bs.shared_server()
    context = bs.shared_browser().new_context(viewport=bs.VIEWPORT)
    try:
        page = context.new_page()
        bs.open_app_page(page, bs.page_url(server, "collectives", lang="en", op="psum", devices=2, size=4,
                                           lock="devices,op", hide="size"))
        shot = bs.save_screenshot(page, "collectives-locked")
        _assert_locked_view(page, f"teacher's link ({shot})")

        page.get_by_text("Share this lab").click()
        code = page.locator(bs.MAIN).locator('[data-testid="stCode"] code').last
        expect(code).to_contain_text("hide=size")
        before = code.inner_text().strip()
        hide_seed = page.locator(".st-key-share-collectives-seed-hide")
        for _ in range(3):  # also hide the seed
            # On a loaded machine a click can land before the checkbox's handler is attached: the box
            # stays unticked, and a reader would click again. A ticked box is never clicked twice.
            if not hide_seed.locator("input").is_checked():
                hide_seed.locator("label").click()
            try:  # the rerun may still be drawing when the page reports ready: wait for the link itself
                expect(code).not_to_have_text(before, timeout=30_000)
                break
            except AssertionError:
                continue
        else:
            pytest.fail(f"the link did not change after ticking 'hide' for the seed: {before}")
        bs.wait_ready(page, rerun=True)
        link = code.inner_text().strip()
        query = dict(parse_qsl(urlsplit(link).query))
        assert urlsplit(link).path == "/collectives", link
        assert query == {"op": "psum", "devices": "2", "size": "4", "seed": "0", "lang": "en",
                         "lock": "op,devices", "hide": "size,seed"}, link

    finally:
        context.close()
