"""Which device holds which block of a 2-D array, for a mesh and a PartitionSpec the reader picks.

A mesh arranges the D devices in a grid with named axes: 1-D (D devices on axis 'x') or 2-D
(a × b = D, axes 'x' and 'y'). A PartitionSpec says, per array dimension, which mesh axes split it:
P('x', 'y') cuts the rows into |x| blocks and the columns into |y|; P(None, 'y') leaves the rows
whole; P() keeps the whole array on every device (replicated). The array is placed with
`jax.device_put(x, NamedSharding(mesh, spec))`, and what each device holds is read back from the
array's own `addressable_shards` — the idea of `jax.debug.visualize_array_sharding`, as data.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from pmap_core.validation import LabInputError, check_devices, check_int

MAX_SIDE = 32  # rows and columns of the placed array
DEFAULT_SIDE = 8  # the side of the array a reader starts from, where the mesh lets it split evenly
MESH_AXES = ("x", "y")

# Spec ids as they travel in a link, and the PartitionSpec each names.
SPECS = {
    "x": P("x"),
    "x,y": P("x", "y"),
    "none,y": P(None, "y"),
    "y,x": P("y", "x"),
    "none,x": P(None, "x"),
    "xy": P(("x", "y")),
    "replicated": P(),
}


def mesh_shapes(devices: int) -> list[str]:
    """Every mesh of `devices` devices: 1-D "D", then each 2-D factorization "a×b" as "axb"."""
    devices = check_devices(devices)
    pairs = [f"{a}x{devices // a}" for a in range(1, devices + 1) if devices % a == 0]
    return [str(devices), *pairs]


def default_mesh(devices: int) -> str:
    """The squarest 2-D mesh with a ≤ b (8 → 2x4); "1xD" when D has no other factorization."""
    devices = check_devices(devices)
    a = max(a for a in range(1, math.isqrt(devices) + 1) if devices % a == 0)
    return f"{a}x{devices // a}"


def default_spec(mesh_id: str, devices: int) -> str:
    """P('x', 'y'), the spec a reader starts from, where the array can split over both mesh axes;
    else (an axis longer than MAX_SIDE: a prime D over 32 gives the mesh 1xD) P('x'), then P()."""
    axes = mesh_axes(mesh_id, devices)
    for spec_id in ("x,y", "x", "replicated"):
        if all(_parts(axes, entry) <= MAX_SIDE for entry in SPECS[spec_id]):
            return spec_id
    return "replicated"


def default_shape(mesh_id: str, spec_id: str, devices: int) -> tuple[int, int]:
    """(rows, cols) a reader starts from: for each dimension the multiple of its number of blocks
    nearest to DEFAULT_SIDE, at most MAX_SIDE (8×8 on 2x4; 8×9 for P('x', 'y') on 1x3), so it splits evenly."""
    axes, spec = mesh_axes(mesh_id, devices), spec_of(spec_id)
    sides = []
    for dim in range(2):
        parts = _parts(axes, spec[dim]) if dim < len(spec) else 1
        side = max(parts, round(DEFAULT_SIDE / parts) * parts)
        sides.append(side if side <= MAX_SIDE else max(parts, MAX_SIDE // parts * parts))
    return sides[0], sides[1]


def _parts(axes: dict[str, int], entry: object) -> int:
    """How many blocks one entry of a PartitionSpec cuts its dimension into on this mesh."""
    return math.prod(axes.get(axis, 1) for axis in _axes_of(entry))


def mesh_axes(mesh_id: str, devices: int) -> dict[str, int]:
    """{axis name: size} of a mesh id of `mesh_shapes(devices)`."""
    if mesh_id not in mesh_shapes(devices):
        raise LabInputError("unknown_mesh", "mesh {mesh!r} is not one of {options} (D = {devices})",
                            mesh=mesh_id, options=", ".join(mesh_shapes(devices)), devices=devices)
    sizes = [int(n) for n in mesh_id.split("x")]
    return dict(zip(MESH_AXES[:len(sizes)], sizes, strict=True))


def spec_of(spec_id: str) -> P:
    if spec_id not in SPECS:
        raise LabInputError("unknown_spec", "spec {spec!r} is not one of {options}",
                            spec=spec_id, options=", ".join(SPECS))
    return SPECS[spec_id]


def _axes_of(entry: object) -> tuple[str, ...]:
    """The mesh axes one entry of a PartitionSpec names: None → (), 'x' → ('x',), ('x','y') → both."""
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (str(entry),)


def check_placement(axes: dict[str, int], spec: P, shape: tuple[int, int]) -> None:
    """Refuse, before JAX does, a spec naming an axis the mesh lacks or a dimension that does not split evenly."""
    for entry in spec:
        for axis in _axes_of(entry):
            if axis not in axes:
                raise LabInputError(
                    "mesh_axis_missing", "{spec} names mesh axis {axis!r}, but this mesh has only {mesh_axes}",
                    spec=str(spec), axis=axis, mesh_axes=", ".join(repr(a) for a in axes))
    for dim, entry in enumerate(spec):
        parts = math.prod(axes[a] for a in _axes_of(entry))
        if shape[dim] % parts:
            size = shape[dim]
            lower, upper = size - size % parts, size - size % parts + parts
            raise LabInputError(
                "block_not_divisible",
                "{spec} cuts dimension {dim} ({size}) into {parts} blocks, which does not divide it; "
                "sizes that do: {nearest}",
                spec=str(spec), dim=dim, size=size, parts=parts,
                nearest=", ".join(str(n) for n in (lower, upper) if 0 < n <= MAX_SIDE) or str(parts))


@dataclasses.dataclass(frozen=True)
class Block:
    """One block of the array and the devices that hold a copy of it (read from the shards)."""

    rows: tuple[int, int]  # [start, stop)
    cols: tuple[int, int]
    devices: tuple[int, ...]
    values_match: bool  # every copy's shard.data equals x[block] (NumPy slicing)


@dataclasses.dataclass(frozen=True)
class Placement:
    devices: int
    mesh: str  # mesh id, e.g. "2x4"
    axes: dict[str, int]
    mesh_grid: tuple[tuple[int, ...], ...]  # device ids as the mesh arranges them (1-D: one row)
    spec: str  # str(PartitionSpec)
    shape: tuple[int, int]
    typeof: str  # str(jax.typeof(array))
    sharding: str  # str(array.sharding)
    shards: tuple[tuple[int, tuple[int, int], tuple[int, int]], ...]  # (device, rows, cols) per shard
    blocks: tuple[Block, ...]
    shard_shape: tuple[int, ...]
    as_predicted: bool  # every device holds the block `predicted_spans` computes from its mesh position

    @property
    def copies(self) -> int:
        """How many devices hold each block: 1 when fully sharded, D when replicated."""
        return len(self.blocks[0].devices)


def make_mesh(axes: dict[str, int], devices: int) -> jax.sharding.Mesh:
    return jax.make_mesh(tuple(axes.values()), tuple(axes), devices=jax.devices()[:devices])


def _span(index: slice, size: int) -> tuple[int, int]:
    start, stop, _ = index.indices(size)
    return start, stop


def predicted_spans(axes: dict[str, int], grid: np.ndarray, spec: P,
                    shape: tuple[int, int]) -> dict[int, tuple[tuple[int, int], ...]]:
    """{device id: its (start, stop) per dimension}, from the device's position in the mesh alone:
    along a dimension split over axes (a1, a2, …) the block number is the position's mixed-radix
    number over those axes, major to minor; a dimension the spec leaves out is whole."""
    names = list(axes)
    spans = {}
    for position in np.ndindex(grid.shape):
        coordinate = dict(zip(names, position, strict=True))
        per_dim = []
        for dim, size in enumerate(shape):
            used = _axes_of(spec[dim]) if dim < len(spec) else ()
            block, parts = 0, 1
            for axis in used:
                block, parts = block * axes[axis] + coordinate[axis], parts * axes[axis]
            step = size // parts
            per_dim.append((block * step, (block + 1) * step))
        spans[int(grid[position])] = tuple(per_dim)
    return spans


def place(devices: int, mesh_id: str, spec_id: str, rows: int, cols: int) -> Placement:
    """Put a rows×cols array (its values 0, 1, 2, … row by row) on the mesh with the spec, and read
    back from `addressable_shards` which device holds which block."""
    devices = check_devices(devices)
    rows, cols = check_int("rows", rows, 1, MAX_SIDE), check_int("cols", cols, 1, MAX_SIDE)
    axes, spec = mesh_axes(mesh_id, devices), spec_of(spec_id)
    check_placement(axes, spec, (rows, cols))
    mesh = make_mesh(axes, devices)
    host = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    array = jax.device_put(host, NamedSharding(mesh, spec))
    shards, owners, matches = [], {}, {}
    for shard in array.addressable_shards:
        span = (_span(shard.index[0], rows), _span(shard.index[1], cols))
        shards.append((shard.device.id, *span))
        owners.setdefault(span, []).append(shard.device.id)
        data = np.asarray(shard.data)
        matches[span] = matches.get(span, True) and np.array_equal(data, host[shard.index])
    blocks = tuple(Block(r, c, tuple(sorted(ids)), matches[(r, c)]) for (r, c), ids in sorted(owners.items()))
    ids = np.vectorize(lambda d: d.id)(mesh.devices)
    predicted = predicted_spans(axes, ids, spec, (rows, cols))
    grid = ids.reshape(-1, ids.shape[-1])
    return Placement(
        devices=devices, mesh=mesh_id, axes=axes, mesh_grid=tuple(tuple(int(d) for d in row) for row in grid),
        spec=str(spec), shape=(rows, cols), typeof=str(jax.typeof(array)), sharding=str(array.sharding),
        shards=tuple(sorted(shards)), blocks=blocks, shard_shape=tuple(array.addressable_shards[0].data.shape),
        as_predicted=all(predicted[d] == (r, c) for d, r, c in shards),
    )


def device_label(ids: tuple[int, ...]) -> str:
    """Device ids as short text: "3", "0,4", or a run "0–7"."""
    if len(ids) > 2 and list(ids) == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}–{ids[-1]}"
    return ",".join(str(i) for i in ids)


def jax_refusal(devices: int, mesh_id: str, spec_id: str, rows: int, cols: int) -> str:
    """What JAX itself raises when asked for this placement without the lab's check ("" if it accepts)."""
    mesh = make_mesh(mesh_axes(mesh_id, check_devices(devices)), devices)
    try:
        jax.device_put(np.zeros((rows, cols), np.float32), NamedSharding(mesh, spec_of(spec_id)))
    except ValueError as error:
        return str(error)
    return ""
