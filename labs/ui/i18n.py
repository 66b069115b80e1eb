"""Every text a reader sees, in English and 中文 (and any further locale), kept apart from the code.

Each page has a table `labs/texts/<page>.toml` (`[key]` with `en = …` and `zh = …`, read by `labs.texts`);
`labs/texts/common.toml` holds what every page shares (sidebar, errors, buttons).
A page asks for its texts with `T = texts("basics")` and reads them as `T("title")`.
"""

from __future__ import annotations

import streamlit as st

from labs.texts import FALLBACK, languages, table

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGE_KEY", "Texts", "language", "languages", "texts"]

DEFAULT_LANGUAGE = FALLBACK
LANGUAGE_KEY = "lang"


def language() -> str:
    lang = st.session_state.get(LANGUAGE_KEY, DEFAULT_LANGUAGE)
    return lang if lang in languages() else DEFAULT_LANGUAGE


class Texts:
    """Look up a page's texts (then the common ones) in the current language."""

    def __init__(self, page: str):
        self.page = page

    def __call__(self, key: str, /, **values: object) -> str:
        entry = table(self.page).get(key) or table("common").get(key)
        if entry is None:
            raise KeyError(f"no text {key!r} for page {self.page!r}")
        text = entry.get(language()) or entry[DEFAULT_LANGUAGE]  # a further locale may leave a key out
        return text.format(**values) if values else text

    def has(self, key: str) -> bool:
        return key in table(self.page) or key in table("common")


def texts(page: str) -> Texts:
    return Texts(page)
