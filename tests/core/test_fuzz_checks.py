"""The input checks of `pmap_core.validation`, fuzzed with exact properties (hypothesis), and
a text in both languages for every refusal a page can show."""

from __future__ import annotations

import ast
import math
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pmap_core
from labs.texts import pages as text_pages
from labs.texts import table as text_table
from pmap_core import validation
from pmap_core.validation import LabInputError

# Their refusals are printed in English by the command line, never shown on a page.
CLI_ONLY_MODULES = {"cli", "cli_training", "cli_bench", "distributed", "__main__"}
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

anything = st.one_of(
    st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=20), st.decimals(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=3),
)


def accepted(check, refusals: tuple[str, ...], name: str, *args):
    """What `check(name, *args)` returns, or None when it refuses: then with one of `refusals`
    and a message that names the input."""
    try:
        return check(name, *args)
    except LabInputError as error:
        assert error.code in refusals
        assert name in str(error)
        return None


@FUZZ
@given(value=anything, low=st.integers(-100, 100), span=st.integers(0, 1000))
def test_check_int_returns_the_value_in_range_or_refuses(value, low, span):
    result = accepted(validation.check_int, ("not_whole_number", "out_of_range"), "n", value, low, low + span)
    if result is not None:
        assert type(result) is int and low <= result <= low + span and result == value


@FUZZ
@given(value=anything, low=st.floats(-1e6, 1e6), span=st.floats(0, 1e6))
def test_check_float_returns_a_finite_value_in_range_or_refuses(value, low, span):
    result = accepted(validation.check_float, ("not_a_number", "out_of_range"), "x", value, low, low + span)
    if result is not None:
        assert type(result) is float and math.isfinite(result) and low <= result <= low + span


@FUZZ
@given(devices=anything, available=st.integers(1, 64))
def test_check_devices_never_promises_more_than_exist(devices, available):
    try:
        result = validation.check_devices(devices, available)
    except LabInputError as error:
        assert error.code in ("not_whole_number", "out_of_range", "too_many_devices")
        return
    assert 1 <= result <= available


@FUZZ
@given(count=st.integers(-10, 2**70), limit=st.integers(0, 2**40))
def test_check_elements_refuses_exactly_above_the_limit(count, limit):
    if count > limit:
        with pytest.raises(LabInputError) as refused:
            validation.check_elements("array", count, limit)
        assert refused.value.code == "too_large"
    else:
        assert validation.check_elements("array", count, limit) == count


def test_every_refusal_has_a_text_in_both_languages():
    """Each error code raised anywhere in pmap_core has an `error.<code>` text a page can show."""
    codes = set()
    for path in pathlib.Path(pmap_core.__file__).parent.rglob("*.py"):
        if path.stem in CLI_ONLY_MODULES or path.parent.name == "cli":  # a command line, not a page, says these
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LabInputError"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                codes.add(node.args[0].value)
    defined = set()
    for page in text_pages():
        defined |= {k[len("error."):] for k in text_table(page) if k.startswith("error.")}
    assert codes, "found no LabInputError in pmap_core"
    assert not codes - defined, f"error codes without an error.<code> text: {sorted(codes - defined)}"
