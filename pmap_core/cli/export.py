"""`python -m pmap_core export LAB [name=value …] [--format ipynb] [--lang zh] > lab.py`: a lab as a
standalone script, or as a Jupyter notebook of the same code with the lab's texts.

Settings are named as in the lab's link (`export collectives op=psum devices=4`), so a teacher's
link and the command line say the same thing; the script (or notebook) goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pmap_core import export


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export", help="print a lab as a standalone JAX script or notebook (only jax and numpy)",
        description="Print a standalone script (only jax and numpy) that reproduces what the lab shows "
                    "with these settings: the training lab's final loss and parameters, the collectives "
                    "lab's results, the migration lab's step in three ways, the sharded-DP lab's strategy and "
                    "the 2-D mesh lab's mesh with their final loss; the multi-process lab as a script that "
                    "launches its processes. With --format ipynb, the same "
                    "code as a Jupyter notebook, with the lab's explanations in --lang.")
    parser.add_argument("lab", choices=export.LABS)
    parser.add_argument("settings", nargs="*", type=_setting, metavar="name=value",
                        help="a setting named as in the lab's link, e.g. devices=4 op=psum")
    parser.add_argument("--format", choices=export.FORMATS, default="py", dest="export_format",
                        help="py: a Python script (default); ipynb: the same code as a Jupyter notebook")
    parser.add_argument("--lang", default="en",
                        help=f"the language of a notebook's explanations: {', '.join(export.LANGUAGES)} (default en)")
    parser.set_defaults(run=run_export)


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    return name.strip(), value.strip()


def run_export(args: argparse.Namespace) -> int:
    export.check_language(args.lang)
    if args.export_format == "ipynb":
        sys.stdout.write(export.notebook_for(args.lab, dict(args.settings), args.lang))
    else:
        sys.stdout.write(export.script_for(args.lab, dict(args.settings)))
    return 0
