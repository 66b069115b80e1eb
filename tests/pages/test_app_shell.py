"""The router, the home page and the text tables."""


import labs.texts
from labs.registry import LABS
from labs.texts import table as text_table
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
    for page in labs.texts.pages():
        for key, entry in labs.texts.table(page).items():
            for lang in labs.texts.BASE_LANGUAGES:
                if not isinstance(entry.get(lang), str) or not entry[lang].strip():
                    missing.append(f"{page}:{key}:{lang}")
            if set(entry) - set(labs.texts.BASE_LANGUAGES):
                missing.append(f"{page}:{key}: unknown language {set(entry) - set(labs.texts.BASE_LANGUAGES)}")
    assert not missing, missing


def test_every_lab_has_a_text_table_with_title_and_summary():
    for lab in LABS:
        table = text_table(lab.script)
        assert {"title", "summary"} <= set(table), lab.script


def test_a_partial_third_locale_is_a_folder_and_falls_back_to_english_key_by_key(tmp_path, monkeypatch):
    """A locale folder (no code) adds a language to the sidebar; the keys it gives show in it, every other
    key in English."""
    folder = tmp_path / "fr"
    folder.mkdir()
    (folder / "language.toml").write_text('name = "Français"\n', encoding="utf-8")
    (folder / "home.toml").write_text('[heading]\nfr = "pmap-lab : un programme, plusieurs appareils"\n',
                                      encoding="utf-8")
    monkeypatch.setenv(labs.texts.LOCALES_ENV, str(tmp_path))
    assert labs.texts.languages() == {"en": "English", "zh": "中文", "fr": "Français"}
    at = open_lab(lang="fr")
    assert_clean(at)
    assert at.title[0].value == "pmap-lab : un programme, plusieurs appareils"  # given by the locale
    home = text_table("home")
    assert at.markdown[0].value == home["intro"]["en"]  # left out: English
    chooser = at.sidebar.radio(key="lang")
    assert chooser.options == ["English", "中文", "Français"] and chooser.index == 2
    monkeypatch.delenv(labs.texts.LOCALES_ENV)
    assert "fr" not in labs.texts.languages() and "fr" not in labs.texts.table("home")["heading"]
