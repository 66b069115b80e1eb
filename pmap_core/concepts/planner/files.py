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
import pathlib
import tomllib
from typing import Any

from pmap_core.concepts.planner.presets import Hardware, ModelShape, hardware_from, model_from
from pmap_core.validation import LabInputError


def read_text(path: str | pathlib.Path) -> str:
    try:
        return pathlib.Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise LabInputError("plan_file", "cannot read {path}: {reason}", path=str(path),
                            reason=error.strerror or str(error)) from None
    except UnicodeDecodeError as error:
        raise LabInputError("plan_not_toml", "{where} is not TOML: {reason}", where=str(path),
                            reason=str(error)) from None


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """`text` as TOML, or one LabInputError that says where and why not."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LabInputError("plan_not_toml", "{where} is not TOML: {reason}", where=where, reason=str(error)) from None


def model_from_text(text: str, where: str, key: str = "file") -> ModelShape:
    """A model's file text (a file's, or typed in on the page), read and checked; `where` names it in errors."""
    return model_from(parse_toml(text, where), where, key)


def hardware_from_text(text: str, where: str, key: str = "file") -> Hardware:
    """A cluster's file text (a file's, or typed in on the page), read and checked; `where` names it in errors."""
    return hardware_from(parse_toml(text, where), where, key)


def load_model(path: str | pathlib.Path) -> ModelShape:
    return model_from_text(read_text(path), str(path), pathlib.Path(path).stem)


def load_hardware(path: str | pathlib.Path) -> Hardware:
    return hardware_from_text(read_text(path), str(path), pathlib.Path(path).stem)


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
