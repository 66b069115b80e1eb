"""A lab's code is drawn only while the reader has it open: folded, the page sends none of it (the browser draws,
and highlights, every code block it is sent, folded or not: seconds of a page's opening), and opened, it shows each
function's source as `inspect.getsource` reads it, in the order the page names them."""

import inspect

from conftest import assert_clean, folded_key, open_lab

from labs.texts import table as text_table
from pmap_core.costs import analytic

COMMON = text_table("common")


def test_the_code_is_sent_only_once_the_reader_opens_it():
    at = open_lab("applications")  # formulas only: nothing compiles
    assert_clean(at)
    (folded,) = [e for e in at.expander if e.label == COMMON["show_code"]["en"]]
    assert not folded.code
    key = folded_key(folded)
    at.session_state[key] = True  # what opening it in the browser sets
    at.run()
    assert_clean(at)
    (opened,) = [e for e in at.expander if e.label == COMMON["show_code"]["en"]]
    names = key.split(".code.")[1].split("-")
    sources = [inspect.getsource(getattr(analytic, name)).strip() for name in names]
    assert [c.value.strip() for c in opened.code] == sources
