"""Teacher links: the "Share this lab" panel under every page. (Locking and hiding a setting from a
link happen where every link-backed widget is drawn: `labs.ui.links._url_widget`.)"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode, urlsplit

import streamlit as st

from labs.ui.blocks import folded
from labs.ui.i18n import Texts, language
from labs.ui.links import SHARED_SETTINGS, link_names
from labs.ui.visitor import literal

TICKED = "share.ticked"  # session state: each lock and hide checkbox's last value, kept while the panel is closed


def share_base(browser_url: str | None, base_path: str, url_path: str) -> str:
    """The address of the page `url_path` as visitors reach it: the scheme and host of the address the
    browser shows (`st.context.url`), then the server's `server.baseUrlPath` (a proxy's sub-path such as
    /pmap-lab/), then the page; the home page ends in "/". Without an http(s) address from the browser
    (AppTest has none), the path alone.

    Only the host is taken from the browser's address: Streamlit cuts from it any page name it ends
    with, even inside the sub-path's last word (/jax-demo → /jax-), so the path is made here."""
    parts = urlsplit(browser_url or "")
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
    path = "/".join(part for part in (base_path.strip("/"), url_path.strip("/")) if part)
    return f"{origin}/{path}" + ("/" if path and not url_path.strip("/") else "")


def share_link(base: str, settings: dict[str, str], lang: str, lock: Sequence[str], hide: Sequence[str]) -> str:
    """`base` with the settings, the language and what the link locks and hides, as a query string."""
    query = {**settings, "lang": lang}
    if lock:
        query["lock"] = ",".join(lock)
    if hide:
        query["hide"] = ",".join(hide)
    return f"{base}?{urlencode(query, safe=',')}"


def tick(column, label: str, key: str, linked: bool) -> bool:
    """A lock or hide checkbox of the panel: it starts as the visitor left it when the panel was last open, else as
    the link says."""
    ticked = st.session_state.setdefault(TICKED, {})
    ticked[key] = column.checkbox(label, value=ticked.get(key, linked), key=key)
    return ticked[key]


def share_panel(T: Texts, url_path: str) -> None:
    """Under every page: the link of its current settings, each of which a checkbox locks or hides.
    The link's own `lock` and `hide` stay in the address; names the page has no setting for are
    ignored and said so, as plain text. The panel is drawn only while it is open (`folded`: its three
    widgets per setting were a third of some pages' elements); what was ticked is kept while it is closed."""
    settings: dict[str, str] = st.session_state.get(SHARED_SETTINGS, {})
    locked, hidden = link_names("lock"), link_names("hide")
    for param in ("lock", "hide"):
        if st.query_params.get_all(param):
            st.query_params[param] = ",".join(st.query_params.get_all(param))
    with folded(T("share.title"), f"share.{url_path}") as shown:
        if not shown:
            return
        unknown = sorted((locked | hidden) - set(settings))
        if unknown:
            st.caption(T("share.unknown", names=", ".join(literal(n, 40) for n in unknown[:10])))
        if not settings:
            st.caption(T("share.no_settings"))
        else:
            st.caption(T("share.body"))
        lock, hide = [], []
        for name, value in settings.items():
            name_col, lock_col, hide_col = st.columns([3, 1, 1])
            name_col.text(f"{name} = {value}")
            if tick(lock_col, T("share.lock"), f"share.{url_path}.{name}.lock", name in locked):
                lock.append(name)
            if tick(hide_col, T("share.hide"), f"share.{url_path}.{name}.hide", name in hidden):
                hide.append(name)
        base = share_base(st.context.url, st.get_option("server.baseUrlPath") or "", url_path)
        st.code(share_link(base, settings, language(), lock, hide), language=None,
                wrap_lines=True)
