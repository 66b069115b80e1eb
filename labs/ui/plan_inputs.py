"""The Plan page's own model and cluster, typed in as TOML: the schema of `plan --model-file` and `--hardware-file`,
read and checked by the same functions (`planner.files`), starting from a preset's file. The text is bounded for a
shared server; what is wrong with it is one `LabInputError` whose values quoted from the text show as literal text
(`visitor.literal`), never as markup, and a typed name or source shows the same way (`plain`). Then what the page
shows of the model and the cluster chosen, and the settings that start again when the model or the layout changes
(`forget_when_changed`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from labs.ui.blocks import dataframe, folded
from labs.ui.i18n import Texts
from labs.ui.links import link_names
from labs.ui.visitor import literal
from pmap_core.concepts.planner import HARDWARE, files
from pmap_core.concepts.planner import view as pv
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


def forget_when_changed(T: Texts, memo: str, value: object, names: tuple[str, ...]) -> None:
    """A setting others start from has changed since the last run: those others start again from their defaults
    (a link's lock or hide still decides the ones it names)."""
    before = st.session_state.get(memo)
    st.session_state[memo] = value
    if before is None or before == value:
        return
    kept = link_names("lock") | link_names("hide")
    for name in names:
        if name not in kept:
            st.session_state.pop(f"{T.page}.{name}", None)
            st.query_params.pop(name, None)


def show_model(T: Texts, model, lab: bool) -> None:
    if lab:
        st.caption(T("model.lab", params=model.params, layers=model.layers, d_model=model.d_model,
                     heads=model.heads, vocab=model.vocab, positions=model.positions))
        return
    if model.key == OWN:
        st.caption(T("own.name", name=plain(model, model.name)))
    st.caption(T("model.preset", layers=model.layers, d_model=model.d_model, d_ff=model.d_ff, heads=model.heads,
                 kv_heads=model.kv_heads, vocab=model.vocab, params=model.params / 1e9,
                 active=model.active_params / 1e9, source=plain(model, model.source)))
    if model.experts:
        st.caption(T("model.experts", experts=model.experts, top_k=model.top_k, active=model.active_params / 1e9))


def show_hardware(T: Texts, hardware) -> None:
    if hardware.key == OWN:
        st.caption(T("own.name", name=plain(hardware, hardware.name)))
    st.caption(T("hardware.figures", peak=hardware.peak_flops / 1e12, memory=hardware.memory_bytes / pv.GB,
                 hbm=hardware.hbm_bytes_s / 1e12, node=hardware.node, intra_name=plain(hardware, hardware.intra_name),
                 intra=hardware.intra_bytes_s / pv.GB, inter_name=plain(hardware, hardware.inter_name),
                 inter=hardware.inter_bytes_s / pv.GB, source=plain(hardware, hardware.source)))
    with folded(T("hardware.all"), "plan.hardware_all") as shown:
        if shown:
            dataframe(T, pd.DataFrame([{
                "hardware": h.name, "peak_tflops": h.peak_flops / 1e12, "memory_gb": h.memory_bytes / pv.GB,
                "hbm_tbs": h.hbm_bytes_s / 1e12, "node": h.node, "intra_link": h.intra_name,
                "intra_gbs": h.intra_bytes_s / pv.GB, "inter_link": h.inter_name, "inter_gbs": h.inter_bytes_s / pv.GB,
                "datasheet": h.source} for h in HARDWARE.values()]))
