"""The path of the training page's Train click through the code, following only the run's settings.

Static, like `harness.pipeline_measure_walk` (whose resolving and counting it reuses), but where that walker
follows every call it resolves, this one follows a call only when it is handed the settings: a reader who
wants to know what the settings decide follows them, not the data, the compiled program or the tracking.

The settings start as the start function's parameter `config` (`labs/training.py:run_training`: the
validated `TrainConfig` the page built from its widgets). A name holds the settings when it is given them:
- a tracked name, or a field or property of one whose annotation names a settings class (`RunPlan.programs`,
  `dict[int, ProgramSpec]`), and an element of a tracked container (`for n, spec in specs.items()`);
- the value of a call handed the settings that makes or returns a settings record (`config.program_spec(n)`,
  `plan_run(config, ...)`, `validate(config)`, a settings class's constructor, `dataclasses.replace(config)`).
The settings classes are `TrainConfig`, `RunPlan` and `ProgramSpec` (those `harness.train_click_walk`
records at run time). A call is followed when an argument (positional or keyword) or its receiver
(`config.method()`, a property `config.dims`) holds the settings; inside it, the parameters given them
(`self` for the receiver) hold them in turn. A call through the program registry follows its `--registry-key`
entry ("pmap"), as the other walker does; so are the stops and returns counted (a return: coming back to a
file the walk had left).

Not followed, as in the other walker: what it cannot resolve (the callbacks' hooks, `callback.run_started(config)`;
a registry entry's hooks), a constructor's `__init__` (`Diverged(config, ...)`: only `__post_init__` is walked).
A nested function sees only its own parameters, not the settings of the function around it.

    python -m benchmarks.train_click_static_walk [--registry-key pmap] [--calls] [--quiet]
"""

from __future__ import annotations

import argparse
import ast
import pathlib

from harness.pipeline_measure_walk import ROOT, Module, Walker, annotation_node
from harness.walks import click_arguments, print_click, walked

START = ("labs.training", "run_training")
SETTINGS = ("config",)  # the start function's parameters that hold the run's settings
SETTINGS_CLASSES = (("pmap_core.train.config", "TrainConfig"), ("pmap_core.train.config", "RunPlan"),
                    ("pmap_core.train.program", "ProgramSpec"))
COPIES = ("replace",)  # `dataclasses.replace(config, ...)`: a copy of its first argument, of the same kind


class SettingsWalker(Walker):
    """Follows only the calls handed the settings (the module docstring says what holds them)."""

    def __init__(self, start: tuple[str, str] = START, registry_key: str = "pmap", scope: str = "core",
                 settings: tuple[str, ...] = SETTINGS,
                 settings_classes: tuple[tuple[str, str], ...] = SETTINGS_CLASSES, root: pathlib.Path = ROOT):
        super().__init__(scope, start, registry_key, root)
        self.settings = settings
        self.classes = [self.modules[m].defs[c] for m, c in settings_classes]

    def first_scope(self) -> dict:
        return {"settings": set(self.settings)}

    # --- what holds the settings ------------------------------------------------------------------------

    def names_settings(self, annotation: ast.AST | None, mod: Module) -> bool:
        """Whether an annotation names a settings class anywhere (`ProgramSpec | None`, `dict[int, ProgramSpec]`)."""
        annotation = annotation_node(annotation)
        if annotation is None:
            return False
        for node in ast.walk(annotation):
            if isinstance(node, (ast.Name, ast.Attribute)):
                found = self.resolve(node, mod, {})
                if found is not None and found[0] == "def" and found[2] in self.classes:
                    return True
        return False

    def holds(self, node: ast.AST | None, mod: Module, scope: dict) -> bool:
        """Whether the value of expression `node` is (or contains) the settings."""
        if isinstance(node, ast.Name):
            return node.id in scope["settings"]
        if isinstance(node, ast.Attribute):
            owner = self.type_of(node.value, mod, scope)
            return owner is not None and self.holds(node.value, mod, scope) and self.field_holds(owner, node.attr)
        if isinstance(node, ast.Call):
            return self.call_returns_settings(node, mod, scope)
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self.holds(node.value, mod, scope)
        if isinstance(node, ast.IfExp):
            return self.holds(node.body, mod, scope) or self.holds(node.orelse, mod, scope)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.holds(e, mod, scope) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.holds(v, mod, scope) for v in node.values)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = {**scope, "settings": set(scope["settings"])}
            for generator in node.generators:
                self.bind_loop(generator.target, generator.iter, mod, inner)
            return self.holds(node.value if isinstance(node, ast.DictComp) else node.elt, mod, inner)
        return False

    def field_holds(self, owner: tuple, name: str) -> bool:
        """Whether field or property `name` of class `owner` is annotated with a settings class."""
        owner_mod, cls = owner[1], owner[2]
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == name:
                return self.names_settings(item.annotation, owner_mod)
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return self.names_settings(item.returns, owner_mod)
        return False

    def handed(self, call: ast.Call, mod: Module, scope: dict) -> bool:
        """Whether a call is handed the settings: as an argument or as its receiver."""
        given = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(call.func, ast.Attribute):
            given.append(call.func.value)
        return any(self.holds(value, mod, scope) for value in given)

    def call_returns_settings(self, call: ast.Call, mod: Module, scope: dict) -> bool:
        """A call handed the settings that makes or returns a settings record (or copies one)."""
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
        if name in COPIES and call.args:
            return self.holds(call.args[0], mod, scope)
        if not self.handed(call, mod, scope):
            return False
        target = self.callee(call, mod, scope)
        if target is None or target[0] != "def":
            return False
        if isinstance(target[2], ast.ClassDef):
            return target[2] in self.classes
        return self.names_settings(target[2].returns, target[1])

    def type_of(self, node: ast.AST, mod: Module, scope: dict):
        """As the other walker's, and a conditional's value has its branches' type (`base if base else None`),
        so that a method of a settings record made that way resolves."""
        if isinstance(node, ast.IfExp):
            return self.type_of(node.body, mod, scope) or self.type_of(node.orelse, mod, scope)
        return super().type_of(node, mod, scope)

    # --- binding names ------------------------------------------------------------------------------------

    def bind(self, target: ast.AST, holds: bool, scope: dict) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                (scope["settings"].add if holds else scope["settings"].discard)(node.id)

    def bind_assign(self, target: ast.AST, value: ast.AST, mod: Module, scope: dict) -> None:
        """`a, b = x, y` pairs its names up; any other target holds the settings when its value does."""
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            for one, other in zip(target.elts, value.elts, strict=True):
                self.bind_assign(one, other, mod, scope)
        elif isinstance(target, (ast.Name, ast.Tuple, ast.List)):
            self.bind(target, self.holds(value, mod, scope), scope)

    def bind_loop(self, target: ast.AST, iterable: ast.AST, mod: Module, scope: dict) -> None:
        """A loop over a tracked container: each element holds the settings (of `.items()`, the value)."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and \
                iterable.func.attr in ("items", "values") and not iterable.args:
            holds = self.holds(iterable.func.value, mod, scope)
            if iterable.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                self.bind(target.elts[0], False, scope)
                target = target.elts[1]
            self.bind(target, holds, scope)
            return
        self.bind(target, self.holds(iterable, mod, scope), scope)

    # --- walking --------------------------------------------------------------------------------------------

    def follow(self, node: ast.Call | ast.Attribute, target: tuple, mod: Module, scope: dict) -> dict | None:
        """Only a call handed the settings (or a property read of them); the callee's parameters given them
        hold them there."""
        if isinstance(node, ast.Attribute):  # a property of the settings: `self` holds them
            return {"settings": {"self"}} if self.holds(node.value, mod, scope) else None
        if not self.handed(node, mod, scope):
            return None
        definition = target[2]
        if isinstance(definition, ast.ClassDef):  # its __post_init__'s `self` is the record being made
            return {"settings": {"self"} if definition in self.classes else set()}
        return {"settings": self.parameters_given(node, definition, mod, scope)}

    def parameters_given(self, call: ast.Call, function: ast.FunctionDef, mod: Module, scope: dict) -> set[str]:
        """The callee's parameters that receive the settings: by position (the receiver is `self` of a method),
        by keyword, else its *args or **kwargs."""
        arguments = function.args
        positional = [a.arg for a in arguments.posonlyargs + arguments.args]
        given = list(call.args)
        if positional and positional[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
            given.insert(0, call.func.value)
        names = set()
        for index, value in enumerate(given):
            if self.holds(value, mod, scope):
                if index < len(positional) and not isinstance(value, ast.Starred):
                    names.add(positional[index])
                elif arguments.vararg is not None:
                    names.add(arguments.vararg.arg)
        keywords = {a.arg for a in arguments.args + arguments.kwonlyargs}
        for keyword in call.keywords:
            if self.holds(keyword.value, mod, scope):
                if keyword.arg in keywords:
                    names.add(keyword.arg)
                elif arguments.kwarg is not None:
                    names.add(arguments.kwarg.arg)
        return names

    def visit(self, node: ast.AST, mod: Module, scope: dict) -> None:
        """As the other walker, and keeps track of the names that hold the settings: an assignment binds its
        names after its value is walked; a loop's or a comprehension's names are bound before its body."""
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            super().visit(node, mod, scope)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = self.type_of(node.value, mod, scope) if isinstance(node.value, ast.IfExp) else None
            for target in targets:
                self.bind_assign(target, node.value, mod, scope)
                if found is not None and isinstance(target, ast.Name):
                    scope["types"][target.id] = found
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.visit(node.iter, mod, scope)
            self.bind_loop(node.target, node.iter, mod, scope)
            for statement in [*node.body, *node.orelse]:
                self.visit(statement, mod, scope)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = {**scope, "settings": set(scope["settings"])}  # its names end with it
            for generator in node.generators:
                self.visit(generator.iter, mod, inner)
                self.bind_loop(generator.target, generator.iter, mod, inner)
                for condition in generator.ifs:
                    self.visit(condition, mod, inner)
            for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
                self.visit(part, mod, inner)
            return
        super().visit(node, mod, scope)


def train_click_static_walk(registry_key: str = "pmap", calls: list[str] | None = None,
                            start: tuple[str, str] = START, root: pathlib.Path = ROOT, **options) -> list[str]:
    """The stops of the Train click's settings, every file recorded; every function entered is appended to
    `calls` when given. `options`: SettingsWalker's (settings, settings_classes)."""
    return walked(SettingsWalker(start, registry_key, root=root, **options), calls)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    click_arguments(parser, START, "pmap")
    parser.add_argument("--settings", default=",".join(SETTINGS),
                        help="the start function's parameters that hold the settings, comma-separated")
    args = parser.parse_args(argv)
    calls: list[str] = []
    module, _, function = args.start.partition(":")
    stops = train_click_static_walk(args.registry_key, calls, (module, function),
                                    settings=tuple(args.settings.split(",")))
    print_click(args, stops, calls)


if __name__ == "__main__":
    main()
