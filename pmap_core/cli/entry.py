"""`pmap-lab`, the command `pip install .` puts on PATH.

With no arguments, or `app`, it serves the app: `streamlit run` on the installed `streamlit_app.py` with
the lab's Streamlit settings (`.streamlit/config.toml`, passed as options, so they hold in any working
directory); what follows `app` goes to `streamlit run` (`pmap-lab app --server.port 8600`). Any other
command is the headless CLI, as `python -m pmap_core` (`pmap-lab train --steps 10 --json`).
"""

from __future__ import annotations

import os
import pathlib
import sys
import tomllib

from pmap_core.validation import TEACHER_KEY_ENV, LabInputError, check_teacher_key

# The folder holding pmap_core: the repository, or site-packages once installed.
ROOT = pathlib.Path(__file__).resolve().parents[2]
APP_SCRIPT = ROOT / "streamlit_app.py"
CONFIG_NAME = "config.toml"  # .streamlit/config.toml, as pyproject.toml installs it
# The settings file: in the repository, else where the package's data files go (pyproject.toml).
CONFIG_FILES = (ROOT / ".streamlit" / "config.toml", pathlib.Path(sys.prefix) / "share" / "pmap-lab" / CONFIG_NAME)
APP_COMMAND = "app"

USAGE = f"""usage: pmap-lab [{APP_COMMAND} [streamlit run options …]]
       pmap-lab <command> [options …]

With no command (or `{APP_COMMAND}`), serve the lab on http://127.0.0.1:8501 (streamlit run; options after
`{APP_COMMAND}`, e.g. --server.port 8600, go to it). Other commands run headless, as `python -m pmap_core`:
"""


def config_file() -> pathlib.Path | None:
    return next((path for path in CONFIG_FILES if path.is_file()), None)


def config_options(path: pathlib.Path) -> list[str]:
    """The settings of a Streamlit config file as `streamlit run` options (`--server.headless=true`, …)."""
    with path.open("rb") as file:
        settings = tomllib.load(file)
    options = []
    for section, values in settings.items():
        for name, value in values.items():
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            options.append(f"--{section}.{name}={shown}")
    return options


def app_command(extra: list[str]) -> list[str]:
    """The `streamlit run` command line that serves the installed app; `extra` last, so that it wins."""
    config = config_file()
    options = config_options(config) if config else []
    return [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), *options, *extra]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] == APP_COMMAND:
        if not APP_SCRIPT.is_file():
            print(f"error: the app is not installed with this package ({APP_SCRIPT} is missing)", file=sys.stderr)
            return 2
        try:  # a teacher key short enough to guess: refuse to serve (the app says the same on every page)
            check_teacher_key(os.environ.get(TEACHER_KEY_ENV, ""))
        except LabInputError as error:
            print(f"error: {error}; set a longer one or unset it (docs/DEPLOY.md, Teacher controls)", file=sys.stderr)
            return 2
        command = app_command(argv[1:])
        sys.stdout.flush()
        os.execv(command[0], command)  # the server is this process: signals (SIGTERM) reach it directly
    from pmap_core.cli.commands import build_parser
    from pmap_core.cli.commands import main as cli_main

    if argv[0] in ("-h", "--help"):
        print(USAGE)
        parser = build_parser()
        parser.prog = "pmap-lab"
        parser.print_help()
        return 0
    return cli_main(argv)


def run() -> None:
    """The console script: `pmap-lab …` exits with main's status."""
    sys.exit(main())
