"""How every headless command speaks: the result on stdout (JSON when asked), progress on stderr.

A failure is one line on stderr, `error: …`, and a status other than 0; with `--json`, stdout also gets one JSON
object, `{"error": …, "code": …, "status": …}`, in place of the result.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

JSON_FLAG = "--json"
USAGE_STATUS = 2  # what argparse exits with on a usage error, and the CLI on any bad input


_json_asked = False  # this process's command was given --json (commands.main says so once it has parsed it)


def ask_json(asked: bool) -> None:
    global _json_asked
    _json_asked = asked


def json_asked() -> bool:
    """Whether this process's command was given --json: for a failure found outside the command's own flow (a
    lost process group's watch thread)."""
    return _json_asked


def emit(result: dict[str, Any], as_json: bool) -> None:
    """Print a command's result: one JSON object, or readable `key: value` lines."""
    if as_json:
        print(json.dumps(result, default=float))
        return
    for key, value in result.items():
        print(f"{key}: {value}")


def progress(message: str) -> None:
    # One write with its newline: a signal handled between message and newline would glue
    # the next line (e.g. the SIGTERM notice) onto this one.
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


_stdout_fd: int | None = None  # the command's stdout while stdout_to_stderr sends fd 1 to stderr


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what native libraries print (gloo's connection lines) to stderr, keeping stdout for the result."""
    global _stdout_fd
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    _stdout_fd = saved
    try:
        yield
    finally:
        sys.stdout.flush()
        _stdout_fd = None
        os.dup2(saved, 1)
        os.close(saved)


def fail(message: str, status: int, as_json: bool, code: str | None = None) -> int:
    """Report a failure (see the module's docstring) and return `status`."""
    progress(f"error: {message}")
    if as_json:
        json_error(message, status, code)
    return status


def json_error(message: str, status: int, code: str | None) -> None:
    """The JSON object of a failure, on stdout (where a command already said it on stderr in its own words)."""
    line = json.dumps({"error": message, "code": code, "status": status}) + "\n"
    if _stdout_fd is not None:  # inside stdout_to_stderr (a lost group's watch thread): to the real stdout
        os.write(_stdout_fd, line.encode())
        return
    sys.stdout.write(line)
    sys.stdout.flush()


class UsageError(Exception):
    """A command line argparse refused, raised (not exited) so that the CLI can answer it as asked."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser

    def report(self, as_json: bool) -> NoReturn:
        """As argparse says it (usage, then `prog: error: …`) or, with `--json`, as any failure; then exit with
        status 2, as argparse does."""
        if as_json:
            fail(f"{self.parser.prog}: {self}", USAGE_STATUS, True, "usage")
        else:
            self.parser.print_usage(sys.stderr)
            sys.stderr.write(f"{self.parser.prog}: error: {self}\n")
        self.parser.exit(USAGE_STATUS)


class Parser(argparse.ArgumentParser):
    """argparse's parser, its errors raised as `UsageError` (its sub-parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)
