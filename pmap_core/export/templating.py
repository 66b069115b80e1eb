"""What every exported lab shares: its templates, its header, its device count, and `Exported`, the
script with the values its notebook's texts name. Imports nothing else of `pmap_core.export`."""

from __future__ import annotations

import dataclasses
import pathlib
import string
from collections.abc import Mapping

from pmap_core.runtime import MAX_CPU_DEVICES, MIN_WORKER_THREADS
from pmap_core.validation import check_int
from pmap_core.versions import MIN_PYTHON, VERIFIED_JAX, minor

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"
SCRIPT_MAX_DEVICES = MAX_CPU_DEVICES  # the most CPU devices a script may simulate (the runtime's own limit)
CELL_MARKER = "# %%"  # a line that starts a notebook cell: `# %% key`, key naming its text in notes.NOTES


@dataclasses.dataclass(frozen=True)
class Exported:
    """One lab as a standalone script; `values` fill the placeholders of its notebook's texts."""

    lab: str
    script: str
    values: Mapping[str, object]


def fill(name: str, **values: object) -> str:
    return string.Template((TEMPLATES / name).read_text()).substitute(values)


def shown(settings: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


# What an export needs, as its first cell and that cell's text name it: the Python JAX needs, the JAX the lab was
# verified on (its minor release, and the release to install).
REQUIREMENTS = {"python": ".".join(map(str, MIN_PYTHON)), "jax": minor(VERIFIED_JAX), "jax_release": VERIFIED_JAX}


def requirements() -> str:
    """The first cell of every export: the Python and JAX it needs, checked before JAX is imported."""
    return fill("requirements.py.tmpl", **REQUIREMENTS, python_tuple=", ".join(map(str, MIN_PYTHON)))


def header(title: str, settings: Mapping[str, object], devices: int, lab: str) -> str:
    return requirements() + fill("header.py.tmpl", title=title, settings=shown(settings), filename=f"{lab}.py",
                                 notebook=f"{lab}.ipynb", devices=devices,
                                 threads=max(MIN_WORKER_THREADS, 2 * devices)).rstrip() + "\n"


def cli_command(*parts: str | Mapping[str, object]) -> str:
    """`python -m pmap_core <command> --option value …` (a part is a word, or options by name): the CLI's run
    of what an export runs, every setting that shapes the model named, so that the command a notebook gives
    for comparison runs as written and prints the same final loss (tests/system/test_export_notebooks.py
    runs it)."""
    words = ["python -m pmap_core"]
    for part in parts:
        words += [part] if isinstance(part, str) else [f"--{name} {value}" for name, value in part.items()]
    return " ".join(words)


def script_devices(devices: object) -> int:
    """A script's device count: 1 to SCRIPT_MAX_DEVICES, whatever this process has."""
    return check_int("devices", devices, 1, SCRIPT_MAX_DEVICES)


def cells(script: str) -> list[tuple[str, str]]:
    """The script cut at its `# %% key` lines: (key, code) in order, the marker lines left out."""
    found: list[tuple[str, list[str]]] = []
    for line in script.splitlines():
        if line.startswith(CELL_MARKER):
            found.append((line[len(CELL_MARKER):].strip(), []))
        elif found:
            found[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"code before the first cell marker: {line!r}")
    return [(key, "\n".join(lines).strip("\n")) for key, lines in found]
