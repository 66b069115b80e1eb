"""Every page in a real browser: Chromium against `streamlit run` on 127.0.0.1.

Generic over `labs.registry.LABS`, so each lab is covered as soon as it exists. Each page is drawn once, in
one language (English and 中文 in turn, page after page), from a link whose every setting is hostile markup:
it shows its heading, the sidebar's every lab and every number input's - and + buttons with no exception, the
link's values as text (no markup drawn, nothing fetched), and one widget of each lab re-renders the page and
goes into the location bar.
Screenshots go to test-artifacts/screenshots/<run id>/.

What the server says is checked without a browser, in tests/pages: every page's heading and its warning for
each refused setting in both languages, and a changed setting's link brought back by a new session
(test_moved_from_browser.py); a teacher's link (`/collectives?op=all_gather&devices=2`) opens those settings
(test_teacher_links.py); a value out of range or nonsense falls back to the default with a warning that names
the setting and shows the value (test_fuzz_links.py).
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
# One language per page, in turn: the other language's heading and warnings are the AppTests' (tests/pages).
LANG = {script: ("en", "zh")[i % 2] for i, (script, _) in enumerate(PAGES)}


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


STEP_UP, STEP_DOWN = '[data-testid="stNumberInputStepUp"]', '[data-testid="stNumberInputStepDown"]'


def _first_url_widget(page, script: str, names):
    """(name, kind, locator) of the first setting of `names` (those in the link) that a widget on the page shows."""
    for name in names:
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
        step_up = widget.locator(STEP_UP)
        if step_up.is_enabled():
            step_up.click()
        else:
            widget.locator(STEP_DOWN).click()
        box.press("Enter")
    elif kind == "radio":
        widget.locator('[data-testid="stRadioOption"]:not([data-selected="true"])').first.click()
    else:
        box = widget.locator('[role="combobox"]')
        current = box.input_value().strip()
        choices = bs.open_choices(page, box)
        for i in range(choices.count()):
            if choices.nth(i).inner_text().strip() != current:
                choices.nth(i).click()
                break


# A value that closes a code span and goes on as markdown and HTML: an image (a tracking
# pixel), a link, raw HTML. The port is closed: nothing may even try to fetch it.
POISON = "x` ![i](http://127.0.0.1:9/p.png) [l](http://127.0.0.1:9/) <img src=http://127.0.0.1:9/h.png> `"
INJECTED = 'a[href*="127.0.0.1:9"], img[src*="127.0.0.1:9"]'


def _settings_named_in_texts(script: str) -> set[str]:
    """Every name a setting of the lab can keep in the link: a setting is labelled by its `w.<name>` text, in the
    page's table or the common one (where settings several pages share are labelled)."""
    keys = {*text_table(script), *text_table("common")}
    return {key[2:] for key in keys if key.startswith("w.") and "." not in key[2:]}


def _assert_sidebar_lists_every_lab(page, lang: str, shot: pathlib.Path) -> None:
    """Every lab is listed in the sidebar, in the page's language, none folded behind Streamlit's "View N more"."""
    nav = page.locator('[data-testid="stSidebarNav"]')
    listed = [text.strip() for text in nav.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()]
    # A link reads "<icon> <title>".
    missing = [_title(lab.script, lang) for lab in LABS
               if not any(text.endswith(_title(lab.script, lang)) for text in listed)]
    assert not missing, f"not listed in the sidebar ({lang}): {missing} ({shot})"
    assert not nav.locator('[data-testid="stSidebarNavViewButton"]').count(), f"a 'View more' button ({shot})"


def _assert_number_inputs_show_their_steps(page, script: str, shot: pathlib.Path) -> None:
    """Every number input in sight has its - and + buttons: Streamlit hides them in a column narrower than its
    breakpoint (about 120 px), where a learner could only type."""
    boxes = page.locator(bs.MAIN).locator('[data-testid="stNumberInput"]:visible').all()
    without = [box.locator("label").inner_text() for box in boxes if not box.locator(STEP_UP).count()]
    assert not without, f"{script}: number inputs too narrow for their - and + buttons: {without} ({shot})"


@pytest.mark.parametrize("script,url_path", PAGES, ids=[f"{script}-{LANG[script]}" for script, _ in PAGES])
def test_page_renders_no_link_value_as_markup_and_a_change_goes_into_the_link(page, script, url_path):
    """Every page, in its language, opened from a link in which every setting it can keep there is the
    poison: it renders its heading and the sidebar without an exception, says for each setting it keeps
    that the value was ignored and shows the value as its own characters; no <a> or <img> comes from it and
    the browser fetches nothing it names. Then the first of those settings a widget shows is changed: the
    page re-renders, the widget shows the new value and the location bar carries it."""
    lang = LANG[script]
    fetched: list[str] = []

    def watch(request) -> None:
        if "127.0.0.1:9/" in request.url:
            fetched.append(request.url)

    candidates = _settings_named_in_texts(script)
    page.on("request", watch)
    try:
        bs.open_app_page(page, bs.page_url(bs.shared_server(), url_path, lang=lang,
                                           **dict.fromkeys(candidates, POISON)))
        shot = _assert_renders_its_heading(page, script, lang)
    finally:
        page.remove_listener("request", watch)
    _assert_sidebar_lists_every_lab(page, lang, shot)
    _assert_number_inputs_show_their_steps(page, script, shot)
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
    print(f"\n{script} ({lang}): poisoned link parameters refused: {sorted(kept)}")
    assert not fetched, f"the browser fetched what a link value named: {fetched}"
    if script == "experiments":
        assert kept, "the experiments lab kept no setting in its link (empty store?)"
    if script == HOME.script:
        return

    name, kind, widget = _first_url_widget(page, script, kept)
    if kind is None:
        pytest.skip(f"{script}: no slider, number input, radio or selectbox keeps its value in the link")
    before, linked_before = _shown(kind, widget), kept[name]
    _change(page, kind, widget)
    bs.wait_ready(page, rerun=True)
    shot = bs.save_screenshot(page, f"{script}-changed")
    _assert_no_exception(page, f"{script} after changing `{name}` ({kind}), screenshot {shot}")
    kind, widget = _url_widget(page, script, name)
    after, in_link = _shown(kind, widget), _query(page.url).get(name)
    assert after != before, f"{script}: the {kind} `{name}` did not change ({shot})"
    # A new session from this link shows the same value: tests/pages/test_moved_from_browser.py.
    assert in_link not in (None, linked_before), f"{script}: `{name}` in the link {linked_before} -> {in_link} ({shot})"
    print(f"{script}: {kind} `{name}` {before} -> {after}; link {name}={in_link}")
