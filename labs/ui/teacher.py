"""The teacher's key and the class's controls, as every page of a class reads them.

The key is set in the server's environment (`PMAP_LAB_TEACHER_KEY`), typed into a password field of
the Class page (never read from a link), and compared with `hmac.compare_digest`. Without it set on
the server, or without the right key typed, no teacher control shows. The controls themselves live in
the tracking store (`pmap_core.tracking.class_controls`), shared by every app server of the class, and
are read through a cache of a few seconds, so a class of students rerunning its pages reads them a few
times a minute, not on every rerun.
"""

from __future__ import annotations

import hmac
import os

import streamlit as st

from labs.ui.i18n import texts
from pmap_core.tracking import class_controls, redact_uri

T = texts("class_view")  # the key field's texts live with the Class page
TEACHER_KEY_ENV = "PMAP_LAB_TEACHER_KEY"
CONTROLS_TTL_S = 3  # how stale a student's view of the controls may be
FOLLOW_EVERY_S = 5  # how often an open student page looks at them without a click


def configured_key() -> str:
    return os.environ.get(TEACHER_KEY_ENV, "").strip()


def key_matches(typed: str) -> bool:
    """Whether `typed` is the server's teacher key (never when none is set)."""
    key = configured_key()
    return bool(key) and hmac.compare_digest(typed.encode("utf-8"), key.encode("utf-8"))


def key_form(page: str) -> bool:
    """The teacher key's password field; whether the right key is typed. Nothing shows where the server
    has no key but one line saying so."""
    if not configured_key():
        st.caption(T("teacher.not_configured", env=TEACHER_KEY_ENV))
        return False
    typed = st.text_input(T("teacher.key"), type="password", key=f"{page}.teacher_key", max_chars=200)
    if typed and not key_matches(typed):
        st.warning(T("teacher.wrong_key"), icon="🔑")
        return False
    return bool(typed)


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


@st.fragment(run_every=FOLLOW_EVERY_S)
def follow(code: str, uri: str, seen: class_controls.Controls) -> None:
    """While a student's page stays open, it looks at the class's controls every FOLLOW_EVERY_S seconds
    (through the cache) and reruns as a whole when they differ from `seen`, what it was drawn with: a
    teacher who moves the hold, releases a sheet or resets the class moves every open page, no click needed."""
    if controls(code, uri)[0] != seen:
        st.rerun(scope="app")


def forget_controls() -> None:
    """After a change here, this server's pages read the controls again at once (others within the TTL)."""
    _cached_controls.clear()
