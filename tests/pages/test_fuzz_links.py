"""Every lab opened from a link whose settings are all nonsense (out of range, not a number, markup, very
long): the page shows its defaults, says for each setting that the link's value was ignored and shows
that value, and raises nothing. The store holds
a few runs, so the experiments lab keeps its filters in the link too."""

from __future__ import annotations

import pytest

from labs.registry import LABS
from tests.apptest_support import open_lab

NASTY_LINK_VALUES = ["-999999999999", "1e999", "nan", "<script>alert(1)</script>{name}", "x" * 2000]


# The experiments lab needs runs to show: every test here tracks into a store that has some.
pytestmark = pytest.mark.usefixtures("tracked_runs")


@pytest.mark.parametrize("lab", LABS, ids=[lab.script for lab in LABS])
def test_nonsense_link_opens_the_defaults_with_a_warning(lab):
    default = open_lab(lab.script)
    settings_in_url = {k: v for k, v in default.query_params.items() if k != "lang"}
    if not settings_in_url:
        pytest.skip(f"{lab.script} keeps no settings in its link yet")
    for nasty in NASTY_LINK_VALUES:
        at = open_lab(lab.script, **{name: nasty for name in settings_in_url})
        where = f"{lab.script} with every setting = {nasty[:40]!r}"
        assert not at.exception, f"{where}: {[e.value for e in at.exception]}"
        shown = {k: v for k, v in at.query_params.items() if k != "lang"}
        assert shown == settings_in_url, f"{where}: the link did not fall back to the defaults"
        warnings = [w.value for w in at.warning]
        # Each warning names its setting and shows the link's value (a long one cut short).
        unnamed = [name for name in settings_in_url
                   if not any(f"`{name}`" in text and nasty[:60] in text for text in warnings)]
        assert not unnamed, f"{where}: ignored without a warning that names {unnamed} and shows the value: {warnings}"
