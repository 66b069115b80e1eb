"""A model or a cluster as a TOML file (`plan --model-file`, `--hardware-file`, the page's typed-in sizes, and the
presets in `presets/`), each checked key by key: an unknown key, a value of the wrong kind, a size that does not
divide or a level that does not hold the one inside it is one `LabInputError` that names it.

A model: `name, layers, d_model, d_ff, heads, kv_heads, vocab` and optionally `d_head` (default d_model / heads),
`gated_mlp` (SwiGLU, default true), `tied`, `experts`, `top_k`, `shared_experts`, `dense_layers`, and for a GPT
`norm_bias`, `biases`, `positions`; `source`.

A cluster: `name, peak_flops` (dense 16-bit FLOP/s), `memory_bytes`, `hbm_bytes_s` and optionally `fp8_flops`,
`units` (streaming multiprocessors), `matmul_share`, `attention_share`, `source`, and `[[levels]]`, innermost first,
each `name, size` (devices a group of that level holds; 0 or omitted on the last: every device) and `bytes_s` (one
way per device); each level's size a multiple of the one inside it.
"""

from __future__ import annotations

import dataclasses
import itertools
import pathlib
import tomllib
from typing import Any

from pmap_core.concepts.planner.presets import Hardware, Level, ModelShape, check_hardware, check_model
from pmap_core.validation import LabInputError

MODEL_KEYS = {"name": str, "layers": int, "d_model": int, "d_ff": int, "heads": int, "kv_heads": int, "vocab": int,
              "d_head": int, "gated_mlp": bool, "tied": bool, "experts": int, "top_k": int, "shared_experts": int,
              "dense_layers": int, "norm_bias": bool, "biases": bool, "positions": int, "source": str}
MODEL_REQUIRED = ("name", "layers", "d_model", "d_ff", "heads", "kv_heads", "vocab")
HARDWARE_KEYS = {"name": str, "peak_flops": float, "memory_bytes": float, "hbm_bytes_s": float, "fp8_flops": float,
                 "units": int, "matmul_share": float, "attention_share": float, "source": str, "levels": list}
HARDWARE_REQUIRED = ("name", "peak_flops", "memory_bytes", "hbm_bytes_s", "levels")
LEVEL_KEYS = {"name": str, "size": int, "bytes_s": float}


def read_toml(path: str | pathlib.Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise LabInputError("plan_file", "cannot read {path}: {reason}", path=str(path),
                            reason=error.strerror or str(error)) from None
    except tomllib.TOMLDecodeError as error:
        raise LabInputError("plan_file", "{path} is not TOML: {reason}", path=str(path), reason=str(error)) from None


def _checked(where: str, table: dict[str, Any], keys: dict[str, type], required: tuple[str, ...]) -> dict[str, Any]:
    """The table's values, each key known and of its kind (an int is a float too; a bool is not an int)."""
    for key, value in table.items():
        if key not in keys:
            raise LabInputError("plan_file_key", "{where}: unknown key {key!r} (known: {known})", where=where,
                                key=key, known=", ".join(keys))
        kind = keys[key]
        good = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            good = True
        if not good:
            raise LabInputError("plan_file_value", "{where}: {key} must be {kind}, got {value!r}", where=where,
                                key=key, kind={int: "a whole number", float: "a number", bool: "true or false",
                                               str: "text", list: "a list of [[levels]]"}[kind], value=value)
    missing = [key for key in required if key not in table]
    if missing:
        raise LabInputError("plan_file_missing", "{where}: missing {keys}", where=where, keys=", ".join(missing))
    return table


def model_from(table: dict[str, Any], where: str, key: str = "file") -> ModelShape:
    values = dict(_checked(where, table, MODEL_KEYS, MODEL_REQUIRED))
    head_dim = values.pop("d_head", 0)
    if head_dim == values["d_model"] // values["heads"] and values["d_model"] % values["heads"] == 0:
        head_dim = 0  # the default, written out
    model = ModelShape(key=key, source=values.pop("source", where), head_dim=head_dim, **values)
    return check_model(model)


def hardware_from(table: dict[str, Any], where: str, key: str = "file") -> Hardware:
    values = dict(_checked(where, table, HARDWARE_KEYS, HARDWARE_REQUIRED))
    raw = values.pop("levels")
    if not raw or not all(isinstance(level, dict) for level in raw):
        raise LabInputError("plan_file_value", "{where}: levels must be one or more [[levels]] tables, innermost "
                            "first", where=where)
    levels = []
    for index, level in enumerate(raw):
        item = _checked(f"{where} [[levels]] {index + 1}", level, LEVEL_KEYS, ("name", "bytes_s"))
        levels.append(Level(item["name"], item.get("size", 0), float(item["bytes_s"])))
    for inner, outer in itertools.pairwise(levels):
        if inner.size < 1 or (outer.size and outer.size % inner.size):
            raise LabInputError("plan_level_sizes", "{where}: level {outer!r} ({outer_size} devices) must hold whole "
                                "groups of level {inner!r} ({inner_size})", where=where, outer=outer.name,
                                outer_size=outer.size or "every", inner=inner.name, inner_size=inner.size)
    first, last = levels[0], levels[-1]
    hardware = Hardware(key=key, name=values["name"], peak_flops=float(values["peak_flops"]),
                        memory_bytes=float(values["memory_bytes"]), hbm_bytes_s=float(values["hbm_bytes_s"]),
                        node=first.size or 1, intra_bytes_s=first.bytes_s, inter_bytes_s=last.bytes_s,
                        intra_name=first.name, inter_name=last.name, source=values.get("source", where),
                        units=values.get("units", 0), fp8_flops=float(values.get("fp8_flops", 0.0)),
                        levels=tuple(levels),
                        **{k: float(values[k]) for k in ("matmul_share", "attention_share") if k in values})
    for name in ("matmul_share", "attention_share"):
        share = getattr(hardware, name)
        if not 0 < share <= 1:
            raise LabInputError("out_of_range", "{name} must be between {low} and {high}, got {value}", name=name,
                                low=0, high=1, value=share)
    return check_hardware(hardware)


def load_model(path: str | pathlib.Path) -> ModelShape:
    return model_from(read_toml(path), str(path), pathlib.Path(path).stem)


def load_hardware(path: str | pathlib.Path) -> Hardware:
    return hardware_from(read_toml(path), str(path), pathlib.Path(path).stem)


def model_toml(model: ModelShape) -> str:
    """A model as its file's text (the schema above)."""
    values = {"name": model.name, "layers": model.layers, "d_model": model.d_model, "d_ff": model.d_ff,
              "heads": model.heads, "kv_heads": model.kv_heads, "vocab": model.vocab, "d_head": model.d_head,
              "gated_mlp": model.gated_mlp, "tied": model.tied, "experts": model.experts, "top_k": model.top_k,
              "shared_experts": model.shared_experts, "dense_layers": model.dense_layers,
              "norm_bias": model.norm_bias, "biases": model.biases, "positions": model.positions,
              "source": model.source}
    return "".join(f"{key} = {_toml(value)}\n" for key, value in values.items())


def hardware_toml(hardware: Hardware) -> str:
    """A cluster as its file's text (the schema above)."""
    values = {"name": hardware.name, "peak_flops": hardware.peak_flops, "memory_bytes": hardware.memory_bytes,
              "hbm_bytes_s": hardware.hbm_bytes_s, "fp8_flops": hardware.fp8_flops, "units": hardware.units,
              "matmul_share": hardware.matmul_share, "attention_share": hardware.attention_share,
              "source": hardware.source}
    text = "".join(f"{key} = {_toml(value)}\n" for key, value in values.items())
    for level in hardware.link_levels:
        text += f"\n[[levels]]\nname = {_toml(level.name)}\nsize = {level.size}\nbytes_s = {_toml(level.bytes_s)}\n"
    return text


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        return repr(value)
    return str(value)


def same_model(a: ModelShape, b: ModelShape) -> bool:
    """Two shapes alike in everything but their key."""
    return dataclasses.replace(a, key="") == dataclasses.replace(b, key="")
