"""Each widget a link sets, and the language, starts in every run of a session at the value it holds.

A starting value that changed between runs (the link's on the session's first run, the widget's own default after:
a slider's minimum, a choice's first option) was taken back by the browser, which then sent it as the visitor's
choice: in Chromium a page opened in 中文 turned English, and a page opened on D = 8 ran on D = 1, once its
background work had run it again (tests/browser/test_browser.py saw both, about one run in four). What the browser
is sent is the widget's starting value, read here from the element the page drew, in the first run and the next."""

from __future__ import annotations

from labs.ui.i18n import LANGUAGE_KEY
from tests.apptest_support import open_lab

LINK = {"op": "all_gather", "devices": 3, "seed": 7}  # none of them the page's default


def _starts_at_its_value(widget) -> bool:
    """Whether the browser, until it sends a value, shows `widget` at the value the page holds for it: its
    element's default."""
    default, kind = widget.proto.default, type(widget).__name__
    if kind == "Slider":
        return list(default) == [float(widget.value)]
    if kind in ("Selectbox", "Radio"):
        return default == widget.index
    return default == widget.value  # NumberInput


def test_widgets_start_at_the_value_they_hold_in_every_run():
    at = open_lab("collectives", lang="zh", **LINK)
    for run in ("first", "second", "third"):
        language = at.sidebar.radio(key=LANGUAGE_KEY)
        assert language.value == "zh" and _starts_at_its_value(language), (run, language.proto.default)
        widgets = {w.key.split(".", 1)[1]: w for w in [*at.slider, *at.selectbox, *at.number_input]
                   if w.key and w.key.startswith("collectives.")}
        for name, value in LINK.items():
            widget = widgets[name]
            assert str(widget.value) == str(value), (run, name, widget.value)
            assert _starts_at_its_value(widget), (run, name, widget.proto.default, widget.value)
        at.run()
