"""Parts many labs draw the same way: a table with translated headers, the code a lab ran, the
lab as a script and as a notebook to download."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st

from labs.ui.i18n import Texts, language
from labs.ui.visitor import guard
from pmap_core import export


def dataframe(T: Texts, frame: Any) -> None:
    """A table whose column headers read in the page's language (texts `col.<column>`)."""
    labels = {column: T(f"col.{column}") for column in frame.columns if T.has(f"col.{column}")}
    st.dataframe(frame, hide_index=True, width="stretch", column_config=labels)


@contextlib.contextmanager
def folded(label: str, key: str) -> Iterator[bool]:
    """An expander whose content the page draws only while the reader has it open (whether it is, yielded):
    the browser draws, and highlights, every element it is sent, folded or not (a page's code blocks took it
    seconds). Opening or closing it runs the page again, from its caches."""
    with st.expander(label, key=key, on_change="rerun") as box:
        yield bool(box.open)


def verbatim(text: str) -> None:
    """Words a program wrote (JAX's message, what `print` wrote) exactly as written, never as markdown. Plain text,
    not a code block: the first code block on a page loads the code component's scripts, the costliest thing a
    page's opening draws."""
    st.text(text)


def show_code(T: Texts, *objects: Any) -> None:
    """The `pmap_core` code a lab ran, read from the source itself."""
    names = "-".join(getattr(obj, "__name__", type(obj).__name__) for obj in objects)
    with folded(T("show_code"), f"{T.page}.code.{names}") as shown:
        for obj in objects if shown else ():
            st.code(inspect.getsource(obj), language="python")


def export_button(T: Texts, build: Callable[[], export.Exported]) -> None:
    """The lab with its current settings as a standalone script (only jax and numpy) and, beside it, the
    same code as a Jupyter notebook whose explanations read in the page's language."""
    with guard(T):
        exported = build()
        notebook = export.notebook_json(exported, language())
        left, right = st.columns(2)
        left.download_button(T("export.button"), exported.script, file_name=f"{exported.lab}.py",
                             mime="text/x-python", help=T("export.help"), key=f"{T.page}.export", on_click="ignore")
        right.download_button(T("export.notebook"), notebook, file_name=f"{exported.lab}.ipynb",
                              mime="application/x-ipynb+json", help=T("export.notebook.help"),
                              key=f"{T.page}.export_notebook", on_click="ignore")
