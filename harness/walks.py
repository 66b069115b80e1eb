"""What the click walks share: a walk's figures, and the walk printed."""

from __future__ import annotations

import argparse
import collections
import pathlib
from typing import Any


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


def walked(walker: Any, calls: list[str] | None) -> list[str]:
    """`walker`'s stops; every function it entered appended to `calls` when given."""
    stops = walker.walk()
    if calls is not None:
        calls.extend(walker.entered)
    return stops


def click_arguments(parser: argparse.ArgumentParser, start: tuple[str, str], registry_key: str) -> None:
    """The options every walk's command takes: what to print, where the click starts, which entry it follows."""
    parser.add_argument("--quiet", action="store_true", help="the figures only, not the walk")
    parser.add_argument("--calls", action="store_true", help="also every function entered, by depth")
    parser.add_argument("--start", default=":".join(start), help="module:function the click starts in")
    parser.add_argument("--registry-key", default=registry_key, help="the registry entry a call through it follows")


def print_click(args: argparse.Namespace, stops: list[str], calls: list[str]) -> None:
    if args.calls:
        print("\n".join(calls))
        print()
    print_walk(stops, args.quiet)
