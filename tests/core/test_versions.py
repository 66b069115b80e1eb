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


def _setup_check(script: str) -> str:
    """The lines of an exported script's first cell between `import jax` and the device count."""
    setup = dict(cells(script))["setup"]
    return setup.split("import jax\n", 1)[1].split("DEVICES =", 1)[0]


@pytest.mark.parametrize(("version", "told"), [(versions.VERIFIED_JAX, False), ("0.10.2", True), ("0.7.2", True)])
def test_an_exported_script_says_what_to_install_on_another_jax(monkeypatch, tmp_path, version, told):
    check = tmp_path / "check.py"  # the script's own lines, run as a file with this process's jax
    check.write_text(_setup_check(script_for("training", {"devices": "2"})))
    monkeypatch.setattr(jax, "__version__", version)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runpy.run_path(str(check), init_globals={"jax": jax})
    if told:
        assert f"running JAX {version}" in printed.getvalue()
        assert f"pip install 'jax=={versions.VERIFIED_JAX}'" in printed.getvalue()
    else:
        assert printed.getvalue() == ""
