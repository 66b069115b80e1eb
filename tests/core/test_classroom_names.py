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


def test_line_and_paragraph_separators_are_removed_from_names_and_codes():
    assert classroom.sanitize_name("Ada\u2028Love\u2029lace\u0085") == "AdaLovelace"
    assert classroom.sanitize_code("\u2028class-7\u2029") == classroom.sanitize_code("class-7")


# Values a program may write straight to the store (never through `sanitize`): a spreadsheet that
# trims the blank in front would run each as a formula.
FORMULAS_BEHIND_A_BLANK = [" =1+2", "\u00a0=1+2", "\n=1+2", "\r\n=1+2", "\u2028=1+2", "\u3000@SUM(A1)",
                           "\u200b=1+2", "\t-1+2", "\uff1d1+2", "\uff0bcmd"]


def test_a_spreadsheet_never_runs_a_value_behind_a_blank_as_a_formula():
    columns = ["student", "sheet", "step", "model", "scaling", "impl", "kind", "run_id"]
    runs = pd.DataFrame([{column: None for column in classroom.RUN_COLUMNS}
                         | {column: value for column in columns} for value in FORMULAS_BEHIND_A_BLANK])
    back = pd.read_csv(io.BytesIO(classroom.to_csv(runs)), keep_default_na=False, dtype=str)
    for column in columns:
        assert [value.startswith("'") for value in back[column]] == [True] * len(FORMULAS_BEHIND_A_BLANK), column
        assert [value[1:] for value in back[column]] == FORMULAS_BEHIND_A_BLANK, column  # nothing else changed
    assert classroom.csv_safe("Ada") == "Ada" and classroom.csv_safe(3.0) == 3.0
