"""Names and class codes as a class records them: cleaned of control characters, cut to length, kept as
plain text, never reaching a search filter; a spreadsheet never runs a name as a formula."""

from __future__ import annotations

import io

import pandas as pd

from pmap_core.tracking import classroom

# Each would be a link, an image, raw HTML or a code span if it reached markdown; a quote and a
# backslash would break a search filter that quoted it naively.
CODE = "`7b` *x* <i>'q\"\\ [l](http://127.0.0.1:9/)"
NAMES = ["**Ada** <b>x</b> ![i](http://127.0.0.1:9/p.png) `c`", "L" * 300, ""]


def test_names_and_codes_are_cleaned_and_cut():
    assert classroom.sanitize_name(" Ada\u202e\u200b\n\x00Lovelace\t ") == "AdaLovelace"
    assert classroom.sanitize_name("L" * 300) == "L" * classroom.NAME_MAX_CHARS
    assert classroom.sanitize_code("c" * 300) == "c" * classroom.CODE_MAX_CHARS
    assert classroom.sanitize_name(NAMES[0]) == NAMES[0][:classroom.NAME_MAX_CHARS].strip()  # markup kept, as text
    assert classroom.class_tags("Ada", "  \n ") == {}
    tags = classroom.class_tags("", CODE)
    assert tags["student"] == "" and tags["class_code"] == classroom.sanitize_code(CODE)
    assert classroom.class_filter(CODE) == f"tags.class_key = '{tags['class_key']}'"
    assert tags["class_key"].isalnum()  # no user text reaches the filter


def test_a_spreadsheet_never_runs_a_name_as_a_formula():
    runs = pd.DataFrame([{column: None for column in classroom.RUN_COLUMNS} | {"student": "=HYPERLINK(1)"}])
    assert pd.read_csv(io.BytesIO(classroom.to_csv(runs)))["student"][0] == "'=HYPERLINK(1)"
