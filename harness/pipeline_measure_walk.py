"""The path of the pipeline page's Measure click through the code, as a reader following it would walk it.

Static: reads the source with `ast`, starts at `labs/pipeline.py:run_measure` and follows every call it
can resolve (module functions, methods of classes whose type is written down: a parameter's annotation,
a dataclass field's, `self`, a constructor's or a function's return annotation; properties count as calls)
into `pmap_core` and the page, depth first, in source order, each loop body once, every call walked again
wherever it is made (a cache does not spare the reader the call); a call through a registry dict follows
its "pipeline" entry, the page's program (an entry built by a call, `Program("pipeline", build, ...)`, is
followed into its `build`). Calls into JAX, NumPy or `labs/ui`, and callbacks passed as arguments, are not
followed.

Each function entered in a recorded file is a stop in that file, and before it, coming back to the nearest
recorded caller (the reader returns there to follow the next call). Consecutive stops in one file are one.
Printed: the walk, how often each file is entered, and how many times the walk comes back to a file it had
left. Recorded: the pipeline's own files (the
page, `concepts/pipeline*`, `train/pipeline*`, `train/schedule*`); `--scope core` records every file.

    python -m benchmarks.pipeline_measure_walk [--scope pipeline|core] [--quiet]

The same walker follows another click from its page's function: `--start labs.training:run_training
--registry-key pmap` walks the training page's Train click (the "pmap" entry of the registry).
`harness.train_click_static_walk` walks that click following only the calls handed its settings: a subclass
of `Walker` that answers `follow` otherwise, with the same resolving and counting.
"""

from __future__ import annotations

import argparse
import ast
import pathlib

from harness.walks import click_arguments, print_click, source_modules, walked

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("pmap_core", "labs")
START = ("labs.pipeline", "run_measure")
REGISTRY_KEY = "pipeline"  # a call through a registry dict (`PROGRAMS[spec.impl](spec)`) follows this entry
PIPELINE_FILES = ("labs/pipeline.py", "pmap_core/concepts/pipeline", "pmap_core/train/pipeline",
                  "pmap_core/train/schedule")


class Module:
    """One source file: its top-level functions and classes, and the names it imports."""

    def __init__(self, name: str, path: pathlib.Path, registry_key: str = REGISTRY_KEY, root: pathlib.Path = ROOT):
        self.name, self.path = name, path
        self.file = path.relative_to(root).as_posix()
        self.tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.defs: dict[str, ast.AST] = {}
        self.imports: dict[str, tuple[str, str | None]] = {}  # alias -> (module, attribute or None)
        self.registries: dict[str, ast.AST] = {}  # NAME = {"pipeline": f, ...}: its "pipeline" entry
        self.built: dict[str, ast.Call] = {}  # NAME = Program(...): a registry entry made by a call
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.defs[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == registry_key:
                        self.registries.update({t.id: value for t in targets if isinstance(t, ast.Name)})
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                self.built.update({t.id: node.value for t in node.targets if isinstance(t, ast.Name)})
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (source, alias.name)


class Walker:
    """Walks a click from its start function, following every call it can resolve. Which calls it follows is
    `follow` (a subclass may follow fewer); the resolving and the counting of stops are the same for all."""

    def __init__(self, scope: str, start: tuple[str, str] = START, registry_key: str = REGISTRY_KEY,
                 root: pathlib.Path = ROOT):
        self.modules = {name: Module(name, path, registry_key, root)
                        for name, path in source_modules(root, PACKAGES).items()}
        self.scope, self.start = scope, start
        self.stops: list[str] = []
        self.stack: list[ast.AST] = []
        self.files: list[Module] = []  # the module of each function on the stack
        self.entered: list[str] = []  # every function entered, as file:name, indented by depth

    # --- resolving names ------------------------------------------------------------------------------

    def lookup(self, module: str, name: str, depth: int = 0):
        """What `name` means in `module`: ("module", Module), ("def", Module, node) or None."""
        if module in self.modules and not self.followed(self.modules[module]):
            return None
        if depth > 10 or module not in self.modules:
            return ("module", self.modules[f"{module}.{name}"]) if f"{module}.{name}" in self.modules else None
        mod = self.modules[module]
        if name in mod.defs:
            return ("def", mod, mod.defs[name])
        if name in mod.imports:
            source, attribute = mod.imports[name]
            if attribute is None:
                return ("module", self.modules[source]) if source in self.modules else None
            if f"{source}.{attribute}" in self.modules:
                return ("module", self.modules[f"{source}.{attribute}"])
            return self.lookup(source, attribute, depth + 1)
        if f"{module}.{name}" in self.modules:
            return ("module", self.modules[f"{module}.{name}"])
        return None

    def resolve(self, node: ast.AST, mod: Module, scope: dict):
        """What an expression names: a module, a def (function or class), or None."""
        if isinstance(node, ast.Name):
            if node.id in scope.get("nested", {}):
                return ("def", mod, scope["nested"][node.id])
            if node.id in scope.get("types", {}) or node.id in scope.get("locals", ()):
                return None
            return self.lookup(mod.name, node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value, mod, scope)
            if base is not None and base[0] == "module":
                return self.lookup(base[1].name, node.attr)
            if base is not None and isinstance(base[2], ast.ClassDef):
                return self.member(base[1], base[2], node.attr)
        return None

    def entry_member(self, entry: ast.AST, mod: Module, name: str):
        """`name` of a registry entry made by a call (`PROGRAM = Program("pipeline", build, ...)`): the
        argument of that name, or the positional one in the fields' order (name, build, ...)."""
        where = mod
        if isinstance(entry, ast.Attribute):
            base = self.resolve(entry.value, mod, {})
            if base is None or base[0] != "module":
                return None
            where, entry = base[1], ast.Name(entry.attr)
        made = where.built.get(entry.id) if isinstance(entry, ast.Name) else None
        if made is None:
            return None
        value = next((k.value for k in made.keywords if k.arg == name), None)
        if value is None and name == "build" and len(made.args) > 1:
            value = made.args[1]
        return self.resolve(value, where, {}) if value is not None else None

    def member(self, mod: Module, cls: ast.ClassDef, name: str):
        for node in cls.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return ("def", mod, node)
        return None

    def annotation_type(self, annotation: ast.AST | None, mod: Module, scope: dict):
        """The class an annotation names (the first one of `A | None`), or None."""
        annotation = annotation_node(annotation)
        if annotation is None:
            return None
        if isinstance(annotation, ast.BinOp):
            return (self.annotation_type(annotation.left, mod, scope)
                    or self.annotation_type(annotation.right, mod, scope))
        if isinstance(annotation, ast.Subscript):  # tuple[X, ...], list[X]: not a class we follow
            return None
        found = self.resolve(annotation, mod, {})
        return found if found is not None and isinstance(found[2], ast.ClassDef) else None

    def type_of(self, node: ast.AST, mod: Module, scope: dict):
        """(module, class) of an expression's value where the source says it, else None."""
        if isinstance(node, ast.Name):
            if node.id in scope.get("types", {}):
                return scope["types"][node.id]
            return None
        if isinstance(node, ast.Attribute):
            owner = self.type_of(node.value, mod, scope)
            if owner is None:
                return None
            owner_mod, cls = owner[1], owner[2]
            for item in cls.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and \
                        item.target.id == node.attr:
                    return self.annotation_type(item.annotation, owner_mod, {})
                if isinstance(item, ast.FunctionDef) and item.name == node.attr and _is_property(item):
                    return self.annotation_type(item.returns, owner_mod, {})
            return None
        if isinstance(node, ast.Call):
            target = self.callee(node, mod, scope)
            if target is None:
                return None
            target_mod, definition = target[1], target[2]
            if isinstance(definition, ast.ClassDef):
                return target
            returns = self.annotation_type(definition.returns, target_mod, {})
            if returns is None and isinstance(definition.returns, ast.Name) and definition.returns.id in (
                    "cls", "Self"):
                return None
            return returns
        return None

    def callee(self, call: ast.Call, mod: Module, scope: dict):
        func = call.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in mod.registries:
            return self.resolve(mod.registries[func.value.id], mod, {})
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Subscript) and \
                isinstance(func.value.value, ast.Name) and func.value.value.id in mod.registries:
            return self.entry_member(mod.registries[func.value.value.id], mod, func.attr)
        if isinstance(func, ast.Attribute):
            owner = self.type_of(func.value, mod, scope)
            if owner is not None:
                return self.member(owner[1], owner[2], func.attr)
        return self.resolve(func, mod, scope)

    # --- walking ----------------------------------------------------------------------------------------

    def follow(self, node: ast.Call | ast.Attribute, target: tuple, mod: Module, scope: dict) -> dict | None:
        """Whether to walk into `target`, called (or read, a property) by `node` in `mod`: None not to, else
        what the callee's scope starts with. This walker follows every call it resolves."""
        return {}

    def first_scope(self) -> dict:
        """What the start function's scope starts with."""
        return {}

    def followed(self, mod: Module) -> bool:
        return mod.file.startswith(("pmap_core/", "labs/pipeline.py")) or mod.name == self.start[0]

    def recorded(self, mod: Module) -> bool:
        return self.scope == "core" or mod.file.startswith(PIPELINE_FILES)

    def stop(self, mod: Module) -> None:
        if self.recorded(mod) and (not self.stops or self.stops[-1] != mod.file):
            self.stops.append(mod.file)

    def enter(self, mod: Module, definition: ast.AST, owner: tuple | None = None, given: dict | None = None) -> None:
        if isinstance(definition, ast.ClassDef):  # a constructor: its __post_init__, if any
            post = self.member(mod, definition, "__post_init__")
            if post is None:
                return
            definition, owner = post[2], ("def", mod, definition)
        if definition in self.stack:
            return
        if self.recorded(mod):  # back in the nearest recorded caller first, then into this file
            caller = next((m for m in reversed(self.files) if self.recorded(m)), None)
            if caller is not None:
                self.stop(caller)
            self.stop(mod)
        self.entered.append(f"{'  ' * len(self.stack)}{mod.file}:{definition.name}")
        self.stack.append(definition)
        self.files.append(mod)
        scope = {**self.scope_of(definition, mod, owner), **(given or {})}
        for statement in definition.body:
            self.visit(statement, mod, scope)
        self.stack.pop()
        self.files.pop()

    def scope_of(self, function: ast.FunctionDef, mod: Module, owner: tuple | None) -> dict:
        types, nested = {}, {}
        arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
        for index, argument in enumerate(arguments):
            if index == 0 and owner is not None and argument.arg in ("self", "cls"):
                types[argument.arg] = owner
                continue
            found = self.annotation_type(argument.annotation, mod, {})
            if found is not None:
                types[argument.arg] = found
        for node in ast.walk(function):
            if isinstance(node, ast.FunctionDef) and node is not function:
                nested[node.name] = node
        return {"types": types, "nested": nested, "locals": set()}

    def visit(self, node: ast.AST, mod: Module, scope: dict) -> None:
        """Walk one statement or expression: its calls in the order they run (arguments first)."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # walked when called
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            self.visit(node.value, mod, scope)
            found = self.type_of(node.value, mod, scope)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if found is not None:
                        scope["types"][target.id] = found
                    else:
                        scope["types"].pop(target.id, None)
                        scope["locals"].add(target.id)
            return
        if isinstance(node, ast.Call):
            for child in [*node.args, *(k.value for k in node.keywords)]:
                self.visit(child, mod, scope)
            if isinstance(node.func, ast.Attribute):
                self.visit(node.func.value, mod, scope)
            target = self.callee(node, mod, scope)
            given = self.follow(node, target, mod, scope) if target is not None and target[0] == "def" else None
            if given is not None:
                owner = None
                if isinstance(node.func, ast.Attribute):
                    owner = self.type_of(node.func.value, mod, scope) or self.class_of(target)
                elif not isinstance(target[2], ast.ClassDef):
                    owner = self.class_of(target)
                self.enter(target[1], target[2], owner, given)
            return
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self.visit(node.value, mod, scope)
            owner = self.type_of(node.value, mod, scope)
            if owner is not None:
                prop = self.member(owner[1], owner[2], node.attr)
                given = self.follow(node, prop, mod, scope) if prop is not None and _is_property(prop[2]) else None
                if given is not None:
                    self.enter(prop[1], prop[2], owner, given)
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child, mod, scope)

    def class_of(self, target: tuple):
        """The class a method is defined in, as a type (for `self`)."""
        mod, definition = target[1], target[2]
        for node in mod.tree.body:
            if isinstance(node, ast.ClassDef) and definition in node.body:
                return ("def", mod, node)
        return None

    def walk(self) -> list[str]:
        module, name = self.start
        mod = self.modules[module]
        self.enter(mod, mod.defs[name], given=self.first_scope())
        return self.stops


def annotation_node(annotation: ast.AST | None) -> ast.AST | None:
    """An annotation as an expression: a string one (`"ProgramSpec"`) parsed; None where there is none or it
    does not parse."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    return annotation


def _is_property(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
        or (isinstance(d, ast.Attribute) and d.attr in ("property", "cached_property"))
        for d in node.decorator_list)


def measure_click_walk(scope: str = "pipeline", calls: list[str] | None = None, start: tuple[str, str] = START,
                       registry_key: str = REGISTRY_KEY) -> list[str]:
    """The stops of the Measure click's calls (`scope` "pipeline": the pipeline's own files; "core": all);
    every function entered is appended to `calls` when given. `start` (module, function) and `registry_key`
    walk another click the same way."""
    return walked(Walker(scope, start, registry_key), calls)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scope", choices=("pipeline", "core"), default="pipeline")
    click_arguments(parser, START, REGISTRY_KEY)
    args = parser.parse_args(argv)
    calls: list[str] = []
    module, _, function = args.start.partition(":")
    stops = measure_click_walk(args.scope, calls, (module, function), args.registry_key)
    print_click(args, stops, calls)

if __name__ == "__main__":
    main()
