"""The JAX and Python running, beside the ones every statement in the lab was verified on.

The pins in requirements.txt say what a deployment installs; this module says what the lab checked its
texts against (the suite ran on it), and tells whether the running JAX is another minor release, where
a page's sentence may no longer hold. Read from the installed packages' metadata: no JAX backend starts.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import platform

VERIFIED_JAX = "0.12.0.1"  # requirements.txt pins the same (a test holds them together)
VERIFIED_PYTHON = "3.12"
MIN_PYTHON = (3, 12)  # JAX 0.11 dropped Python 3.11


def minor(version: str) -> str:
    """'0.12.0.1' → '0.12'."""
    return ".".join(version.split(".")[:2])


@dataclasses.dataclass(frozen=True)
class Versions:
    jax: str
    jaxlib: str
    python: str
    verified_jax: str
    verified_python: str

    @property
    def other_jax_minor(self) -> bool:
        """The running JAX is another minor release than the verified one (a patch release is not)."""
        return minor(self.jax) != minor(self.verified_jax)

    def lines(self) -> list[str]:
        """What `--version` prints and the home page shows: running, then verified."""
        return [f"JAX {self.jax} (jaxlib {self.jaxlib}), Python {self.python}",
                f"verified on JAX {self.verified_jax}, Python {self.verified_python}"]


@functools.cache  # a process's packages do not change under it; each lookup scans the installed distributions
def _installed(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def running() -> Versions:
    return Versions(jax=_installed("jax"), jaxlib=_installed("jaxlib"), python=platform.python_version(),
                    verified_jax=VERIFIED_JAX, verified_python=VERIFIED_PYTHON)
