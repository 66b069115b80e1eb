"""The share panel's link under a sub-path: a server behind a proxy at /pmap-lab/ (Streamlit's
`server.baseUrlPath`) hands out links that carry it, whatever the browser told the server."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from streamlit import config

from labs.ui.share import share_base
from tests.apptest_support import assert_clean, open_lab, share_link


@pytest.fixture
def base_url_path():
    """server.baseUrlPath set to pmap-lab for the test, back to what it was afterwards."""
    before = config.get_option("server.baseUrlPath")
    config.set_option("server.baseUrlPath", "pmap-lab")
    try:
        yield "pmap-lab"
    finally:
        config.set_option("server.baseUrlPath", before)


def test_the_link_carries_the_sub_path_without_the_browsers_address(base_url_path):
    at = open_lab("collectives", op="psum", devices=2)
    assert_clean(at)
    link = share_link(at, "collectives")
    assert urlsplit(link).path == "/pmap-lab/collectives", link


@pytest.mark.parametrize(("browser_url", "base_path", "url_path", "expected"), [
    # Streamlit's st.context.url cuts any page name the address ends with, even inside the sub-path's
    # last word ("/jax-demo" → "/jax-"): the link is made of the server's own base path instead.
    ("https://lab.example.edu/jax-demo", "jax-demo", "", "https://lab.example.edu/jax-demo/"),
    ("https://lab.example.edu/jax-", "jax-demo", "", "https://lab.example.edu/jax-demo/"),
    ("https://lab.example.edu/pmap-lab/training", "/pmap-lab/", "training", "https://lab.example.edu/pmap-lab/training"),
    ("http://127.0.0.1:8501/collectives", "", "collectives", "http://127.0.0.1:8501/collectives"),
    ("http://127.0.0.1:8501", "", "", "http://127.0.0.1:8501/"),
    (None, "pmap-lab", "training", "/pmap-lab/training"),
    (None, "", "", "/"),
    ("javascript:alert(1)//x", "", "training", "/training"),  # only an http(s) address lends its host
])
def test_share_base(browser_url, base_path, url_path, expected):
    assert share_base(browser_url, base_path, url_path) == expected
