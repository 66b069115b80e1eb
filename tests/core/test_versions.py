"""The versions the lab shows: the running JAX and Python, beside the ones it was verified on."""

from __future__ import annotations

import contextlib
import io
import platform
import re
import runpy
import sys

import jax
import jaxlib
import pytest

from harness.processes import ROOT
from pmap_core import versions
from pmap_core.export import script_for
from pmap_core.export.templating import cells


def pinned(name: str) -> str:
    text = (ROOT / "requirements.txt").read_text()
    return re.search(rf"^{name}==(\S+)$", text, re.MULTILINE).group(1)


def test_the_running_versions_are_read_from_what_is_installed():
    running = versions.running()
    assert (running.jax, running.jaxlib) == (jax.__version__, jaxlib.__version__)
    assert running.python == platform.python_version()
    assert running.lines()[0] == f"JAX {jax.__version__} (jaxlib {jaxlib.__version__}), Python {running.python}"


def test_the_verified_versions_are_the_pins_and_the_interpreter_is_new_enough():
    assert versions.VERIFIED_JAX == pinned("jax") == pinned("jaxlib")
    assert sys.version_info[:2] >= versions.MIN_PYTHON
    assert ".".join(map(str, versions.MIN_PYTHON)) == versions.VERIFIED_PYTHON
    # The suite runs on what it verifies: a pin moved without the constant fails here.
    assert not versions.running().other_jax_minor


@pytest.mark.parametrize(("running", "other"), [("0.12.0.1", False), ("0.12.3", False), ("0.11.2", True),
                                                 ("0.13.0", True), ("0.10.2", True)])
def test_another_minor_is_told_apart_from_a_patch_release(running, other):
    assert versions.Versions(running, running, "3.12.1", "0.12.0.1", "3.12").other_jax_minor is other


def _jax_reading(folder, release: str):
    """A folder that, first on the path, makes the installed JAX read as `release` (what `pip show` would say)."""
    info = folder / f"jax-{release}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax\nVersion: {release}\n")
    return folder


@pytest.mark.parametrize(("release", "outcome"), [(versions.VERIFIED_JAX, "silent"), ("0.12.7", "silent"),
                                                  ("0.13.0", "note"), ("0.10.2", "stop"), ("0.7.2", "stop")])
def test_an_exported_scripts_first_cell_says_what_to_install_on_another_jax(monkeypatch, tmp_path, release,
                                                                            outcome):
    check = tmp_path / "check.py"  # the script's first cell, run as a file against the JAX the path reads
    check.write_text(dict(cells(script_for("training", {"devices": "2"})))["requirements"])
    monkeypatch.syspath_prepend(str(_jax_reading(tmp_path / "site", release)))
    install = f"pip install 'jax=={versions.VERIFIED_JAX}'"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        if outcome == "stop":
            with pytest.raises(SystemExit) as stopped:
                runpy.run_path(str(check))
            assert str(stopped.value).startswith(f"JAX {release} is older than") and install in str(stopped.value)
        else:
            runpy.run_path(str(check))
    if outcome == "note":
        assert f"running JAX {release}" in printed.getvalue() and install in printed.getvalue()
    else:
        assert printed.getvalue() == ""
