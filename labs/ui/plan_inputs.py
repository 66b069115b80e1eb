"""The Plan page's own model and cluster, typed in as TOML: the schema of `plan --model-file` and `--hardware-file`,
read and checked by the same functions (`planner.files`), starting from a preset's file. The text is bounded for a
shared server; what is wrong with it is one `LabInputError` whose values quoted from the text show as literal text
(`visitor.literal`), never as markup, and a typed name or source shows the same way (`plain`)."""

from __future__ import annotations

import streamlit as st

from labs.ui.i18n import Texts
from labs.ui.visitor import literal
from pmap_core.concepts.planner import files
from pmap_core.concepts.planner.presets import PRESETS, Hardware, ModelShape
from pmap_core.validation import LabInputError

OWN = "own"        # the choice of a model or a cluster typed in, and the key the typed one is given
MAX_CHARS = 4096   # a preset's file is under 1,000 characters
QUOTED = ("key", "value", "outer", "inner", "reason")  # an error's values that come from the text


def text(T: Texts, kind: str, example: str) -> str:
    """The text area of a model (`kind` "model") or a cluster ("hardware"), starting from the preset `example`'s
    file."""
    start = (PRESETS / ("models" if kind == "model" else "hardware") / f"{example}.toml").read_text(encoding="utf-8")
    return st.text_area(T(f"w.own_{kind}"), start, max_chars=MAX_CHARS, height=300, key=f"{T.page}.own_{kind}",
                        help=T(f"w.own_{kind}.help"))


def model(T: Texts, typed: str) -> ModelShape:
    return _read(T, typed, T("own.model"), files.model_from_text)


def hardware(T: Texts, typed: str) -> Hardware:
    return _read(T, typed, T("own.hardware"), files.hardware_from_text)


def plain(thing: ModelShape | Hardware, value: str) -> str:
    """A name or source for markdown: a typed model's or cluster's as literal text, a preset's as it is."""
    return literal(value) if thing.key == OWN else value


def _read(T: Texts, typed: str, where: str, read):
    try:
        if len(typed) > MAX_CHARS:
            raise LabInputError("plan_text_size", "{where} is {chars:,} characters long, over the limit of {limit:,}",
                                where=where, chars=len(typed), limit=MAX_CHARS)
        return read(typed, where, OWN)
    except LabInputError as error:
        raise _shown(T, error) from None


def _shown(T: Texts, error: LabInputError) -> LabInputError:
    """The error with its values from the text as literal text and the schema's English words in the page's
    language (`presets._checked`, `presets.hardware_from`)."""
    words = {"every": T("own.every"), "a whole number": T("own.int"), "a number": T("own.float"),
             "true or false": T("own.bool"), "text": T("own.str"), "a list of [[levels]]": T("own.list")}
    params = {}
    for name, value in error.params.items():
        if name in QUOTED and not isinstance(value, int | float):
            value = literal(value if isinstance(value, str) and name != "value" else repr(value))
        params[name] = words.get(value, value) if isinstance(value, str) else value
    return LabInputError(error.code, str(error).replace("{", "{{").replace("}", "}}"), **params)
