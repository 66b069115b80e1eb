"""A setting: a dataclass field that carries its own help, choices and limits, declared once.

`TrainConfig` (train.config) and each program's settings (`train.zero.ShardedStateSettings`,
`train.tensor.TensorSettings`, `train.pipeline.PipelineSettings`, `train.context.ContextSettings`,
`train.experts.ExpertSettings`, or those of a program registered from outside the lab) declare their fields with
`setting(...)`. Everything generic reads them from there: `check_value` refuses a value outside its choices or
limits (`validate`), the CLI makes one flag per setting (`cli.training`), and its JSON prints the settings marked
`reported`.

A lab program's settings class is `declared`: its names join the names a run is given and read by. A run
(`TrainConfig`) and a compiled program's spec (`ProgramSpec`) hold those settings as one nested value, `settings`:
the instances of the settings classes the run sets away from their defaults (`nests_settings`), and read each
one by its name (`config.strategy`), its owner's default where the run leaves it.

This module imports nothing of the package: the config and the programs both depend on it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from pmap_core.validation import LabInputError, check_float, check_int


def setting(default: Any, help: str = "", *, choices: Sequence[str] | None = None,
            low: float | None = None, high: float | None = None, check: Callable[[Any], Any] | None = None,
            kind: type | None = None, flag: bool = True, cli_default: Any = dataclasses.MISSING,
            reported: bool | str = False, axis: str | None = None, label: str | None = None) -> Any:
    """A dataclass field with what a page, the CLI and `validate` need to know of it.

    help: the CLI's help, formatted with {low}, {high} and {default}; choices: the values it may take;
    low/high: its limits (whole numbers, or floats where `kind` is float); check: a checker of its own
    (value -> value); flag: whether the CLI gives it a flag; cli_default: the flag's default when it is
    not the field's (None: "not given", the CLI then decides); reported: whether the CLI's JSON prints it
    (a model's name: only for runs of that model); axis: the mesh axis whose size it is (`--mesh axis=N` sets it,
    `TrainConfig.mesh` reads it); label: how a run's name shows it away from its default ("K{}": "K4")."""
    metadata = {"help": help, "choices": tuple(choices) if choices is not None else None, "low": low,
                "high": high, "check": check, "kind": kind or type(default), "flag": flag,
                "cli_default": default if cli_default is dataclasses.MISSING else cli_default,
                "reported": reported}
    if axis is not None:
        metadata["axis"] = axis
    if label is not None:
        metadata["label"] = label
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


# Each declared setting's name -> the settings class that declares it (`declared`).
_OWNERS: dict[str, type] = {}


def declared(cls: type) -> type:
    """Class decorator of a lab program's settings: its names become settings a run is given and read by
    (`nests_settings`). A name another class declared already is refused: each setting has one home."""
    for field in settings_of(cls):
        owner = _OWNERS.setdefault(field.name, cls)
        if owner.__qualname__ != cls.__qualname__ or owner.__module__ != cls.__module__:
            raise TypeError(f"setting {field.name!r} is declared by {owner.__qualname__} and {cls.__qualname__}")
        _OWNERS[field.name] = cls  # a module imported again declares its class again
    return cls


def declarations() -> dict[str, type]:
    """Each declared setting's name, with the class that declares it."""
    return dict(_OWNERS)


def axis_settings() -> dict[str, str]:
    """Each mesh axis a declared setting is the size of, with that setting's name (`setting(..., axis=)`)."""
    return {field.metadata["axis"]: name for name, cls in _OWNERS.items()
            for field in settings_of(cls) if field.name == name and "axis" in field.metadata}


@functools.cache
def _default_of(cls: type) -> Any:
    return cls()


def nested(settings: Iterable[Any], changes: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """`settings` (settings instances) with `changes` (declared names -> values) made: one instance per class,
    those equal to their class's defaults left out, in a fixed order, so that equal settings compare equal."""
    by_class = {type(value): value for value in settings}
    for name, value in (changes or {}).items():
        owner = _OWNERS[name]
        by_class[owner] = dataclasses.replace(by_class.get(owner) or _default_of(owner), **{name: value})
    kept = (value for cls, value in by_class.items() if value != _default_of(cls))
    return tuple(sorted(kept, key=lambda value: (type(value).__module__, type(value).__qualname__)))


def value_of(settings: Iterable[Any], name: str) -> Any:
    """The value of declared setting `name` in `settings` (nested instances): its owner's default where none
    holds it."""
    owner = _OWNERS[name]
    held = next((value for value in settings if type(value) is owner), None)
    return getattr(held if held is not None else _default_of(owner), name)


def declare_lab_settings() -> None:
    """Import the lab's programs, whose modules declare their settings: a process that imported only the config
    (whose module those import) makes and reads a config by a setting's name all the same."""
    importlib.import_module("pmap_core.train.programs")


def nests_settings(cls: type) -> type:
    """Class decorator of a frozen dataclass with a field `settings` (a tuple of settings instances, `nested`):
    it is made and `dataclasses.replace`d with any declared setting by name (`TrainConfig(strategy="zero3")`,
    kept in `settings`), and reads each by name (`config.strategy`)."""
    init = cls.__init__
    fields = {field.name for field in dataclasses.fields(cls)}

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.keys() - fields - _OWNERS.keys():
            declare_lab_settings()
        changes = {name: kwargs.pop(name) for name in list(kwargs) if name in _OWNERS}
        kwargs["settings"] = nested(kwargs.get("settings", ()), changes)
        init(self, *args, **kwargs)

    def __getattr__(self: Any, name: str) -> Any:
        if name not in _OWNERS and not name.startswith("__"):
            declare_lab_settings()
        if name in _OWNERS:
            return value_of(self.__dict__.get("settings", ()), name)
        raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")

    cls.__init__ = __init__  # type: ignore[method-assign]
    cls.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return cls
