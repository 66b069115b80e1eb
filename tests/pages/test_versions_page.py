"""The running JAX and Python on the home page, and the one warning a page gives on another JAX minor."""

from __future__ import annotations

import platform

import jax
import pytest

from pmap_core import versions
from tests.apptest_support import assert_clean, open_lab


@pytest.mark.parametrize(("lang", "verified"), [("en", "verified on"), ("zh", "验证过")])
def test_home_shows_the_running_jax_and_python_beside_the_verified_ones(lang, verified):
    at = open_lab(lang=lang)
    assert_clean(at)
    shown = [c.value for c in at.caption if jax.__version__ in c.value]
    assert len(shown) == 1, [c.value for c in at.caption]
    assert platform.python_version() in shown[0] and verified in shown[0]
    assert versions.VERIFIED_JAX in shown[0] and versions.VERIFIED_PYTHON in shown[0]
    assert not at.warning  # the verified minor runs: nothing to warn of


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("script", [None, "collectives"])
def test_a_page_on_another_jax_minor_says_so_once(monkeypatch, lang, script):
    monkeypatch.setattr(versions, "VERIFIED_JAX", "0.11.2")  # as if the lab had been verified on 0.11
    at = open_lab(script, lang=lang)
    assert not at.exception
    told = [w.value for w in at.warning if "0.11" in w.value and jax.__version__ in w.value]
    assert len(told) == 1, [w.value for w in at.warning]
