"""A student's display name and class code, asked once and kept in the session; any page that
records runs asks `tags()` for the tags that put them in the class (none without a code), which name
the student's browser too (`browser`): the same for every tab of one browser."""

from __future__ import annotations

import hashlib
import secrets

import streamlit as st

from labs.ui import teacher
from labs.ui.i18n import texts
from pmap_core.tracking import classroom, redact_uri, tracking_uri

T = texts("class_view")  # the form's texts live with the Class page
R = texts("classroom")   # what the form says of recording
STUDENT_KEY, CODE_KEY = "classroom.student", "classroom.code"  # session state, shared by every page
BROWSER_KEY = "classroom.browser"  # session state: this browser's digest
XSRF_COOKIE = "_streamlit_xsrf"  # Streamlit's own cookie, set on the first page load of every browser
NAME_CHECK_TTL_S = 10


def student() -> str:
    return st.session_state.get(STUDENT_KEY, "")


def class_code() -> str:
    return st.session_state.get(CODE_KEY, "")


def xsrf_token(cookie: str) -> bytes | None:
    """The token in Streamlit's XSRF cookie ("2|mask|masked token|time", as Tornado writes it): the same in
    every tab of a browser, though each page load masks it anew; None when the cookie is not of that form."""
    parts = cookie.split("|")
    try:
        if len(parts) == 4 and parts[0] == "2":
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
            return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)) if mask and masked else None
        return bytes.fromhex(cookie) if cookie else None  # version 1: the token itself
    except ValueError:
        return None


def browser() -> str:
    """This browser, as a digest of its XSRF token (the token itself, a secret, is never stored): every tab
    of one browser gives the same. Where there is no such cookie (XSRF protection off, AppTest) each
    session is a browser of its own."""
    if BROWSER_KEY not in st.session_state:
        try:
            token = xsrf_token(st.context.cookies.get(XSRF_COOKIE, ""))
        except Exception:  # noqa: BLE001 - no client context (a test's session): a session of its own
            token = None
        st.session_state[BROWSER_KEY] = (hashlib.sha256(b"pmap-lab browser\0" + token).hexdigest()[:20]
                                         if token else secrets.token_hex(10))
    return st.session_state[BROWSER_KEY]


def tags() -> dict[str, str]:
    """Tags for the session's runs: class code, display name, the code's and name's digests, the
    browser's; {} without a code."""
    found = classroom.class_tags(student(), class_code())
    return {**found, classroom.BROWSER_TAG: browser()} if found else {}


@st.cache_data(ttl=NAME_CHECK_TTL_S, show_spinner=False, max_entries=1024)
def _browsers_at_once(code: str, name: str, uri: str, since_ms: int) -> frozenset[str]:
    return frozenset(classroom.browsers_at_once(code, name, uri, since_ms))


def name_at_once() -> bool:
    """Whether this browser and another recorded under this session's name (or one drawn alike) in its class
    at the same time at one step, since the class was last reset; a student who went on from another
    browser is never told so. A store that cannot be read says no (the Class page still marks it)."""
    if not class_code() or not classroom.student_key(student()):
        return False
    try:
        since = teacher.controls(class_code(), tracking_uri())[0].reset_ms
        return browser() in _browsers_at_once(class_code(), student(), tracking_uri(), since)
    except Exception as error:  # noqa: BLE001 - the check is a courtesy; the record still carries the browser
        st.caption(redact_uri(f"{type(error).__name__}: {error}")[:300])
        return False


def identity_form(page: str) -> None:
    """The name and class code inputs, saying that classmates see them. Values are cleaned and cut
    to length before they are kept (a code also folded, and kept only from CODE_MIN_CHARS
    characters); they are only ever shown as plain text. It says whether the page records for a class,
    and when another browser uses the name at the same time at one step."""
    with st.expander(T("identity.heading"), expanded=not class_code()):
        st.caption(T("identity.shown_to_classmates", name_max=classroom.NAME_MAX_CHARS,
                     code_min=classroom.CODE_MIN_CHARS, code_max=classroom.CODE_MAX_CHARS))
        left, right = st.columns(2)
        name = left.text_input(T("identity.name"), value=student(), max_chars=classroom.NAME_MAX_CHARS,
                               key=f"{page}.student")
        code = right.text_input(T("identity.code"), value=class_code(), max_chars=classroom.CODE_MAX_CHARS,
                                key=f"{page}.class_code")
        st.session_state[STUDENT_KEY] = classroom.sanitize_name(name)
        st.session_state[CODE_KEY] = classroom.usable_code(code) or ""
        if class_code():
            st.caption(T("identity.recording"))
        elif classroom.sanitize_code(code):
            st.caption(T("identity.code_too_short", min=classroom.CODE_MIN_CHARS))
        else:
            st.caption(T("identity.not_recording"))
        if name.strip() and not student():
            st.caption(R("name_blank"))
    if name_at_once():  # outside the folded form: a student must see it
        st.warning(R("name_at_once"), icon="👥")
