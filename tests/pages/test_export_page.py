"""The collectives page offers its lab as a Python script, labelled in the page's language."""

from __future__ import annotations


def test_collectives_page_offers_its_script_in_the_page_language():
    from tests.apptest_support import open_lab

    at = open_lab("collectives", lang="zh", op="psum", devices=2)
    assert not at.exception
    assert [b.label for b in at.get("download_button")] == ["导出为 Python 脚本"]
