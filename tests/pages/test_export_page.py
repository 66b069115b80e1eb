"""Every exportable lab offers its settings as a Python script and, beside it, as a Jupyter notebook,
labelled in the page's language; settings no script can run offer neither."""

from __future__ import annotations

import pytest

from labs.texts import table as text_table

TEXTS = text_table("common")

LABELS = {lang: [TEXTS["export.button"][lang], TEXTS["export.notebook"][lang]] for lang in ("en", "zh")}


@pytest.mark.parametrize("page, lang, query", [
    ("collectives", "zh", {"op": "psum", "devices": 2}),
    ("training", "en", {"devices": 3}),
    ("migration", "zh", {"devices": 5}),
    ("sharded_dp", "zh", {"strategy": "zero2", "devices": 4, "accum": 2}),
    ("mesh_2d", "en", {"devices": 4}),
    ("multiprocess", "zh", {"processes": 2, "impl": "pmap"}),
])
def test_every_exportable_lab_offers_a_script_and_a_notebook(page, lang, query):
    from tests.apptest_support import assert_clean, open_lab

    at = open_lab(page, lang=lang, **query)
    assert_clean(at)
    assert [b.label for b in at.get("download_button")] == LABELS[lang]


def test_settings_the_lab_refuses_offer_no_export():
    from tests.apptest_support import open_lab

    at = open_lab("sharded_dp", devices=4, accum=4, batch=40)
    assert not at.exception and at.error
    assert not at.get("download_button")
