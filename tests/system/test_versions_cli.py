"""`python -m pmap_core --version`, and the interpreter scripts/setup.sh picks for JAX 0.12 (Python ≥ 3.12)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

import jax
import jaxlib
import pytest

from harness.processes import ROOT, run_python
from pmap_core import versions

SETUP = ROOT / "scripts" / "setup.sh"


def test_version_prints_the_running_jax_and_python_beside_the_verified_ones():
    done = run_python(["-m", "pmap_core", "--version"], devices=1, check=True)
    assert done.stdout.splitlines() == [
        f"JAX {jax.__version__} (jaxlib {jaxlib.__version__}), Python {platform.python_version()}",
        f"verified on JAX {versions.VERIFIED_JAX}, Python {versions.VERIFIED_PYTHON}",
    ]


def which_python(tmp_path, versions_present: dict[str, str]) -> subprocess.CompletedProcess:
    """setup.sh --which-python with no Python at all on PATH (only the tools the script uses) and a pyenv
    root holding `versions_present` (name → the interpreter its bin/python3 links to)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("bash", "dirname", "ls", "sort", "cat"):
        (tools / tool).symlink_to(shutil.which(tool))
    root = tmp_path / "pyenv"
    for name, target in versions_present.items():
        (root / "versions" / name / "bin").mkdir(parents=True)
        (root / "versions" / name / "bin" / "python3").symlink_to(target)
    env = {"PATH": str(tools), "PYENV_ROOT": str(root), "HOME": str(tmp_path)}
    return subprocess.run(["bash", str(SETUP), "--which-python"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs an interpreter of 3.12 or newer to offer")
def test_setup_finds_a_new_enough_python_among_pyenvs_versions(tmp_path):
    old = "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else "/bin/false"
    done = which_python(tmp_path, {"3.11.7": old, "3.12.9": sys.executable})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "pyenv" / "versions" / "3.12.9" / "bin" / "python3")


def test_setup_says_in_one_line_what_to_install_when_no_python_is_new_enough(tmp_path):
    old = "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else "/bin/false"
    done = which_python(tmp_path, {"3.11.7": old})
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Python 3.12 or newer" in done.stderr and "install python3.12" in done.stderr
