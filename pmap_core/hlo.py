"""Reading compiled HLO text: compare two programs, find their all-reduces.

XLA's text names values by a numeric suffix (`%sin.5`) and carries source
metadata, so two programs that compute the same thing rarely match line for
line. `normalize_hlo` removes what only names; what is left is the program.
"""

from __future__ import annotations

import difflib
import re

_SOURCE_TABLES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_METADATA = re.compile(r",? metadata=\{[^}]*\}")
_NUMBERED_NAME = re.compile(r"(?<![\w.\-])%?[A-Za-z_][\w\-]*(?:\.\d+)[\w.\-]*")
_ALL_REDUCE = re.compile(r" all-reduce(-start)?\(")


def normalize_hlo(text: str) -> str:
    """Compiled HLO without what only names it: source tables, metadata, numeric name suffixes.

    Names like `%sin.5` become `%sin.<k>` with k the order of first appearance,
    so two programs that differ only in how XLA numbered their values compare equal.
    """
    lines, skipping = [], False
    for line in text.splitlines():
        if _SOURCE_TABLES.match(line):
            skipping = True  # a table of source locations, up to the next blank line
            continue
        if skipping:
            skipping = bool(line.strip())
            continue
        lines.append(line.rstrip())
    body = _METADATA.sub("", "\n".join(lines))
    body = re.sub(r"^HloModule \S+?,", "HloModule module,", body)
    renamed: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        name = match.group(0)
        if name not in renamed:
            renamed[name] = f"{name.split('.')[0]}.{len(renamed)}"
        return renamed[name]

    body = _NUMBERED_NAME.sub(rename, body)
    return "\n".join(line for line in body.splitlines() if line.strip())


def differing_lines(a: str, b: str) -> int:
    """Lines added or removed between two texts."""
    return sum(
        1 for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def unified_diff(a: str, b: str, a_name: str, b_name: str) -> str:
    """The diff of two texts, empty when they are the same."""
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), a_name, b_name, lineterm=""))


def all_reduces(compiled: str, width: int = 240) -> list[str]:
    """The all-reduce instructions of compiled HLO, without metadata, cut to `width` characters."""
    return [_METADATA.sub("", line.strip())[:width] for line in compiled.splitlines() if _ALL_REDUCE.search(line)]
