"""Headless commands: `python -m pmap_core <command> …` on the same code path as the labs.

Each command module registers its own sub-parser; bad input is reported as
one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from pmap_core import cli_bench, cli_training
from pmap_core.validation import LabInputError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pmap_core", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for module in (cli_training, cli_bench):
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except LabInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
