"""The transformer's settings and what a page says about its task, for the pages that train it."""

from __future__ import annotations

import dataclasses
import math

import streamlit as st

from labs.ui.i18n import Texts
from labs.ui.links import url_int
from pmap_core.export import cli_command
from pmap_core.train import config as train_config
from pmap_core.train import transformer

DEFAULTS = train_config.TrainConfig()  # the transformer's sizes start where the CLI's do


def transformer_settings(T: Texts, *, blocks: bool = True) -> dict[str, int]:
    """The transformer's sizes in a row of their own, each kept in the link, from TrainConfig's default within
    config's limits: its blocks (`layers`, unless `blocks` is False: the page keeps TrainConfig's), width, heads,
    sequence length and vocabulary. The TrainConfig fields they set, by name."""
    cols = iter(st.columns(5 if blocks else 4))
    sizes = {}
    if blocks:
        with next(cols):
            sizes["layers"] = url_int(T, "layers", DEFAULTS.layers, 2, train_config.MAX_LAYERS, slider=False)
    with next(cols):
        sizes["d_model"] = url_int(T, "d_model", DEFAULTS.d_model, 1, train_config.MAX_D_MODEL, slider=False)
    with next(cols):
        sizes["heads"] = url_int(T, "heads", DEFAULTS.heads, 1, train_config.MAX_HEADS, slider=False)
    with next(cols):
        sizes["seq_len"] = url_int(T, "seq_len", DEFAULTS.seq_len, 1, train_config.MAX_SEQ_LEN, slider=False)
    with next(cols):
        sizes["vocab"] = url_int(T, "vocab", DEFAULTS.vocab, train_config.MIN_VOCAB, train_config.MAX_VOCAB,
                                 slider=False)
    return sizes


def task_caption(T: Texts, vocab: int, learning_rate: float) -> None:
    """What the transformer learns, where its loss starts (ln vocab) and why its default η is what it is."""
    st.caption(T("transformer.task", successors=transformer.SUCCESSORS, vocab=vocab, ln_vocab=math.log(vocab),
                 default=learning_rate))


def command_instead_of_export(T: Texts, config: train_config.TrainConfig) -> None:
    """The script export covers the linear model and the MLP: for the transformer, the command-line run of the
    same settings (`train_command`)."""
    st.caption(T("export.no_transformer"))
    st.code(train_command(config), language="bash")


def train_command(config: train_config.TrainConfig) -> str:
    """The `python -m pmap_core train` line of a transformer run: its settings, its programs' settings away from their
    defaults by their own flags, and a mesh beyond data as --mesh, which sets D and the program."""
    options = {"model": config.model, "devices": config.devices, "impl": config.impl,
               "global-batch": config.global_batch, "learning-rate": config.learning_rate, "steps": config.steps,
               "seed": config.seed, "layers": config.layers, "d-model": config.d_model, "heads": config.heads,
               "seq-len": config.seq_len, "vocab": config.vocab}
    for value in config.settings:  # the nested settings of its programs (train.settings.nested)
        options |= {field.name.replace("_", "-"): getattr(value, field.name) for field in dataclasses.fields(value)
                    if field.metadata["flag"] and getattr(value, field.name) != field.default}
    if len(config.mesh) > 1:  # --mesh data=X,model=Y (or stage, seq, expert, replica) sets D, each axis and the impl
        options = {name: value for name, value in options.items() if name not in ("impl", "devices", "pipeline-stages")}
        options["mesh"] = train_config.mesh_label(config.mesh)
    return cli_command("train", options)
