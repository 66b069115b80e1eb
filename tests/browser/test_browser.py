"""Every page in a real browser: Chromium against `streamlit run` on 127.0.0.1.

Generic over `labs.registry.LABS`, so each lab is covered as soon as it exists:
each page renders in both languages without an exception (in Chinese from a
link whose every setting is hostile markup, which must show as text), one
widget of each lab re-renders the page, and a link with that widget's query
parameter brings the same setting back. Screenshots go to test-artifacts/screenshots/<run id>/.

What a page does with a link's values is checked without a browser, in tests/pages: a teacher's link
(`/collectives?op=all_gather&devices=2`) opens those settings (test_teacher_links.py), and a value out
of range or nonsense falls back to the default with a warning that names the setting and shows the value
(test_fuzz_links.py; in the browser, every Chinese page below also refuses its link's values this way).
"""

from __future__ import annotations

import pathlib
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from harness import browser as bs
from labs.registry import HOME, LABS
from labs.texts import table as text_table

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
    return text_table(script)["title"][lang]


def _heading(script: str, lang: str) -> str:
    """The page's own heading: its `heading` text where it has one (home), else its title."""
    table = text_table(script)
    return table.get("heading", table["title"])[lang]


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def _assert_no_exception(page, where: str) -> None:
    errors = bs.exception_texts(page)
    assert not errors, f"{where}: exception on the page:\n" + "\n---\n".join(errors)


def test_home_page_renders_in_english(page):
    bs.open_app_page(page, bs.page_url(bs.shared_server(), HOME.url_path, lang="en"))
    _assert_renders_its_heading(page, HOME.script, "en")


def _assert_renders_its_heading(page, script: str, lang: str) -> pathlib.Path:
    """The page shows no exception and its own heading in `lang`; returns the screenshot's path."""
    shot = bs.save_screenshot(page, f"{script}-{lang}")
    _assert_no_exception(page, f"{script} ({lang}), screenshot {shot}")
    # The page's own heading, in the language asked for, is the main area's h1 (the sidebar
    # lists every title whatever page is open, so it proves nothing about this one).
    headings = [text.strip() for text in page.locator(bs.MAIN).locator("h1").all_inner_texts()]
    assert headings and headings[0] == _heading(script, lang), f"h1 {headings} ({shot})"
    return shot


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
    _assert_renders_its_heading(page, lab.script, "en")
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


def test_sidebar_lists_every_lab(page):
    """Every lab is listed in the sidebar, none folded behind Streamlit's "View N more"."""
    server = bs.shared_server()
    for lang in ("en", "zh"):
        bs.open_app_page(page, bs.page_url(server, "", lang=lang))
        nav = page.locator('[data-testid="stSidebarNav"]')
        shot = bs.save_screenshot(page, f"sidebar-{lang}")
        listed = [text.strip() for text in nav.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()]
        # A link reads "<icon> <title>".
        missing = [_title(lab.script, lang) for lab in LABS
                   if not any(text.endswith(_title(lab.script, lang)) for text in listed)]
        assert not missing, f"not listed in the sidebar ({lang}): {missing} ({shot})"
        assert not nav.locator('[data-testid="stSidebarNavViewButton"]').count(), f"a 'View more' button ({shot})"


# A value that closes a code span and goes on as markdown and HTML: an image (a tracking
# pixel), a link, raw HTML. The port is closed: nothing may even try to fetch it.
POISON = "x` ![i](http://127.0.0.1:9/p.png) [l](http://127.0.0.1:9/) <img src=http://127.0.0.1:9/h.png> `"
INJECTED = 'a[href*="127.0.0.1:9"], img[src*="127.0.0.1:9"]'


def _settings_named_in_texts(script: str) -> set[str]:
    """Every name a setting of the lab can keep in the link: a setting is labelled by its `w.<name>` text, in the
    page's table or the common one (where settings several pages share are labelled)."""
    keys = {*text_table(script), *text_table("common")}
    return {key[2:] for key in keys if key.startswith("w.") and "." not in key[2:]}


@pytest.mark.parametrize("script,url_path", PAGES, ids=[f"{script}-zh" for script, _ in PAGES])
def test_page_renders_in_chinese_and_no_link_value_renders_as_markup(page, script, url_path):
    """Every page in Chinese, opened from a link in which every setting it can keep there is the
    poison: it renders its heading without an exception, says for each setting it keeps that the
    value was ignored and shows the value as its own characters; no <a> or <img> comes from it and
    the browser fetches nothing it names. (In English, each lab's first render is the start of its
    interaction test.)"""
    fetched: list[str] = []

    def watch(request) -> None:
        if "127.0.0.1:9/" in request.url:
            fetched.append(request.url)

    candidates = _settings_named_in_texts(script)
    page.on("request", watch)
    try:
        bs.open_app_page(page, bs.page_url(bs.shared_server(), url_path, lang="zh",
                                           **dict.fromkeys(candidates, POISON)))
        shot = _assert_renders_its_heading(page, script, "zh")
    finally:
        page.remove_listener("request", watch)
    # The settings the page keeps now hold their defaults; a name it does not use keeps the poison.
    kept = {name: value for name, value in _query(page.url).items() if name != "lang" and value != POISON}
    unlabelled = kept.keys() - candidates
    assert not unlabelled, f"{script}: settings without a `w.<name>` text: {unlabelled}"
    main = page.locator(bs.MAIN)
    injected = [element.evaluate("e => e.outerHTML") for element in main.locator(INJECTED).all()]
    assert not injected, f"{script}: markup from a link value: {injected} ({shot})"
    alerts = main.locator('[data-testid="stAlert"]').all_inner_texts()
    for name in kept:
        assert any(name in text and POISON in text for text in alerts), (
            f"{script}: `{name}` not refused with its value shown verbatim: {alerts} ({shot})")
    print(f"\n{script}: poisoned link parameters refused: {sorted(kept)}")
    assert not fetched, f"the browser fetched what a link value named: {fetched}"
    if script == "experiments":
        assert kept, "the experiments lab kept no setting in its link (empty store?)"
