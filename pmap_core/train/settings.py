"""A setting: a dataclass field that carries its own help, choices and limits.

`TrainConfig` (train.config) and each program's settings (`train.zero.ShardedStateSettings`,
`train.tensor.TensorSettings`, `train.pipeline.PipelineSettings`, or those of a program registered from
outside the lab) declare their fields with `setting(...)`. Everything generic reads them from there:
`check_value` refuses a value outside its choices or limits (`validate`), the CLI makes one flag per
setting (`cli.training`), and its JSON prints the settings marked `reported`.

This module imports nothing of the package: the config and the programs both depend on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pmap_core.validation import LabInputError, check_float, check_int


def setting(default: Any, help: str = "", *, choices: Sequence[str] | None = None,
            low: float | None = None, high: float | None = None, check: Callable[[Any], Any] | None = None,
            kind: type | None = None, flag: bool = True, cli_default: Any = dataclasses.MISSING,
            reported: bool | str = False) -> Any:
    """A dataclass field with what a page, the CLI and `validate` need to know of it.

    help: the CLI's help, formatted with {low}, {high} and {default}; choices: the values it may take;
    low/high: its limits (whole numbers, or floats where `kind` is float); check: a checker of its own
    (value -> value); flag: whether the CLI gives it a flag; cli_default: the flag's default when it is
    not the field's (None: "not given", the CLI then decides); reported: whether the CLI's JSON prints it
    (a model's name: only for runs of that model)."""
    metadata = {"help": help, "choices": tuple(choices) if choices is not None else None, "low": low,
                "high": high, "check": check, "kind": kind or type(default), "flag": flag,
                "cli_default": default if cli_default is dataclasses.MISSING else cli_default,
                "reported": reported}
    return dataclasses.field(default=default, metadata=metadata)


def settings_of(cls: type) -> Iterator[dataclasses.Field]:
    """The fields of `cls` declared with `setting`."""
    return (f for f in dataclasses.fields(cls) if "kind" in f.metadata)


def check_value(field: dataclasses.Field, value: Any) -> Any:
    """`value` for `field`, normalised, or a LabInputError: unknown_<name> (not one of its choices),
    or the number checks' codes (out_of_range, not_whole_number, not_a_number)."""
    meta = field.metadata
    if meta["choices"] is not None:
        if value not in meta["choices"]:
            raise LabInputError(f"unknown_{field.name}", "{field} must be one of {options}, got {value!r}",
                                field=field.name, options=", ".join(meta["choices"]), value=value)
        return value
    if meta["check"] is not None:
        return meta["check"](value)
    if meta["low"] is None:
        return value
    if meta["kind"] is float:
        return check_float(field.name, value, meta["low"], meta["high"])
    return check_int(field.name, value, int(meta["low"]), int(meta["high"]))


def help_of(field: dataclasses.Field) -> str:
    meta = field.metadata
    low, high = meta["low"], meta["high"]
    return meta["help"].format(low=f"{low:g}" if low is not None else "", high=f"{high:g}" if high is not None else "",
                               default=field.default)


def defaults(cls: type) -> dict[str, Any]:
    """Each setting of `cls` with its default."""
    return {f.name: f.default for f in settings_of(cls)}
