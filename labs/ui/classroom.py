"""A student's display name and class code, asked once and kept in the session; any page that
records runs asks `tags()` for the tags that put them in the class (none without a code)."""

from __future__ import annotations

import streamlit as st

from labs.ui.i18n import texts
from pmap_core.tracking import classroom

T = texts("class_view")  # the form's texts live with the Class page
STUDENT_KEY, CODE_KEY = "classroom.student", "classroom.code"  # session state, shared by every page


def student() -> str:
    return st.session_state.get(STUDENT_KEY, "")


def class_code() -> str:
    return st.session_state.get(CODE_KEY, "")


def tags() -> dict[str, str]:
    """Tags for the session's runs: class code, display name and the code's digest; {} without a code."""
    return classroom.class_tags(student(), class_code())


def identity_form(page: str) -> None:
    """The name and class code inputs, saying that classmates see them. Values are cleaned and cut
    to length before they are kept (a code also folded, and kept only from CODE_MIN_CHARS
    characters); they are only ever shown as plain text."""
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
