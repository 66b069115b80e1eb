"""The router, the home page and the text tables."""

import importlib
import pkgutil

import labs.texts
from labs.registry import LABS
from labs.ui.i18n import LANGUAGES
from tests.apptest_support import assert_clean, open_lab


def test_home_renders_and_links_every_lab():
    at = open_lab()
    assert_clean(at)
    assert at.title[0].value.startswith("pmap-lab")
    sidebar_text = " ".join(m.value for m in at.sidebar.markdown)
    assert "JAX" in sidebar_text and "8" in sidebar_text


def test_home_in_chinese():
    at = open_lab(lang="zh")
    assert_clean(at)
    assert "实验室" in at.title[0].value


def test_every_text_exists_in_both_languages():
    missing = []
    for module in pkgutil.iter_modules(labs.texts.__path__):
        table = getattr(importlib.import_module(f"labs.texts.{module.name}"), "TEXTS", {})  # the glossary: none
        for key, entry in table.items():
            for lang in LANGUAGES:
                if not isinstance(entry.get(lang), str) or not entry[lang].strip():
                    missing.append(f"{module.name}:{key}:{lang}")
            if set(entry) - set(LANGUAGES):
                missing.append(f"{module.name}:{key}: unknown language {set(entry) - set(LANGUAGES)}")
    assert not missing, missing


def test_every_lab_has_a_text_table_with_title_and_summary():
    for lab in LABS:
        table = importlib.import_module(f"labs.texts.{lab.script}").TEXTS
        assert {"title", "summary"} <= set(table), lab.script
