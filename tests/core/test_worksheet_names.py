"""The functions a worksheet may name (`worksheets.ALLOWED`), and the names that moved (`worksheets.MOVED`)."""

import importlib

import pytest

from pmap_core.practice import worksheets

STEP = """
[[steps]]
id = "s1"
lab = "basics"
settings = {{}}
question = {{ en = "q", zh = "问" }}
explain = {{ en = "e", zh = "释" }}
hints = [{{ en = "h", zh = "提" }}]
kind = "number"
function = "{function}"
args = {{}}
result = []
"""
HEAD = 'title = { en = "t", zh = "题" }\nintro = { en = "i", zh = "介" }\n'


def test_every_allowed_name_is_the_dotted_path_of_a_function():
    for name, (module, attribute) in worksheets.ALLOWED.items():
        assert name == f"{module}.{attribute}"
        assert callable(getattr(importlib.import_module(module), attribute)), name


def test_every_moved_name_points_to_an_allowed_one_and_is_not_allowed_itself():
    assert set(worksheets.MOVED.values()) <= set(worksheets.ALLOWED)
    assert not set(worksheets.MOVED) & set(worksheets.ALLOWED)


@pytest.mark.parametrize("old", sorted(worksheets.MOVED))
def test_a_sheet_naming_a_moved_function_is_refused_with_its_new_name(old):
    with pytest.raises(worksheets.WorksheetError) as refused:
        worksheets.parse_sheet("old", HEAD + STEP.format(function=old))
    message = str(refused.value)
    assert f"'{old}' has moved" in message and f"'{worksheets.MOVED[old]}'" in message


def test_the_sheets_in_the_repository_name_no_moved_function():
    named = {step.function for sheet in worksheets.load_sheets().sheets for step in sheet.steps}
    assert named <= set(worksheets.ALLOWED)
