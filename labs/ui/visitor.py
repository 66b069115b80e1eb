"""What a visitor of a deployment sees: a value from a link, a user or a store only as literal text,
and a lab's failure as a short message with an error id, never a traceback; the operator's log keeps
the traceback, with no tracking URI's credentials."""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
import traceback
from collections.abc import Iterator
from typing import Any

import streamlit as st

from labs.ui.i18n import Texts
from pmap_core import LabInputError
from pmap_core.tracking import redact_uri


class RedactedTracebacks(logging.Filter):
    """A logged traceback may quote a tracking URI with its credentials: the log gets it redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact_uri("".join(traceback.format_exception(*record.exc_info)).rstrip())
        record.msg = redact_uri(record.getMessage())
        record.args = ()
        return True


log = logging.getLogger("pmap_lab")
log.addFilter(RedactedTracebacks())

# Shown of a refused link value: enough to recognise it, not a wall of text.
LITERAL_MAX_CHARS = 120


def literal(value: object, max_chars: int = LITERAL_MAX_CHARS) -> str:
    """`value` as a markdown code span that shows exactly its characters, never markup.

    A value from a link, a user or a store must not become a link, an image or HTML when a
    text template puts it into markdown: backslash escapes are not enough (a URL in escaped
    text is still turned into a link), so the value becomes a code span whose fence is
    longer than any run of backticks in it (CommonMark), with line breaks and other control
    characters shown as escapes; a long value is shortened with an ellipsis. Put the result
    into a template as it is, never inside backticks.
    """
    text = str(value)
    if len(text) > max_chars:
        text = text[:max_chars] + "…"
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    if not text.strip(" "):
        return f"`{text or ' '}`"  # spaces only: shown as they are, never stripped
    fence = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))
    return f"{fence} {text} {fence}"  # one space inside each fence is stripped when shown


def input_error_text(T: Texts, error: LabInputError) -> str:
    key = f"error.{error.code}"
    return T(key, **error.params) if T.has(key) else str(error)


@contextlib.contextmanager
def guard(T: Texts) -> Iterator[None]:
    """Turn what a lab raises into a message on the page, never a traceback.

    A LabInputError is the reader's input: say what is wrong with it. Anything
    else is our fault: log the traceback for the operator under a short error id,
    and tell the reader briefly, with that id (a visitor never sees a traceback).
    With `client.showErrorDetails` set to "full" or "stacktrace" (a developer's
    machine) the traceback is shown below the message as well.
    """
    try:
        yield
    except LabInputError as error:
        st.error(input_error_text(T, error), icon="⚠️")
    except Exception as error:
        error_id = secrets.token_hex(4)
        log.exception("lab %s failed (error id %s)", T.page, error_id)
        st.error(T("error.unexpected", kind=type(error).__name__, error_id=error_id), icon="🛑")
        if str(st.get_option("client.showErrorDetails")).lower() in ("full", "stacktrace", "true"):
            st.exception(error)


class GuardedPage:
    """The page `st.navigation` chose, run inside `guard`: an error the page itself did not
    catch shows the short message with an error id, never Streamlit's traceback."""

    def __init__(self, page: Any, T: Texts):
        self.page, self.T = page, T

    def __getattr__(self, name: str) -> Any:
        return getattr(self.page, name)

    def run(self) -> None:
        with guard(self.T):
            self.page.run()
