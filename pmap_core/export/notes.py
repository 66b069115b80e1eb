"""The texts of an exported notebook, in English and 中文: one markdown cell before each code cell.

A script's code cells begin at its `# %% key` lines (templates/); the notebook puts the text
`<lab>.<key>` (or the shared `<key>`) before the cell, in the page's language, with {placeholders}
filled from the settings the lab ran (`Exported.values`). `<lab>.title` and `<lab>.intro` open it.
The texts are data, in notes.toml (`[key]` with `en = …` and `zh = …`, as the pages' texts in
labs/texts/); terms as in labs/texts/glossary.toml; tests/system/test_export_notebooks.py checks both
languages.
"""

from __future__ import annotations

import pathlib
import tomllib

LANGUAGES = ("en", "zh")

NOTES: dict[str, dict[str, str]] = tomllib.loads(
    pathlib.Path(__file__).with_name("notes.toml").read_text(encoding="utf-8"))
