"""Streamlit helpers every lab shares: URL-backed widgets, error display,
show-the-code, the runtime sidebar. (The queue for heavy work: `labs.heavy_jobs`.)"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import secrets
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import streamlit as st

from labs.i18n import Texts
from pmap_core import LabInputError, RuntimeInfo, describe_runtime
from pmap_core.tracking import check_tracking_uri, redact_uri, tracking_uri


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

# --- widgets whose value lives in the URL -----------------------------------
#
# A lab's settings are its query parameters, so a link reproduces what a person
# sees. The session-state key carries the page's prefix; the URL uses the plain
# name (…/collectives?op=psum&devices=4). Values in the URL are language-free.


SHARED_SETTINGS = "ui.shared_settings"  # session state: {name: value in the link} drawn in this run
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


def _from_url(T: Texts, name: str, parse: Callable[[str], Any], default: Any) -> Any:
    raw = st.query_params.get(name)
    if raw is None:
        return default
    try:
        return parse(raw)
    except (TypeError, ValueError):
        st.warning(T("url_value_ignored", name=name, value=literal(raw)))
        return default


def link_names(param: str) -> set[str]:
    """The setting names a link's `lock` or `hide` lists (comma-separated, possibly repeated)."""
    return {name.strip() for raw in st.query_params.get_all(param) for name in raw.split(",") if name.strip()}


def _url_widget(T: Texts, name: str, parse: Callable[[str], Any], default: Any,
                draw: Callable[[str, bool], Any], to_url: Callable[[Any], str] = str) -> Any:
    """The setting `name`: drawn with `draw(key, disabled)`, its value kept in the link.

    A teacher's link may lock it (`lock=name`: drawn disabled, the link's value) or hide it
    (`hide=name`: not drawn, the link's value); either way an invalid value becomes the default
    with a warning. Each run records the setting for the share panel (`share_panel`).
    """
    key = f"{T.page}.{name}"
    hidden, locked = name in link_names("hide"), name in link_names("lock")
    if hidden or locked:
        value = _from_url(T, name, parse, default)  # the link decides, whatever this session had
        if locked and not hidden:
            st.session_state[key] = value
            draw(key, True)
    else:
        if key not in st.session_state:
            st.session_state[key] = _from_url(T, name, parse, default)
        value = draw(key, False)
    st.query_params[name] = to_url(value)
    st.session_state.setdefault(SHARED_SETTINGS, {})[name] = to_url(value)
    return value


def _bounded(kind: type, low: Any, high: Any) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        value = kind(raw)
        if not low <= value <= high:
            raise ValueError(raw)
        return value
    return parse


def url_int(T: Texts, name: str, default: int, low: int, high: int, *,
            slider: bool = True, step: int = 1, sidebar: bool = False) -> int:
    """An int setting in [low, high]; a value outside it in the URL is refused with a warning."""
    where = st.sidebar if sidebar else st
    widget = where.slider if slider and low < high else where.number_input  # a slider needs min < max
    return _url_widget(
        T, name, _bounded(int, low, high), min(max(default, low), high),
        lambda key, disabled: widget(T(f"w.{name}"), min_value=low, max_value=high, step=step, key=key,
                                     disabled=disabled,
                                     help=T(f"w.{name}.help") if T.has(f"w.{name}.help") else None),
    )


def url_float(T: Texts, name: str, default: float, low: float, high: float, *,
              step: float | None = None, fmt: str = "%g") -> float:
    """A float setting in [low, high], typed in a number box."""
    return _url_widget(
        T, name, _bounded(float, low, high), default,
        lambda key, disabled: st.number_input(T(f"w.{name}"), min_value=low, max_value=high, step=step,
                                              format=fmt, key=key, disabled=disabled),
    )


def url_choice(T: Texts, name: str, options: Sequence[str], default: str, *,
               radio: bool = False, horizontal: bool = True) -> str:
    """One of `options` (language-free ids); each shows as T("w.<name>.<option>") when defined."""
    options = list(options)

    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError(raw)
        return raw

    def draw(key: str, disabled: bool) -> str:
        # Labels resolved now, in this run's language: a format_func called later (AppTest calls it
        # outside the script) must not fall back to another language.
        labels = {option: T(f"w.{name}.{option}") if T.has(f"w.{name}.{option}") else option for option in options}

        def label(option: str) -> str:
            return labels.get(option, option)  # AppTest may pass a label back: it stays itself

        if radio:
            return st.radio(T(f"w.{name}"), options, format_func=label, key=key, horizontal=horizontal,
                            disabled=disabled)
        return st.selectbox(T(f"w.{name}"), options, format_func=label, key=key, disabled=disabled)

    return _url_widget(T, name, parse, default, draw)


def url_bool(T: Texts, name: str, default: bool) -> bool:
    def parse(raw: str) -> bool:
        if raw not in ("true", "false"):
            raise ValueError(raw)
        return raw == "true"

    return _url_widget(T, name, parse, default,
                       lambda key, disabled: st.toggle(T(f"w.{name}"), key=key, disabled=disabled,
                                                       help=T(f"w.{name}.help") if T.has(f"w.{name}.help") else None),
                       to_url=lambda value: "true" if value else "false")


# --- errors and code ------------------------------------------------------


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
        st.session_state[SHARED_SETTINGS] = {}  # filled by this run's link-backed widgets
        with guard(self.T):
            self.page.run()


def dataframe(T: Texts, frame: Any) -> None:
    """A table whose column headers read in the page's language (texts `col.<column>`)."""
    labels = {column: T(f"col.{column}") for column in frame.columns if T.has(f"col.{column}")}
    st.dataframe(frame, hide_index=True, width="stretch", column_config=labels)


def show_code(T: Texts, *objects: Any) -> None:
    """The `pmap_core` code a lab ran, read from the source itself."""
    with st.expander(T("show_code")):
        for obj in objects:
            st.code(inspect.getsource(obj), language="python")


def export_button(T: Texts, build: Callable[[], str], file_name: str) -> None:
    """The lab with its current settings as a standalone script (only jax and numpy) to download."""
    with guard(T):
        st.download_button(T("export.button"), build(), file_name=file_name, mime="text/x-python",
                           help=T("export.help"), key=f"{T.page}.export", on_click="ignore")


# --- the runtime, shown on every page ----------------------------------------


@st.cache_resource
def runtime_info() -> RuntimeInfo:
    return describe_runtime()


def url_devices(T: Texts, default: int) -> int:
    """The device count D of a lab, kept in the link: 1 to every device this server has."""
    available = runtime_info().device_count
    return url_int(T, "devices", min(default, available), 1, available)


def runtime_sidebar(T: Texts) -> None:
    info = runtime_info()
    with st.sidebar.expander(T("runtime.title"), expanded=False):
        st.markdown(T(
            "runtime.body", jax=info.jax_version, backend=info.backend, kind=info.device_kind,
            devices=info.device_count, cores=info.physical_cores,
            simulated=T("yes") if info.simulated else T("no"),
        ))
        if info.simulated:
            st.caption(T("runtime.simulated_note", cores=info.physical_cores))


def hardware_note(T: Texts) -> None:
    """Beside every scaling figure: what the best possible speedup is on this runtime."""
    info = runtime_info()
    if info.simulated:
        st.info(T("hardware_note.simulated", devices=info.device_count, cores=info.physical_cores), icon="🖥️")
    else:
        st.info(T("hardware_note.real", devices=info.device_count, kind=info.device_kind), icon="🚀")


def usable_tracking_uri(T: Texts) -> str | None:
    """The tracking URI, or None (with the reason shown as plain text, under the page's
    `tracking.refused`) when no run could be stored there."""
    try:
        return check_tracking_uri(tracking_uri())
    except LabInputError as error:
        st.error(T("tracking.refused"), icon="🛑")
        st.code(str(error), language=None, wrap_lines=True)
        return None
