"""Every text a reader sees, as data: one TOML file per page, `[key]` with `en = …` and `zh = …`.

`common.toml` holds what every page shares (sidebar, errors, buttons); a page's own file holds the rest;
`glossary.toml` lists the lab's terms, one Chinese word per concept, which the tests check every text
against. Worksheets (`worksheets/*.toml`) use the same `{ en = …, zh = … }` pairs.

Why TOML: it is the worksheets' format already, Python reads it without a dependency (`tomllib`), a
key and its two languages sit together, and a reviewer reads a diff of it as text. gettext catalogues
or Fluent would suit a translator's tools, at the cost of a build step and of keeping English and
Chinese apart.

A text that two keys show alike is written once: the other key says `same_as = "key"` (a key of its own
table) or `same_as = "common:key"` (of `common.toml`): a page's "final loss" column and the demo's metric
are one text.

A further language is a folder of files, no code: `<locales>/<code>/language.toml` (`name = "Français"`)
and any of the pages' files, `[key]` with `<code> = …`. `<locales>` is `labs/texts/locales/` or the
folder named by PMAP_LAB_LOCALES. A key that such a locale leaves out is shown in English.
"""

from __future__ import annotations

import os
import pathlib
import tomllib
from functools import cache
from typing import Any

TEXTS_DIR = pathlib.Path(__file__).parent
LOCALES_ENV = "PMAP_LAB_LOCALES"
BASE_LANGUAGES = {"en": "English", "zh": "中文"}  # every text exists in both
FALLBACK = "en"


def _read(path: pathlib.Path) -> dict[str, Any]:
    with path.open("rb") as file:
        return tomllib.load(file)


def locales_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get(LOCALES_ENV) or TEXTS_DIR / "locales")


@cache
def _languages(folder: pathlib.Path) -> dict[str, str]:
    extra = {}
    if folder.is_dir():
        for named in sorted(folder.glob("*/language.toml")):
            code = named.parent.name
            if code not in BASE_LANGUAGES:
                extra[code] = str(_read(named).get("name", code))
    return {**BASE_LANGUAGES, **extra}


def languages() -> dict[str, str]:
    """Language code -> its own name: English and Chinese, then each locale folder's."""
    return _languages(locales_dir())


def pages() -> list[str]:
    """The names of the text tables (`common`, one per page), the glossary left out."""
    return sorted(path.stem for path in TEXTS_DIR.glob("*.toml") if path.stem != "glossary")


ALIAS = "same_as"
COMMON_PREFIX = "common:"


def _resolved(page: str, entries: dict[str, Any]) -> dict[str, Any]:
    """`entries` with each `same_as` entry replaced by the text it names."""
    def target(key: str, name: str) -> dict[str, str]:
        in_common = name.startswith(COMMON_PREFIX)
        found = (raw_entries("common") if in_common else entries).get(name.removeprefix(COMMON_PREFIX))
        if not isinstance(found, dict) or ALIAS in found:
            raise KeyError(f"labs/texts/{page}.toml: {key!r} is the same as {name!r}, which holds no text")
        return found

    return {key: target(key, entry[ALIAS]) if ALIAS in entry else entry for key, entry in entries.items()}


def raw_entries(page: str) -> dict[str, Any]:
    """A table as its file writes it, `same_as` entries unresolved."""
    return _read(TEXTS_DIR / f"{page}.toml")


@cache
def _table(page: str, folder: pathlib.Path) -> dict[str, dict[str, str]]:
    entries = _resolved(page, raw_entries(page))
    for code in _languages(folder):
        overlay = folder / code / f"{page}.toml"
        if code not in BASE_LANGUAGES and overlay.is_file():
            for key, entry in _read(overlay).items():
                if key in entries and isinstance(entry.get(code), str):
                    entries[key] = {**entries[key], code: entry[code]}
    return entries


def table(page: str) -> dict[str, dict[str, str]]:
    """A page's texts: key -> {language code: text}; a further locale's keys where it gives them."""
    return _table(page, locales_dir())


@cache
def glossary() -> tuple[dict[str, Any], ...]:
    """The terms (`glossary.toml`): en, zh, en_pattern, zh_forms, and optionally banned_zh and banned_where."""
    return tuple({key: tuple(value) if isinstance(value, list) else value for key, value in term.items()}
                 for term in _read(TEXTS_DIR / "glossary.toml")["term"])


GLOSSARY = glossary()
