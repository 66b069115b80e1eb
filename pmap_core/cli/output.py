"""How every headless command speaks: the result on stdout (JSON when asked), progress on stderr."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any


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


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what native libraries print (gloo's connection lines) to stderr, keeping stdout for the result."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
