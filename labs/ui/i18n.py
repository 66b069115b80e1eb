"""Every text a reader sees, in English and 中文, kept apart from the code.

Each page has a module `labs/texts/<page>.py` holding `TEXTS = {key: {"en": ..., "zh": ...}}`;
`labs/texts/common.py` holds what every page shares (sidebar, errors, buttons).
A page asks for its texts with `T = texts("basics")` and reads them as `T("title")`.
"""

from __future__ import annotations

import importlib
from functools import cache

import streamlit as st

LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT_LANGUAGE = "en"
LANGUAGE_KEY = "lang"


def language() -> str:
    lang = st.session_state.get(LANGUAGE_KEY, DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


@cache
def _table(page: str) -> dict[str, dict[str, str]]:
    return importlib.import_module(f"labs.texts.{page}").TEXTS


class Texts:
    """Look up a page's texts (then the common ones) in the current language."""

    def __init__(self, page: str):
        self.page = page

    def __call__(self, key: str, **values: object) -> str:
        entry = _table(self.page).get(key) or _table("common").get(key)
        if entry is None:
            raise KeyError(f"no text {key!r} for page {self.page!r}")
        text = entry[language()]
        return text.format(**values) if values else text

    def has(self, key: str) -> bool:
        return key in _table(self.page) or key in _table("common")


def texts(page: str) -> Texts:
    return Texts(page)
