"""Every text key a page asks for is in its table (or the common one) in both languages, and every
key in `labs/texts` is asked for by some page or helper.

The keys are read off the source with `ast`. A page asks for a text as `T("key")` or `T.has("key")`,
through a helper it hands its `T` (`url_int(T, "steps", …)` reads `w.steps`, `show_tracking(T, …)`
the page's `tracking.*`), or with a key made while it runs: an f-string (`T(f"use.{op}")`) or a name
(`T(verdict)`). A name bound to string constants (`verdict = "a" if … else "b"`) is followed, and so
is a helper's parameter, to what the page gives it (a constant, or options such as `models.MODELS`).
Every other part of a key made while a page runs is listed in RANGES with the values it takes, read
from the code that makes them. A key asked for only where `T.has` said it is there (a widget's help,
an option's label, a column's header, an input error's message) may be missing; it still counts as
used.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pathlib
import re
from collections.abc import Callable, Iterable

import pytest

from labs.registry import HOME, LABS, script_path
from labs.texts import ALIAS, BASE_LANGUAGES, COMMON_PREFIX, raw_entries
from labs.texts import pages as text_pages
from labs.texts import table as text_table
from pmap_core.costs import analytic

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = {
    **{lab.script: ROOT / script_path(lab) for lab in [HOME, *LABS]},
    **{f"ui.{path.stem}": path for path in sorted((ROOT / "labs" / "ui").glob("*.py"))},
    "streamlit_app": ROOT / "streamlit_app.py",
}
TEXTS_DIR = ROOT / "labs" / "texts"
COMMON = "common"


@dataclasses.dataclass(frozen=True)
class Hole:
    """A part of a key made while the page runs, as written; `param`: the enclosing function's
    parameter it is (with `each`: the parameter whose items it runs over)."""

    source: str
    param: str | None = None
    each: bool = False


Part = str | Hole
Table = str | Hole | None  # a text table; a hole: `texts(lab.script)`; None: the `T` a function was given


@dataclasses.dataclass(frozen=True)
class Use:
    module: str  # where the key is written: a key of SOURCES
    table: Table
    key: tuple[Part, ...]
    optional: bool  # asked for with `T.has`, or only where `T.has` said it is there


def template(parts: Iterable[Part]) -> str:
    return "".join(p if isinstance(p, str) else "{" + p.source + "}" for p in parts)


# --- what the parts of keys made while a page runs range over -----------------------------------------


def _first_arguments(module: str, callee: str) -> list[str]:
    """The string constants given first to `callee(…)` in the source of a pmap_core module."""
    tree = ast.parse(pathlib.Path(importlib.import_module(module).__file__).read_text())
    return [node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == callee
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def _returned_strings(page: str, function: str) -> list[str]:
    """The string constants a page's `function` returns, on each of its paths."""
    tree = ast.parse(SOURCES[page].read_text())
    defined = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == function)
    returned = [node.value for node in ast.walk(defined) if isinstance(node, ast.Return) and node.value is not None]
    return [constant.value for value in returned for constant in ast.walk(value)
            if isinstance(constant, ast.Constant) and isinstance(constant.value, str)]


def _applications_uses() -> list[str]:
    """What the page's `for use in (…)` runs over."""
    for node in ast.walk(ast.parse(SOURCES["applications"].read_text())):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == "use":
            return ast.literal_eval(node.iter)
    raise LookupError("applications: for use in …")


def _demo_notes() -> list[str]:
    """The note of each tutorial line, as it raised, ran on every device, or ran on fewer."""
    from pmap_core.practice import demo

    return [demo.broken_note(name, 4, demo.Captured({"ran_on_devices": used}, error))[0]
            for name in demo.BROKEN for error in ("ValueError", None) for used in (4, 2)]


class _Ones:
    """A footprint whose every figure is 1."""

    def __getattr__(self, name: str):
        return _Ones() if name == "model_memory" else 1.0


def _sharded_dp_series() -> list[str]:
    from pmap_core.concepts import sharded_dp

    (row,) = sharded_dp.comm_rows([_Ones()])
    return [column for column in row if column not in ("strategy", "D")]


def _footprint_figures() -> list[str]:
    from pmap_core.train.footprint import Footprint

    return list(Footprint.ratios(_Ones()))


# (where the key is written, the key as written) -> its part's values: an expression in the names of that
# module (its pmap_core and registry imports, its constants), or a function.
RANGES: dict[tuple[str, str], str | Callable[[], Iterable[str]]] = {
    ("streamlit_app", "texts({lab.script})"): lambda: [lab.script for lab in [HOME, *LABS]],
    ("streamlit_app", "{lab.section}"): lambda: [lab.section for lab in [HOME, *LABS]],
    ("home", "texts({lab.script})"): lambda: [lab.script for lab in LABS],
    ("worksheet", "texts({step.lab})"): lambda: [lab.script for lab in LABS],
    ("worksheet", "error.{error.code}"): lambda: _first_arguments("pmap_core.practice.scoring", "LabInputError"),
    ("activation_memory", "policy.{remat}"): "am.POLICIES",
    ("activation_memory", "term.{key}.name"): "TERM_KEYS",
    ("activation_memory", "term.{key}.note"): "TERM_KEYS",
    ("activation_memory", "variant.{key}"): "VARIANT_KEYS",
    ("activation_memory", "split.{name}"): "seqpar.COMPARED",
    ("applications", "use.{use}.title"): _applications_uses,
    ("applications", "use.{use}.body"): _applications_uses,
    ("applications", "w.zero.{zero}"): "cm.ZERO_SHARDED",
    ("applications", "source.{key}"): lambda: [*analytic.MODELS, *analytic.LINKS, *analytic.ACCELERATORS],
    ("collectives", "use.{op}"): "collectives.OPS",
    ("comm_benchmark", "w.op.{op}"): "commbench.OPS",
    ("demo", "step.{name}.title"): "demo.STEP_FUNCTIONS",
    ("demo", "step.{name}.body"): "demo.STEP_FUNCTIONS",
    ("demo", "broken.{name}.title"): "demo.BROKEN",
    ("demo", "broken.{name}.fix"): "demo.BROKEN",
    ("demo", "{note}"): _demo_notes,
    ("experiments", "axis.{which}"): "THROUGHPUTS",
    ("experiments", "scaling.{which}"): "THROUGHPUTS",
    ("experiments", "col.{metric}"): "THROUGHPUTS",
    ("interview", "w.question.{chosen}"): "quiz.question_ids()",
    ("class_view", "w.question.{question_id}"): "quiz.question_ids()",
    ("interview", "q.{chosen}.text"): "quiz.question_ids()",
    ("interview", "q.{chosen}.explain"): "quiz.question_ids()",
    ("migration", "way.{way.impl}"): "migration.IMPLS",
    ("ui.multiprocess_lost", "{lost_verdict(run['said'])}"): lambda: _returned_strings("ui.multiprocess_lost",
                                                                                          "lost_verdict"),
    ("migration", "change.{c.topic}"): lambda: _first_arguments("pmap_core.concepts.migration", "Change"),
    ("migration", "role.{a.role}"): lambda: _first_arguments("pmap_core.concepts.migration", "_infos"),
    ("migration", "step.{run.name}.title"): "migration_steps.STEP_NAMES",
    ("migration", "step.{run.name}.body"): "migration_steps.STEP_NAMES",
    ("migration", "step.{run.name}.release"): "migration_steps.STEP_NAMES",
    ("mistakes", "w.entry.{chosen}"): "pitfalls.pitfall_ids()",
    ("mistakes", "entry.{chosen}.what"): "pitfalls.pitfall_ids()",
    ("mistakes", "entry.{chosen}.why"): "pitfalls.pitfall_ids()",
    ("mistakes", "entry.{chosen}.fix"): "pitfalls.pitfall_ids()",
    ("mistakes", "entry.{chosen}.one_device"): "pitfall_entries.NEEDS_TWO_DEVICES",
    ("mistakes", "kind.{pitfall_entries.kind_here(chosen)}"): "pitfalls.KINDS",
    ("mistakes", "kind.{result.kind_shown}"): "pitfalls.KINDS",
    ("ui.plan_predict", "unit.{reveal.quantity}"): "pv.QUANTITIES",
    ("plan", "w.guess.{quantity}"): "pv.QUANTITIES",
    ("sharded_dp", "kind.{k}"): "zero_compare.KINDS",
    ("sharded_dp", "w.strategy.{cfg.strategy}"): "train_config.STRATEGIES",
    ("sharded_dp", "series.{s}"): _sharded_dp_series,
    ("sharded_dp", "ratio.{worst[1]}"): _footprint_figures,
    ("training", "w.scaling.{scaling.mode}"): "train_config.SCALING_MODES",
    ("training", "w.scaling.{sweep.mode}"): "train_config.SCALING_MODES",
    ("training", "scaling.explain.{scaling.mode}"): "train_config.SCALING_MODES",
    ("training", "w.model.{cfg.model}"): "models.MODELS",
}


# --- reading the source ---------------------------------------------------------------------------------


def _scopes(tree: ast.Module) -> dict[str, ast.AST]:
    """The module's own code (its top level without the functions), and each function and method
    with the functions and lambdas inside it."""
    top = [node for node in tree.body if not isinstance(node, ast.FunctionDef | ast.ClassDef)]
    scopes: dict[str, ast.AST] = {"": ast.Module(body=top, type_ignores=[])}
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        scopes |= {fn.name: fn for fn in members if isinstance(fn, ast.FunctionDef)}
    return scopes


def _params(scope: ast.AST) -> list[str]:
    if not isinstance(scope, ast.FunctionDef):
        return []
    return [a.arg for a in [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs] if a.arg != "self"]


def _assigned(scope: ast.AST, name: str) -> list[ast.expr]:
    return [node.value for node in ast.walk(scope) if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]


def _constants(expr: ast.expr) -> list[str] | None:
    """The strings an expression of string constants and conditionals can be, or None."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.IfExp):
        body, orelse = _constants(expr.body), _constants(expr.orelse)
        return None if body is None or orelse is None else body + orelse
    return None


def _is_texts_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "texts"


class Module:
    """One source file: the texts each of its scopes asks for, and the functions each calls."""

    def __init__(self, name: str):
        self.name = name
        self.tree = ast.parse(SOURCES[name].read_text())
        self.scopes = _scopes(self.tree)
        self._names: dict | None = None
        self.imported: dict[str, tuple[str, str | None]] = {}  # local name -> (module, its function or None)
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labs.ui"):
                for alias in node.names:
                    imported = (f"ui.{alias.name}", None) if node.module == "labs.ui" else (
                        node.module.removeprefix("labs."), alias.name)
                    self.imported[alias.asname or alias.name] = imported

    def names(self) -> dict[str, ast.expr | tuple[str, str | None]]:
        """The module's imports from pmap_core and the registry ((module, attribute or None)), and its
        top-level constants (the expression assigned): nothing that draws, nothing run."""
        if self._names is None:
            self._names = {}
            for node in self.tree.body:
                if isinstance(node, ast.ImportFrom) and node.module.startswith(("pmap_core", "labs.registry")):
                    self._names |= {alias.asname or alias.name: (node.module, alias.name) for alias in node.names}
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self._names[node.targets[0].id] = node.value
        return self._names

    def resolve(self, expr: ast.expr, depth: int = 0) -> object:
        """What an expression of the module's imports and constants holds: a literal, a name, an attribute
        of one, or a call of one without arguments; LookupError for anything made while the page runs."""
        if depth > 8:
            raise LookupError(ast.unparse(expr))
        if isinstance(expr, ast.Name):
            bound = self.names().get(expr.id)
            if isinstance(bound, tuple):
                module, attribute = bound
                try:
                    return importlib.import_module(f"{module}.{attribute}")
                except ImportError:
                    return getattr(importlib.import_module(module), attribute)
            if isinstance(bound, ast.expr):
                return self.resolve(bound, depth + 1)
            raise LookupError(expr.id)
        if isinstance(expr, ast.Attribute):
            try:
                return getattr(self.resolve(expr.value, depth + 1), expr.attr)
            except AttributeError as error:
                raise LookupError(ast.unparse(expr)) from error
        if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
            return self.resolve(expr.func, depth + 1)()
        try:
            return ast.literal_eval(expr)
        except ValueError as error:
            raise LookupError(ast.unparse(expr)) from error

    def values(self, expr: ast.expr | str) -> list[str] | None:
        """What an expression in the module's names holds, or None when it is made while the page runs."""
        try:
            held = self.resolve(ast.parse(expr, mode="eval").body if isinstance(expr, str) else expr)
            return [str(value) for value in held]
        except (LookupError, TypeError):
            return None

    def table(self, scope: ast.AST, expr: ast.expr) -> tuple[bool, Table]:
        """(whether `expr` is a page's texts, and which table)."""
        if isinstance(expr, ast.Attribute) and expr.attr == "T":  # self.T: what the object was given
            return True, None
        if _is_texts_call(expr):
            arg = expr.args[0]
            return True, arg.value if isinstance(arg, ast.Constant) else Hole(f"texts({{{ast.unparse(arg)}}})")
        if not isinstance(expr, ast.Name):
            return False, None
        if expr.id in _params(scope):
            return expr.id == "T", None
        for where in (scope, self.scopes[""]):
            for value in _assigned(where, expr.id):
                for call in filter(_is_texts_call, ast.walk(value)):
                    return self.table(scope, call)
        return False, None

    def keys(self, scope: ast.AST, expr: ast.expr) -> list[tuple[Part, ...]]:
        """The keys `expr` can be, in parts."""
        params = _params(scope)

        def hole(node: ast.expr) -> Hole:
            if isinstance(node, ast.Name) and node.id in params:
                return Hole(node.id, node.id)
            for loop in ast.walk(scope):  # `for option in options`, options a parameter
                if (isinstance(loop, ast.comprehension | ast.For) and isinstance(node, ast.Name)
                        and isinstance(loop.target, ast.Name) and loop.target.id == node.id
                        and isinstance(loop.iter, ast.Name) and loop.iter.id in params):
                    return Hole(node.id, loop.iter.id, each=True)
            return Hole(ast.unparse(node))

        if _constants(expr) is not None:
            return [(constant,) for constant in _constants(expr)]
        if isinstance(expr, ast.JoinedStr):
            return [tuple(v.value if isinstance(v, ast.Constant) else hole(v.value) for v in expr.values)]
        if isinstance(expr, ast.Name) and expr.id not in params:
            values = _assigned(scope, expr.id)
            if values and all(_constants(v) is not None for v in values):
                return [(constant,) for v in values for constant in _constants(v)]
            if len(values) == 1 and isinstance(values[0], ast.JoinedStr):
                return self.keys(scope, values[0])
        return [(hole(expr),)]

    def uses(self, scope_name: str) -> list[Use]:
        """The texts the scope asks for itself."""
        scope = self.scopes[scope_name]
        asked, guarded = [], set()
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func, has = node.func, False
            if isinstance(func, ast.Attribute) and func.attr == "has":
                func, has = func.value, True
            is_texts, table = self.table(scope, func)
            if is_texts:
                asked.append((table, node.args[0], has))
                if has:
                    guarded.add(ast.dump(node.args[0]))
        return [Use(self.name, table, key, has or ast.dump(arg) in guarded)
                for table, arg, has in asked for key in self.keys(scope, arg)]

    def calls(self, scope_name: str) -> list[tuple[tuple[str, str], dict[str, ast.expr]]]:
        """The functions of SOURCES the scope calls, each with what the call gives its parameters."""
        found = []
        for node in ast.walk(self.scopes[scope_name]):
            if not isinstance(node, ast.Call):
                continue
            callee = None
            if isinstance(node.func, ast.Name) and node.func.id in self.scopes:
                callee = (self.name, node.func.id)
            elif isinstance(node.func, ast.Name) and self.imported.get(node.func.id, (None, None))[1]:
                callee = self.imported[node.func.id]
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                module, function = self.imported.get(node.func.value.id, (None, "-"))
                callee = (module, node.func.attr) if function is None else None
            if callee is None or callee[1] not in MODULES[callee[0]].scopes:
                continue
            params = _params(MODULES[callee[0]].scopes[callee[1]])
            given = dict(zip(params, node.args, strict=False))
            given |= {k.arg: k.value for k in node.keywords if k.arg in params}
            found.append((callee, given))
        return found


MODULES = {name: Module(name) for name in SOURCES}


def _bind(use: Use, caller: Module, scope: ast.AST, given: dict[str, ast.expr]) -> list[Use]:
    """A use inside a called function, as a call makes it. A parameter given something made while
    the page runs stays a hole, named as the called function names it."""
    table = caller.table(scope, given["T"])[1] if use.table is None and "T" in given else use.table
    keys: list[tuple[Part, ...]] = [()]
    for part in use.key:
        choices: list[tuple[Part, ...]] = [(part,)]
        if isinstance(part, Hole) and part.param is not None:
            if part.param not in given:
                choices = [(Hole(part.source),)]
            elif part.each:
                values = caller.values(given[part.param])
                choices = [(value,) for value in values] if values is not None else [(Hole(part.source),)]
            else:
                choices = caller.keys(scope, given[part.param])
                if choices == [(Hole(ast.unparse(given[part.param])),)]:
                    choices = [(Hole(part.source),)]
        keys = [key + choice for key in keys for choice in choices]
    return [Use(use.module, table, key, use.optional) for key in keys]


def all_uses() -> set[Use]:
    """Every use whose table is known: asked for in a scope, or in a function it calls (at any depth),
    with the function's parameters bound as the call binds them."""
    done: dict[tuple[str, str], list[Use]] = {}

    def uses_in(module: str, scope_name: str) -> list[Use]:
        if (module, scope_name) not in done:
            done[(module, scope_name)] = []  # a recursive call adds nothing
            source = MODULES[module]
            found = source.uses(scope_name)
            for callee, given in source.calls(scope_name):
                for use in uses_in(*callee):
                    found += _bind(use, source, source.scopes[scope_name], given)
            done[(module, scope_name)] = found
        return done[(module, scope_name)]

    return {use for module in MODULES for scope in MODULES[module].scopes for use in uses_in(module, scope)
            if use.table is not None and not any(isinstance(p, Hole) and p.param for p in use.key)}


USES = sorted(all_uses(), key=lambda u: (u.module, str(u.table), template(u.key)))


def _range(module: str, written: str) -> list[str]:
    values = RANGES[(module, written)]
    return list(values()) if callable(values) else MODULES[module].values(values)


def tables_of(use: Use) -> list[str]:
    return _range(use.module, use.table.source) if isinstance(use.table, Hole) else [use.table]


def keys_of(use: Use) -> tuple[list[str], re.Pattern | None]:
    """The keys a use asks for, or (for a part made while the page runs that RANGES does not list) a
    pattern of them."""
    holes = [p for p in use.key if isinstance(p, Hole)]
    if not holes:
        return [template(use.key)], None
    if len(holes) == 1 and (use.module, template(use.key)) in RANGES:
        values = _range(use.module, template(use.key))
        return [template(p if isinstance(p, str) else value for p in use.key) for value in values], None
    return [], re.compile("".join(re.escape(p) if isinstance(p, str) else ".+" for p in use.key))


def table(name: str) -> dict[str, dict[str, str]]:
    return text_table(name)


# --- the tests -----------------------------------------------------------------------------------------


def test_the_reading_finds_each_way_a_page_asks_for_a_text():
    found = {(u.module, u.table, template(u.key)) for u in USES}
    assert ("training", "training", "title") in found
    assert ("ui.tracking", "training", "tracking.fell_back") in found  # show_tracking(T, …)
    assert ("ui.links", "training", "w.steps") in found  # url_int(T, "steps", …)
    assert ("ui.links", "sharded_dp", "w.devices") in found  # url_devices(T, …), then url_int(T, "devices", …)
    assert ("ui.links", "training", "w.model.mlp") in found  # url_choice(T, "model", models.MODELS, …)
    assert ("training", "training", "progress.steps") in found  # a parameter given a constant
    assert ("applications", "applications", "does_not_fit_sharded") in found  # a name bound to constants
    assert ("ui.hardware", COMMON, "runtime.title") in found  # a helper given the common texts
    assert ("ui.links", "worksheet", "w.step") in found  # url_choice(T, "step", …, labels=…)
    assert ("streamlit_app", Hole("texts({lab.script})"), "title") in found  # every lab's title


def test_every_part_of_a_key_made_while_a_page_runs_has_its_range():
    made = {(u.module, template(u.key)) for u in USES if not u.optional and keys_of(u)[1] is not None}
    tables = {(u.module, u.table.source) for u in USES if isinstance(u.table, Hole)}
    missing = sorted(made | (tables - set(RANGES)))
    assert not missing, f"add to RANGES what these range over: {missing}"
    assert set(RANGES) <= {(u.module, template(u.key)) for u in USES} | tables, "RANGES lists a key no page makes"
    empty = [written for written in RANGES if not _range(*written)]
    assert not empty, f"RANGES finds no values for {empty}"


def test_every_key_a_page_asks_for_is_there_in_both_languages():
    missing = []
    for use in USES:
        for page in [] if use.optional else tables_of(use):
            for key in keys_of(use)[0]:
                entry = table(page).get(key) or table(COMMON).get(key)
                if entry is None or not all((entry.get(lang) or "").strip() for lang in BASE_LANGUAGES):
                    missing.append(f"{page}: {key} (asked for in {use.module})")
    assert not missing, missing


@pytest.mark.parametrize("name", text_pages())
def test_every_key_in_the_texts_is_asked_for(name):
    """A page's table: what that page asks for, itself or through a helper. The common table: what
    any page or helper asks for."""
    entries = text_table(name)
    by_table: dict[str, list[Use]] = {}
    for use in USES:
        for page in tables_of(use):
            by_table.setdefault(page, []).append(use)
    if name == COMMON:
        uses = USES
    else:
        pages = [name] if name in by_table else []
        assert pages, f"labs/texts/{name}.toml is read by no page"
        uses = [use for page in pages for use in by_table[page]]
    asked = {key for use in uses for key in keys_of(use)[0]}
    if name == COMMON:  # a page's `same_as = "common:key"` asks for that key
        asked |= {entry[ALIAS].removeprefix(COMMON_PREFIX) for page in text_pages()
                  for entry in raw_entries(page).values() if entry.get(ALIAS, "").startswith(COMMON_PREFIX)}
    patterns = [pattern for use in uses if (pattern := keys_of(use)[1]) is not None]
    unused = sorted(key for key in entries if key not in asked and not any(p.fullmatch(key) for p in patterns))
    assert not unused, f"labs/texts/{name}.toml: keys nothing asks for: {unused}"
