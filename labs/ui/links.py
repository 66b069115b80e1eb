"""Widgets whose value lives in the link.

A lab's settings are its query parameters, so a link reproduces what a person sees. The
session-state key carries the page's prefix; the URL uses the plain name
(…/collectives?op=psum&devices=4). Values in the URL are language-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

from labs.ui.hardware import runtime_info
from labs.ui.i18n import Texts
from labs.ui.visitor import literal

SHARED_SETTINGS = "ui.shared_settings"  # session state: {name: value in the link} drawn in this run
# Session state: {widget key: (the link's refused value, the default in its place)}, while the visitor keeps that
# default: a page that runs again by itself (its background work done) says again what it did with the link.
REFUSED = "ui.refused_link_values"


def start_recording() -> None:
    """Before a page runs: its link-backed widgets record this run's settings for the share panel."""
    st.session_state[SHARED_SETTINGS] = {}


def _from_url(T: Texts, name: str, parse: Callable[[str], Any], default: Any, key: str | None = None) -> Any:
    """The link's value of `name`, or `default` with a warning where the link's cannot be used (remembered for
    the widget `key`, `_still_refused`)."""
    raw = st.query_params.get(name)
    try:
        value = default if raw is None else parse(raw)
    except (TypeError, ValueError):
        st.warning(T("url_value_ignored", name=name, value=literal(raw)))
        if key is not None:
            st.session_state.setdefault(REFUSED, {})[key] = (raw, default)
        return default
    if key is not None:  # a run cut short may have put the default in the link, not yet in the widget
        _still_refused(T, name, key, value)
    return value


def _still_refused(T: Texts, name: str, key: str, value: Any) -> None:
    """The warning of a link value refused in an earlier run of this session, while the widget keeps the default
    put in its place (`value`); once the visitor chooses another value it is forgotten."""
    refused = st.session_state.get(REFUSED, {})
    if key not in refused:
        return
    raw, default = refused[key]
    if value == default:
        st.warning(T("url_value_ignored", name=name, value=literal(raw)))
    else:
        del refused[key]


def link_names(param: str) -> set[str]:
    """The setting names a link's `lock` or `hide` lists (comma-separated, possibly repeated)."""
    return {name.strip() for raw in st.query_params.get_all(param) for name in raw.split(",") if name.strip()}


Draw = Callable[[str, bool, dict[str, Any]], Any]  # (key, disabled, the widget's starting value as keywords)


def _url_widget(T: Texts, name: str, parse: Callable[[str], Any], default: Any, draw: Draw,
                start: Callable[[Any], dict[str, Any]], to_url: Callable[[Any], str] = str,
                held: Any = None) -> Any:
    """The setting `name`: drawn with `draw(key, disabled, start(value))`, its value kept in the link.

    A teacher's link may lock it (`lock=name`: drawn disabled, the link's value) or hide it
    (`hide=name`: not drawn, the link's value); either way an invalid value becomes the default
    with a warning. Each run records the setting for the share panel (`share_panel`).

    A session's first run gives the link's value as the widget's starting value, never through
    session state: a page that reconnects to another server process (a restart, a failover behind
    nginx) sends its widgets' values with its first rerun, and a value written to session state
    would replace the one the visitor just chose. Every later run gives the widget's own value as its
    starting value (`_start_again`): a starting value that changed between runs (the link's, then the
    slider's minimum) was taken back by the browser, which then sent it as the visitor's choice (a page
    on D = 8 turning to D = 1 once its background work ran it again).
    """
    key = f"{T.page}.{name}"
    hidden, locked = name in link_names("hide"), name in link_names("lock")
    if held is not None:  # the teacher's hold comes before the link's lock and hide
        value = draw(key, True, {})
    elif hidden or locked:
        value = _from_url(T, name, parse, default)  # the link decides, whatever this session had
        if locked and not hidden:
            st.session_state[key] = value
            draw(key, True, {})
    elif key in st.session_state:
        _still_refused(T, name, key, st.session_state[key])
        value = draw(key, False, _start_again(key, parse, start, to_url))
    else:
        value = draw(key, False, start(_from_url(T, name, parse, default, key)))
    st.query_params[name] = to_url(value)
    st.session_state.setdefault(SHARED_SETTINGS, {})[name] = to_url(value)
    return value


def _start_again(key: str, parse: Callable[[str], Any], start: Callable[[Any], dict[str, Any]],
                 to_url: Callable[[Any], str]) -> dict[str, Any]:
    """The starting value of the widget `key` in a run after the session's first: the value it holds; none
    where the page's code (or a callback) set that value through session state in this run (Streamlit takes it,
    and warns in the server's log when a starting value is given as well), or where the widget would refuse it
    (a range that moved with another setting)."""
    from streamlit.runtime.state import get_session_state

    if get_session_state().is_new_state_value(key):
        return {}
    value = st.session_state[key]
    try:
        parse(to_url(value))
    except (TypeError, ValueError):
        return {}
    return start(value)


def _start_value(value: Any) -> dict[str, Any]:
    return {"value": value}


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
        lambda key, disabled, start: widget(T(f"w.{name}"), min_value=low, max_value=high, step=step, key=key,
                                            disabled=disabled, **start,
                                            help=T(f"w.{name}.help") if T.has(f"w.{name}.help") else None),
        _start_value,
    )


def url_float(T: Texts, name: str, default: float, low: float, high: float, *,
              step: float | None = None, fmt: str = "%g") -> float:
    """A float setting in [low, high], typed in a number box."""
    return _url_widget(
        T, name, _bounded(float, low, high), default,
        lambda key, disabled, start: st.number_input(T(f"w.{name}"), min_value=low, max_value=high, step=step,
                                                     format=fmt, key=key, disabled=disabled, **start),
        _start_value,
    )


def url_choice(T: Texts, name: str, options: Sequence[str], default: str, *,
               radio: bool = False, horizontal: bool = True, labels: Mapping[str, str] | None = None,
               held: str | None = None) -> str:
    """One of `options` (language-free ids); each shows as T("w.<name>.<option>") when defined, or as
    `labels` gives it (labels that come from elsewhere: a worksheet's titles). `held`: the option a
    teacher holds the class at, which the choice is fixed to, drawn disabled, whatever the link says.
    A value kept from options shown before (another sheet's step) becomes the default."""
    options = list(options)
    key = f"{T.page}.{name}"
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = default

    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError(raw)
        return raw

    def draw(key: str, disabled: bool, start: dict[str, Any]) -> str:
        # Labels resolved now, in this run's language: a format_func called later (AppTest calls it
        # outside the script) must not fall back to another language.
        shown = dict(labels) if labels is not None else {
            option: T(f"w.{name}.{option}") if T.has(f"w.{name}.{option}") else option for option in options}

        def label(option: str) -> str:
            return shown.get(option, option)  # AppTest may pass a label back: it stays itself

        if radio:
            return st.radio(T(f"w.{name}"), options, format_func=label, key=key, horizontal=horizontal,
                            disabled=disabled, **start)
        return st.selectbox(T(f"w.{name}"), options, format_func=label, key=key, disabled=disabled, **start)

    def start(value: str) -> dict[str, Any]:
        return {"index": options.index(value)}

    if held in options:
        st.session_state[key] = held
        return _url_widget(T, name, parse, default, lambda key, *_: draw(key, True, {}), start, held=held)
    return _url_widget(T, name, parse, default, draw, start)


def url_bool(T: Texts, name: str, default: bool) -> bool:
    def parse(raw: str) -> bool:
        if raw not in ("true", "false"):
            raise ValueError(raw)
        return raw == "true"

    return _url_widget(T, name, parse, default,
                       lambda key, disabled, start: st.toggle(
                           T(f"w.{name}"), key=key, disabled=disabled, **start,
                           help=T(f"w.{name}.help") if T.has(f"w.{name}.help") else None),
                       _start_value, to_url=lambda value: "true" if value else "false")


def url_devices(T: Texts, default: int) -> int:
    """The device count D of a lab, kept in the link: 1 to every device this server has."""
    available = runtime_info().device_count
    return url_int(T, "devices", min(default, available), 1, available)
