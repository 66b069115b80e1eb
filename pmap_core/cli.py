"""Headless commands: `python -m pmap_core <command> …` on the same code path as the labs.

Each command module registers its own sub-parser; bad input is reported as
one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pmap_core.validation import LabInputError


def emit(result: dict[str, Any], as_json: bool) -> None:
    """Print a command's result: one JSON object, or readable `key: value` lines."""
    if as_json:
        print(json.dumps(result, default=float))
        return
    for key, value in result.items():
        print(f"{key}: {value}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pmap_core", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for module in _command_modules():
        module.register(commands)
    return parser


def _command_modules() -> list[Any]:
    import importlib

    names = ["pmap_core.cli_training", "pmap_core.cli_bench"]
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
    return modules


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except LabInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
