"""What the click walks share: a walk's figures, and the walk printed."""

from __future__ import annotations

import collections
import pathlib


def summary(stops: list[str]) -> tuple[collections.Counter, int]:
    """(entries per file, returns to a file already left)."""
    entered = collections.Counter(stops)
    return entered, len(stops) - len(entered)


def print_walk(stops: list[str], quiet: bool = False) -> None:
    """The walk (unless `quiet`), then its stops, files, returns and each file's entries."""
    entered, returns = summary(stops)
    if not quiet:
        print(" → ".join(stops))
        print()
    print(f"{len(stops)} stops in {len(entered)} files; returns to a file already left: {returns}")
    for name, count in entered.most_common():
        print(f"  {count}× {name}")


def source_modules(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, pathlib.Path]:
    """Every module of `packages` under `root`, by its dotted name (a package by its folder's)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules
