"""Every page in a real browser: Chromium against `streamlit run` on 127.0.0.1.

Generic over `labs.registry.LABS`, so each lab is covered as soon as it exists:
each page renders in both languages without an exception, one widget of each
lab re-renders the page, and a link with that widget's query parameter brings
the same setting back. Screenshots go to test-artifacts/screenshots/<run id>/.
"""

from __future__ import annotations

import importlib
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

import browser_support as bs
from labs.registry import LABS

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

PAGES = list(bs.iter_all_pages())


@pytest.fixture(scope="module")
def page():
    if _missing:  # only under CI: a missing browser is a broken CI image, not a skip
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    server = bs.shared_server()
    context = bs.shared_browser().new_context(viewport=bs.VIEWPORT)
    tab = context.new_page()
    print(f"\nscreenshots: {bs.screenshot_dir()}")
    yield tab
    context.close()


def _title(script: str, lang: str) -> str:
    return importlib.import_module(f"labs.texts.{script}").TEXTS["title"][lang]


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def _assert_no_exception(page, where: str) -> None:
    errors = bs.exception_texts(page)
    assert not errors, f"{where}: exception on the page:\n" + "\n---\n".join(errors)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("script,url_path", PAGES, ids=[script for script, _ in PAGES])
def test_page_renders(page, script, url_path, lang):
    server = bs.shared_server()
    bs.open_app_page(page, bs.page_url(server, url_path, lang=lang))
    shot = bs.save_screenshot(page, f"{script}-{lang}")
    _assert_no_exception(page, f"{script} ({lang}), screenshot {shot}")
    # The page's own title, in the language asked for, is on screen (sidebar or heading).
    assert _title(script, lang) in page.locator('[data-testid="stApp"]').inner_text(), shot


# --- one interaction per lab, then the same setting from a link ---------------


def _first_widget(page):
    """(kind, locator) of the first widget in the main area a reader can change."""
    main = page.locator(bs.MAIN)
    for kind, selector in [
        ("slider", '[data-testid="stSlider"] [role="slider"]'),
        ("number", '[data-testid="stNumberInput"]'),
        ("radio", '[data-testid="stRadio"]'),
        ("selectbox", '[data-testid="stSelectbox"]'),
    ]:
        found = main.locator(selector)
        if found.count():
            return kind, found.first
    return None, None


def _shown(kind: str, widget) -> str:
    """What the widget displays: the value a reader sees."""
    if kind == "slider":
        return widget.get_attribute("aria-valuenow") or ""
    if kind == "number":
        return widget.locator("input").input_value()
    if kind == "radio":
        return widget.locator('[data-testid="stRadioOption"][data-selected="true"]').inner_text()
    return widget.locator('[role="combobox"]').input_value()


def _change(page, kind: str, widget) -> None:
    if kind == "slider":
        at_max = widget.get_attribute("aria-valuenow") == widget.get_attribute("aria-valuemax")
        widget.focus()
        widget.press("ArrowLeft" if at_max else "ArrowRight")
    elif kind == "number":
        box = widget.locator("input")
        step_up = widget.locator('[data-testid="stNumberInputStepUp"]')
        if step_up.count() and step_up.is_enabled():
            step_up.click()
        else:
            widget.locator('[data-testid="stNumberInputStepDown"]').click()
        box.press("Enter")
    elif kind == "radio":
        widget.locator('[data-testid="stRadioOption"]:not([data-selected="true"])').first.click()
    else:
        box = widget.locator('[role="combobox"]')
        current = box.input_value().strip()
        box.click()
        choices = page.locator('[role="option"]')
        choices.first.wait_for(timeout=10_000)
        for i in range(choices.count()):
            if choices.nth(i).inner_text().strip() != current:
                choices.nth(i).click()
                break


@pytest.mark.parametrize("lab", LABS, ids=[lab.script for lab in LABS])
def test_interaction_rerenders_and_link_restores_it(page, lab):
    server = bs.shared_server()
    bs.open_app_page(page, bs.page_url(server, lab.url_path, lang="en"))
    _assert_no_exception(page, f"{lab.script} default")
    kind, widget = _first_widget(page)
    if kind is None:
        pytest.skip(f"{lab.script}: no slider, number input, radio or selectbox in the main area")
    before_shown, before_query = _shown(kind, widget), _query(page.url)

    _change(page, kind, widget)
    bs.wait_ready(page, rerun=True)
    shot = bs.save_screenshot(page, f"{lab.script}-changed")
    _assert_no_exception(page, f"{lab.script} after changing its first {kind} (screenshot {shot})")
    kind, widget = _first_widget(page)
    after_shown, after_query = _shown(kind, widget), _query(page.url)
    assert after_shown != before_shown, f"{lab.script}: the {kind} did not change ({shot})"
    changed = {k: v for k, v in after_query.items() if before_query.get(k) != v}
    assert changed, f"{lab.script}: changing the {kind} changed no query parameter (the link would lose it)"

    # A fresh visit to a link with that setting shows the same value.
    bs.open_app_page(page, bs.page_url(server, lab.url_path, lang="en", **changed))
    shot = bs.save_screenshot(page, f"{lab.script}-deep-link")
    _assert_no_exception(page, f"{lab.script} from link {changed}")
    kind, widget = _first_widget(page)
    assert _shown(kind, widget) == after_shown, f"{lab.script}: link {changed} did not restore the {kind} ({shot})"
    assert changed.items() <= _query(page.url).items()


def test_teachers_link_to_collectives(page):
    """The link of the design: /collectives?op=all_gather&devices=4 opens those settings."""
    source = (bs.ROOT / "labs" / "collectives.py").read_text()
    if not re.search(r"""["']op["']""", source) or not re.search(r"""["']devices["']""", source):
        pytest.skip("the collectives lab has no `op` and `devices` settings yet")
    server = bs.shared_server()
    bs.open_app_page(page, bs.page_url(server, "collectives", lang="en", op="all_gather", devices=4))
    shot = bs.save_screenshot(page, "collectives-teacher-link")
    _assert_no_exception(page, "collectives teacher link")
    assert {"op": "all_gather", "devices": "4"}.items() <= _query(page.url).items(), shot
    main = page.locator(bs.MAIN)
    sliders = main.locator('[data-testid="stSlider"] [role="slider"]')
    numbers = main.locator('[data-testid="stNumberInput"] input')
    shown = [sliders.nth(i).get_attribute("aria-valuenow") for i in range(sliders.count())]
    shown += [numbers.nth(i).input_value() for i in range(numbers.count())]
    assert "4" in shown, f"no widget shows 4 devices: {shown} ({shot})"
    assert "all_gather" in main.inner_text(), shot


def test_out_of_range_link_is_refused_with_a_message(page):
    """A link with a value outside a widget's bounds falls back to the default and says so."""
    server = bs.shared_server()
    for lab in LABS:
        bs.open_app_page(page, bs.page_url(server, lab.url_path, lang="en"))
        numeric = {k: v for k, v in _query(page.url).items() if k != "lang" and re.fullmatch(r"-?\d+", v)}
        if numeric:
            name = sorted(numeric)[0]
            bs.open_app_page(page, bs.page_url(server, lab.url_path, lang="en", **{name: "999999999"}))
            shot = bs.save_screenshot(page, f"{lab.script}-bad-link")
            _assert_no_exception(page, f"{lab.script}?{name}=999999999")
            warnings = page.locator('[data-testid="stAlert"]').all_inner_texts()
            assert any("999999999" in text for text in warnings), f"{lab.script}: no warning ({shot})"
            assert _query(page.url)[name] == numeric[name]
            return
    pytest.skip("no lab has a numeric setting yet")
