"""`python -m pmap_core export LAB [name=value …] [--format ipynb] [--lang zh] > lab.py`: a lab as a
standalone script, or as a Jupyter notebook of the same code with the lab's texts.

Settings are named as in the lab's link (`export collectives op=psum devices=4`), so a teacher's
link and the command line say the same thing; the script (or notebook) goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from pmap_core import export
from pmap_core.cli.output import emit


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=settings_help(),
        description="Print a standalone script (only jax and numpy) that reproduces what the lab shows\n"
                    "with these settings: the training lab's final loss and parameters, the collectives lab's\n"
                    "results, the migration lab's step in three ways, the sharded-DP lab's strategy and the\n"
                    "2-D mesh lab's mesh with their final loss; the multi-process lab as a script that launches\n"
                    "its processes. With --format ipynb, the same code as a Jupyter notebook, with the lab's\n"
                    "explanations in --lang.")
    parser.add_argument("lab", choices=export.LABS)
    parser.add_argument("settings", nargs="*", type=_setting, metavar="name=value",
                        help="a setting named as in the lab's link, e.g. devices=4 op=psum (each lab's below)")
    parser.add_argument("--format", choices=export.FORMATS, default="py", dest="export_format",
                        help="py: a Python script (default); ipynb: the same code as a Jupyter notebook")
    parser.add_argument("--lang", default="en",
                        help=f"the language of a notebook's explanations: {', '.join(export.LANGUAGES)} (default en)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: lab, format, lang, the settings given, and the script or "
                             "notebook as text")
    parser.set_defaults(run=run_export)


def settings_help() -> str:
    """Each lab's settings, with the value each takes when left out (auto: worked out from the others)."""
    lines = ["settings (name=value; left out, the value shown here; batch, and the 2-D mesh lab's mesh and hidden,",
             "follow the devices given):"]
    for lab in export.LABS:
        shown = " ".join(f"{name}={'auto' if value is None else value}"
                         for name, value in export.setting_defaults(lab).items())
        lines.append(textwrap.fill(shown, 88, initial_indent=f"  {lab}: ", subsequent_indent="    "))
    return "\n".join(lines)


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    return name.strip(), value.strip()


def run_export(args: argparse.Namespace) -> int:
    export.check_language(args.lang)
    settings = dict(args.settings)
    if args.export_format == "ipynb":
        text = export.notebook_for(args.lab, settings, args.lang)
    else:
        text = export.script_for(args.lab, settings)
    if args.json:
        emit({"lab": args.lab, "format": args.export_format, "lang": args.lang, "settings": settings, "text": text},
             True)
    else:
        sys.stdout.write(text)
    return 0
