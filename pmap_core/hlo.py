"""Reading compiled HLO text: compare two programs, find their collectives.

XLA's text names values by a numeric suffix (`%sin.5`) and carries source
metadata, so two programs that compute the same thing rarely match line for
line. `normalize_hlo` removes what only names; what is left is the program.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re

import numpy as np

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


COLLECTIVE_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")
_COLLECTIVE = re.compile(r"^\s*(?:ROOT )?%?(?P<name>[\w.\-]+) = (?P<type>.+?) "
                         r"(?P<kind>all-reduce|all-gather|reduce-scatter|collective-permute|all-to-all)(?:-start)?\(")
_ARRAY_TYPE = re.compile(r"\b(?P<dtype>pred|[bsuf]\d+|bf16|f8\w*|c64|c128)\[(?P<dims>[\d,]*)\]")
_BRACED_GROUP = re.compile(r"replica_groups=\{\{(?P<first>[\d,]*)\}")
_IOTA_GROUPS = re.compile(r"replica_groups=\[\d+,(?P<size>\d+)\]")
_MESH_GROUPS = re.compile(r"replica_groups=mesh\[(?P<axes>[^\]]*)\] \{(?P<used>[^}]*)\}")
_BITS = {"pred": 8, "bf16": 16, "c64": 64, "c128": 128}


@dataclasses.dataclass(frozen=True)
class Collective:
    """One collective instruction of compiled HLO. Inside a loop it runs once per iteration."""

    kind: str                       # one of COLLECTIVE_KINDS
    name: str
    shapes: tuple[str, ...]         # its result's arrays, e.g. ("f32[8,32]", "f32[]")
    result_bytes: int
    group_size: int | None          # devices taking part in each group, when the HLO says
    # Every group of device ids (`replica_groups`), when the HLO says which; () when it says one
    # group of every device (`replica_groups={}`).
    groups: tuple[tuple[int, ...], ...] | None = None

    @property
    def operand_bytes(self) -> int:
        """Bytes each device puts in: an all-gather's operand is 1/group of its result, a
        reduce-scatter's operand is group × its result, every other kind's equals its result."""
        group = self.group_size or 1
        if self.kind == "all-gather":
            return self.result_bytes // group
        if self.kind == "reduce-scatter":
            return self.result_bytes * group
        return self.result_bytes


def collectives(compiled: str) -> list[Collective]:
    """The collective instructions of compiled HLO text, in program order (an async pair — start
    and done — counts once, at its start)."""
    found = []
    for line in compiled.splitlines():
        match = _COLLECTIVE.match(line)
        if match is None or "-done(" in line:
            continue
        arrays = list(_ARRAY_TYPE.finditer(match["type"]))
        if match["type"].startswith("(") and "-start(" in line:
            arrays = arrays[len(arrays) // 2:]  # an async start's type is (operands, results)
        shapes = tuple(f"{a['dtype']}[{a['dims']}]" for a in arrays)
        found.append(Collective(match["kind"], match["name"], shapes,
                                sum(_array_bytes(a["dtype"], a["dims"]) for a in arrays), _group_size(line),
                                replica_groups(line)))
    return found


def _array_bytes(dtype: str, dims: str) -> int:
    bits = _BITS.get(dtype) or int(re.sub(r"\D", "", dtype.split("e")[0]) or 8)
    return math.prod(int(d) for d in dims.split(",") if d) * bits // 8


def _group_size(line: str) -> int | None:
    if match := _BRACED_GROUP.search(line):
        return len([d for d in match["first"].split(",") if d])
    if match := _IOTA_GROUPS.search(line):
        return int(match["size"])
    if match := _MESH_GROUPS.search(line):
        sizes = dict(re.findall(r"'([^']+)'=(\d+)", match["axes"]))
        return math.prod(int(sizes[axis]) for axis in re.findall(r"'([^']+)'", match["used"]))
    return None


# --- replica groups in full ----------------------------------------------------------------------
# XLA prints a collective's groups of device ids in one of three forms (openxla/xla,
# xla/hlo/ir/replica_group.cc and mesh_and_axis.cc):
#   a list                replica_groups={{0,2},{1,3}}
#   an iota               replica_groups=[2,2]<=[2,2]T(1,0): arange(4).reshape(2,2).transpose(1,0),
#                         then one row of [groups, size] per group
#   mesh axes             replica_groups=mesh['a'=2,'b'=2] {'a'}: the devices laid out on the named
#                         axes (in id order, or as `device_ids=(…)` says), one group per position of
#                         the other axes; an axis may be a part of one, 'a':(pre)size.
_LIST_GROUPS = re.compile(r"replica_groups=\{(?P<body>(?:\{[\d,]*\},?)*)\}")
_IOTA_FULL = re.compile(r"replica_groups=\[(?P<shape>\d+,\d+)\]<=\[(?P<dims>[\d,]+)\](?:T\((?P<perm>[\d,]+)\))?")
_MESH_FULL = re.compile(r"replica_groups=mesh\[(?P<axes>[^\]]*)\](?:, device_ids=\((?P<ids>[^)]*)\))?"
                        r" \{(?P<used>[^}]*)\}")
_MESH_AXIS = re.compile(r"'?(?P<name>[^'=,]+)'?=(?P<size>\d+)")
_USED_AXIS = re.compile(r"'?(?P<name>[^':,]+)'?(?::\((?P<pre>\d+)\)(?P<size>\d+))?")


def replica_groups(line: str) -> tuple[tuple[int, ...], ...] | None:
    """The groups of device ids of one collective instruction's line of HLO text: () for one group
    of every device (`replica_groups={}`), None when the line names no groups XLA's three forms
    spell (see above)."""
    if match := _LIST_GROUPS.search(line):
        return tuple(tuple(int(d) for d in group.split(",") if d)
                     for group in re.findall(r"\{([\d,]*)\}", match["body"]))
    if match := _IOTA_FULL.search(line):
        count, size = (int(n) for n in match["shape"].split(","))
        ids = _iota(match["dims"], match["perm"])
        return None if ids is None or ids.size != count * size else _rows(ids.reshape(count, size))
    if match := _MESH_FULL.search(line):
        axes = [(m["name"], int(m["size"])) for m in _MESH_AXIS.finditer(match["axes"])]
        ids = np.arange(math.prod(size for _, size in axes))
        if match["ids"]:
            listed = _iota(*_iota_parts(match["ids"])) if "<=" in match["ids"] else np.array(
                [int(d) for d in re.findall(r"\d+", match["ids"])])
            if listed is None or listed.size != ids.size:
                return None
            ids = listed
        return _mesh_groups(ids.reshape([size for _, size in axes]), [name for name, _ in axes],
                            [(m["name"], m["pre"], m["size"]) for m in _USED_AXIS.finditer(match["used"])
                             if m["name"].strip()])
    return None


def _iota(dims: str, perm: str | None):
    shape = [int(d) for d in dims.split(",") if d]
    ids = np.arange(math.prod(shape)).reshape(shape)
    if perm:
        order = [int(p) for p in perm.split(",") if p]
        if sorted(order) != list(range(len(shape))):
            return None
        ids = ids.transpose(order)
    return ids.reshape(-1)


def _iota_parts(text: str) -> tuple[str, str | None]:
    """"[4,2]<=[2,4]T(1,0)" -> ("2,4", "1,0"): the iota a mesh's device_ids are written as."""
    match = re.search(r"<=\[(?P<dims>[\d,]+)\](?:T\((?P<perm>[\d,]+)\))?", text)
    return (match["dims"], match["perm"]) if match else ("0", None)


def _rows(array) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(d) for d in row) for row in array)


def _mesh_groups(devices, names: list[str], used: list[tuple[str, str | None, str | None]]):
    """Groups of a mesh-axes list: each axis dimension is split where a part of it is named, the named
    parts moved last and the array cut into rows of their product."""
    if any(name not in names for name, _, _ in used):
        return None
    sizes, grouped = [], []
    for position, name in enumerate(names):
        full = devices.shape[position]
        parts = sorted(((int(pre), int(size)) if size else (1, full))
                       for used_name, pre, size in used if used_name == name)
        done = 1
        for pre, size in parts:
            if pre != done:            # the part of the axis before this one stays ungrouped
                sizes.append(pre // done)
            grouped.append(len(sizes))
            sizes.append(size)
            done = pre * size
        if done != full or not parts:
            sizes.append(full // done)
    order = [i for i in range(len(sizes)) if i not in grouped] + grouped
    group_size = math.prod(sizes[i] for i in grouped)
    return _rows(devices.reshape(sizes).transpose(order).reshape(-1, group_size))
