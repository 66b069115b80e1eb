"""The teacher key and the class's controls, as every page of a class reads them.

The key is set in the server's environment (`PMAP_LAB_TEACHER_KEY`, TEACHER_KEY_MIN_CHARS characters
or more: the app refuses to start with a shorter one), typed into a form of the Class page (never read
from a link; what is typed is not drawn, not even as one dot per character), stripped of the whitespace a
paste brings, and compared with `hmac.compare_digest`. Wrong keys cost time: after a few, each session
and each client address waits longer before its next try is even compared, and every wrong key is logged
(where it came from, never what was typed). A right key opens the controls for the session; the session
keeps a digest of the key, never the key. The controls themselves live in the tracking store
(`pmap_core.tracking.class_controls`), shared by every app server of the class, and are read through a
cache of a few seconds, so a class of students rerunning its pages reads them a few times a minute, not
on every rerun.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import math
import os

import streamlit as st

from labs.ui.i18n import texts
from pmap_core.tracking import class_controls, redact_uri
from pmap_core.validation import (
    TEACHER_KEY_ENV,
    TEACHER_KEY_MAX_CHARS,
    TEACHER_KEY_MIN_CHARS,
    Backoff,
    LabInputError,
    check_teacher_key,
)

T = texts("class_view")  # the key field's texts live with the Class page
CONTROLS_TTL_S = 3  # how stale a student's view of the controls may be
FOLLOW_EVERY_S = 5  # how often an open student page looks at them without a click
SESSION_FREE_TRIES, CLIENT_FREE_TRIES = 3, 10  # wrong keys before each further one makes the next wait
OPENED = "teacher.opened"  # session state: the digest of the key this session typed right
log = logging.getLogger("pmap_lab")
# Streamlit draws a password field's characters as dots, one per character: the field's text and caret
# are made transparent instead, so a screen seen by the class never shows how long the key is.
HIDE_TYPED = "<style>.st-key-{key} input {{color: transparent; caret-color: transparent;}}</style>"

__all__ = ["TEACHER_KEY_ENV", "configured_key", "controls", "follow", "forget_controls", "key_form",
           "key_matches", "opened", "page_state", "refuse_bad_key", "withheld"]


def configured_key() -> str:
    """The server's teacher key ("" when none is set, or when it is refused as too short or too long)."""
    try:
        return check_teacher_key(os.environ.get(TEACHER_KEY_ENV, ""))
    except LabInputError:
        return ""


def key_matches(typed: str) -> bool:
    """Whether `typed` (surrounding whitespace stripped) is the server's teacher key (never when none is set)."""
    key = configured_key()
    return bool(key) and hmac.compare_digest(typed.strip().encode("utf-8"), key.encode("utf-8"))


@st.cache_resource(show_spinner=False)
def _log_refusal(message: str) -> bool:
    log.error("%s: the app refuses to start until it is changed (docs/DEPLOY.md, Teacher controls)", message)
    return True


def refuse_bad_key() -> None:
    """Every page stops here, with one line in both languages (and once in the server's log), while the
    server's teacher key is shorter than TEACHER_KEY_MIN_CHARS characters: a short key is guessed."""
    try:
        check_teacher_key(os.environ.get(TEACHER_KEY_ENV, ""))
    except LabInputError as error:
        _log_refusal(str(error))
        st.error(T("error.teacher_key_length", env=TEACHER_KEY_ENV, low=TEACHER_KEY_MIN_CHARS,
                        high=TEACHER_KEY_MAX_CHARS), icon="🛑")
        st.code(str(error), language=None, wrap_lines=True)  # a length, never the key
        st.stop()


@st.cache_resource(show_spinner=False)
def _client_tries() -> Backoff:
    """Wrong keys per client address, for every session of this server process."""
    return Backoff(free=CLIENT_FREE_TRIES)


def client_address() -> str:
    """Where a try comes from: the connection's address, or, when that is a proxy on this host (nginx in
    docs/DEPLOY.md), the address the proxy appended last to X-Forwarded-For (one a client cannot forge)."""
    return try_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For"))


def try_address(address: object, forwarded_for: object) -> str:
    """`client_address` from the connection's address (None: this host) and its X-Forwarded-For header."""
    if address is None:
        address, local = "127.0.0.1", True
    elif isinstance(address, str):
        try:
            local = ipaddress.ip_address(address).is_loopback
        except ValueError:
            local = False
    else:
        return "unknown"  # a test harness's session has no connection
    if local:
        forwarded = str(forwarded_for or "").split(",")[-1].strip()
        forwarded = "".join(ch for ch in forwarded if ch.isprintable())[:64]  # it reaches the log
        return forwarded or address
    return address


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def opened() -> bool:
    """Whether this session has typed the server's teacher key (on the Class page)."""
    key = configured_key()
    return bool(key) and hmac.compare_digest(st.session_state.get(OPENED, ""), _digest(key))


def key_form(page: str) -> bool:
    """The teacher key's form; whether this session has typed the right key. Nothing shows where the
    server has no key but one line saying so."""
    key = configured_key()
    if not key:
        st.caption(T("teacher.not_configured", env=TEACHER_KEY_ENV))
        return False
    if opened():
        if st.button(T("teacher.close"), key=f"{page}.teacher_close"):
            del st.session_state[OPENED]
            st.rerun()
        return True
    field = f"{page}.teacher_key"
    st.html(HIDE_TYPED.format(key=field.replace(".", "-")))
    with st.form(f"{page}.teacher_form", clear_on_submit=True, border=False):
        typed = st.text_input(T("teacher.key"), type="password", key=field, help=T("teacher.key_not_drawn"))
        tried = st.form_submit_button(T("teacher.open"), key=f"{page}.teacher_open")
    if not tried or not typed.strip():
        return False
    session = st.session_state.setdefault(f"{page}.teacher_tries", Backoff(free=SESSION_FREE_TRIES))
    client, clients = client_address(), _client_tries()
    wait_s = max(session.wait_s("session"), clients.wait_s(client))
    if wait_s > 0:  # not even compared: a guess in the wait tells nothing
        st.warning(T("teacher.wait", seconds=math.ceil(wait_s)), icon="⏳")
        return False
    if key_matches(typed):
        session.succeeded("session")
        st.session_state[OPENED] = _digest(key)
        st.rerun()  # the form and its field go; the controls show
    failures = session.failed("session"), clients.failed(client)
    log.warning("a wrong teacher key from %s (%d from this session, %d from this address)", client, *failures)
    st.warning(T("teacher.wrong_key"), icon="🔑")
    return False


@st.cache_data(ttl=CONTROLS_TTL_S, show_spinner=False, max_entries=256)
def _cached_controls(code: str, uri: str) -> class_controls.Controls:
    return class_controls.read_controls(code, uri)


def controls(code: str, uri: str) -> tuple[class_controls.Controls, str | None]:
    """The class's controls (at most CONTROLS_TTL_S old), and what went wrong when the store could not
    be read: then none is set, and the student's page works as without a teacher."""
    try:
        return _cached_controls(code, uri), None
    except Exception as error:  # noqa: BLE001 - a store that fails costs the class its controls, not the page
        return class_controls.NO_CONTROLS, redact_uri(f"{type(error).__name__}: {error}")[:300]


@st.cache_data(ttl=CONTROLS_TTL_S, show_spinner=False, max_entries=16)
def _cached_withheld(uri: str) -> frozenset[str]:
    return class_controls.withheld_anywhere(uri)


def withheld(own: class_controls.Controls, uri: str) -> frozenset[str]:
    """The sheets whose answers and right/wrong this session may not see: none once it has typed the teacher
    key; otherwise those its class withholds (`own`) and those any class of the store withholds, whatever
    code is typed or none (read at most CONTROLS_TTL_S old). A store that cannot be read withholds nothing
    more than `own`, as a class whose controls cannot be read has none."""
    if opened():
        return frozenset()
    try:
        return own.withheld | _cached_withheld(uri)
    except Exception:  # noqa: BLE001 - a store that fails costs the class its controls, not the page
        return own.withheld


def page_state(code: str, uri: str) -> tuple[class_controls.Controls, frozenset[str]]:
    """What a student's page is drawn with: its class's controls (none without a code) and `withheld`."""
    own = controls(code, uri)[0] if code else class_controls.NO_CONTROLS
    return own, withheld(own, uri)


@st.fragment(run_every=FOLLOW_EVERY_S)
def follow(code: str, uri: str, seen: tuple[class_controls.Controls, frozenset[str]]) -> None:
    """While a student's page stays open, it looks at the class's controls and the sheets withheld every
    FOLLOW_EVERY_S seconds (through the caches) and reruns as a whole when they differ from `seen`
    (`page_state`), what it was drawn with: a teacher who moves the hold, withholds or releases a sheet or
    resets the class moves every open page, no click needed."""
    if page_state(code, uri) != seen:
        st.rerun(scope="app")


def forget_controls() -> None:
    """After a change here, this server's pages read the controls again at once (others within the TTL)."""
    _cached_controls.clear()
    _cached_withheld.clear()
