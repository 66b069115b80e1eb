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

import browser_support as bs
import pytest

from labs.registry import LABS

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

PAGES = list(bs.iter_all_pages())


@pytest.fixture(scope="module")
def page():
    if _missing:  # only under CI: a missing browser is a broken CI image, not a skip
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    bs.shared_server()  # started before the first page asks for it
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


KINDS = [("slider", "stSlider"), ("number", "stNumberInput"), ("radio", "stRadio"), ("selectbox", "stSelectbox")]


def _key_class(script: str, name: str) -> str:
    """The CSS class Streamlit gives the container of the widget keyed `<page>.<name>`."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", f"{script}.{name}")


def _url_widget(page, script: str, name: str):
    """(kind, locator) of the widget that keeps the setting `name` in the link, or (None, None)."""
    box = page.locator(bs.MAIN).locator(f".{_key_class(script, name)}")
    for kind, testid in KINDS:
        found = box.locator(f'[data-testid="{testid}"]')
        if found.count():
            return kind, found.first
    return None, None


def _first_url_widget(page, script: str):
    """(name, kind, locator) of the first setting in the link that a widget on the page shows."""
    for name in _query(page.url):
        if name != "lang":
            kind, widget = _url_widget(page, script, name)
            if kind:
                return name, kind, widget
    return None, None, None


def _shown(kind: str, widget) -> str:
    """What the widget displays: the value a reader sees."""
    if kind == "slider":
        return widget.locator('input[type="range"]').first.input_value()
    if kind == "number":
        return widget.locator("input").input_value()
    if kind == "radio":
        return widget.locator('[data-testid="stRadioOption"][data-selected="true"]').inner_text()
    return widget.locator('[role="combobox"]').input_value()


def _change(page, kind: str, widget) -> None:
    if kind == "slider":
        thumb = widget.locator('input[type="range"]').first
        at_max = thumb.input_value() == thumb.get_attribute("max")
        thumb.focus()
        thumb.press("ArrowLeft" if at_max else "ArrowRight")
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
    name, kind, widget = _first_url_widget(page, lab.script)
    if kind is None:
        pytest.skip(f"{lab.script}: no slider, number input, radio or selectbox keeps its value in the link")
    before = _shown(kind, widget)

    _change(page, kind, widget)
    bs.wait_ready(page, rerun=True)
    shot = bs.save_screenshot(page, f"{lab.script}-changed")
    _assert_no_exception(page, f"{lab.script} after changing `{name}` ({kind}), screenshot {shot}")
    kind, widget = _url_widget(page, lab.script, name)
    after, in_link = _shown(kind, widget), _query(page.url).get(name)
    assert after != before, f"{lab.script}: the {kind} `{name}` did not change ({shot})"
    assert in_link is not None, f"{lab.script}: `{name}` left the link after a change"
    print(f"\n{lab.script}: {kind} `{name}` {before} -> {after}; link {name}={in_link}")

    # A fresh visit to a link with that setting shows the same value.
    bs.open_app_page(page, bs.page_url(server, lab.url_path, lang="en", **{name: in_link}))
    shot = bs.save_screenshot(page, f"{lab.script}-deep-link")
    _assert_no_exception(page, f"{lab.script} from link {name}={in_link}")
    kind, widget = _url_widget(page, lab.script, name)
    assert kind and _shown(kind, widget) == after, f"{lab.script}: link {name}={in_link} did not restore it ({shot})"
    assert _query(page.url).get(name) == in_link


def test_teachers_link_to_collectives(page):
    """The link of the design: /collectives?op=all_gather&devices=4 opens those settings."""
    server = bs.shared_server()
    bs.open_app_page(page, bs.page_url(server, "collectives", lang="en"))
    if _url_widget(page, "collectives", "op")[0] is None or _url_widget(page, "collectives", "devices")[0] is None:
        pytest.skip("the collectives lab has no `op` and `devices` settings yet")
    bs.open_app_page(page, bs.page_url(server, "collectives", lang="en", op="all_gather", devices=4))
    shot = bs.save_screenshot(page, "collectives-teacher-link")
    _assert_no_exception(page, "collectives teacher link")
    assert {"op": "all_gather", "devices": "4"}.items() <= _query(page.url).items(), shot
    assert _shown(*_url_widget(page, "collectives", "devices")) == "4", shot
    texts = importlib.import_module("labs.texts.collectives").TEXTS
    label = texts.get("w.op.all_gather", {}).get("en", "all_gather")
    assert _shown(*_url_widget(page, "collectives", "op")) == label, shot


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
