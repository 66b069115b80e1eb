"""Exercise sheets: steps whose answers are computed by running pmap_core, never typed in.

A sheet is a TOML file in `worksheets/` (both languages in it). Each step names a lab and the
settings that open it, a question, the kind of answer, hints, and the function whose result is the
answer: a dotted name from `ALLOWED` (a fixed table, so a data file can never import anything else),
its arguments, and the path to the value in what it returns (`["after", 2, 0]` reads
`result.after[2][0]`; `-1` is the last). Open steps take the student's own sweep as the argument `"$sweep"`.

A step that runs on devices says how many it wants with `devices = { at_most = 4 }` (and
`divides = 8` when its data must split evenly): on a runtime of D devices it uses the largest
d <= min(at_most, D) that divides that number, so every step runs at every D, 1 included. Its
settings and args name that count `"$devices"` (and the squarest 2-D mesh of d devices `"$mesh"`),
so the lab its link opens shows the same numbers; its texts name them `{devices}`, `{last}` (d − 1,
the last device), `{mesh}`, `{mesh_x}` and `{mesh_y}`, and the explanation also `{answer}`.
`Step.at(D)` gives the step for a runtime of D devices. Placeholders are checked when a sheet
loads (a literal brace is written `{{` or `}}`), and one broken sheet never hides the others.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pathlib
import re
import string
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from pmap_core.practice import scoring
from pmap_core.practice.scoring import CHOICE, KINDS, NUMBER, SHAPE, format_shape
from pmap_core.practice.scoring import MAX_PREDICTION_CHARS as MAX_PREDICTION_CHARS
from pmap_core.practice.scoring import parse_shape as parse_shape
from pmap_core.validation import LabInputError

WORKSHEETS_DIR = pathlib.Path(__file__).resolve().parents[2] / "worksheets"
LANGS = ("en", "zh")
SWEEP_ARG = "$sweep"  # replaced by the student's latest sweep (MeasuredSweep)
# What a step with a device rule may name: "$name" in its settings and args, {name} in its texts.
DEVICE_VALUES = ("devices", "last", "mesh", "mesh_x", "mesh_y")
ANSWER = "answer"  # the explanation's placeholder for the computed answer
_ID = re.compile(r"[a-z0-9_]{1,40}")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")

# The functions a sheet may name, and where each lives. Nothing outside this table is ever imported.
ALLOWED = {
    "pmap_core.concepts.sharding.plan_shards": ("pmap_core.concepts.sharding", "plan_shards"),
    "pmap_core.concepts.sharding.map_leading_axis": ("pmap_core.concepts.sharding", "map_leading_axis"),
    "pmap_core.concepts.collectives.run_collective": ("pmap_core.concepts.collectives", "run_collective"),
    "pmap_core.concepts.jit_composition.compare_compiled": ("pmap_core.concepts.jit_composition", "compare_compiled"),
    "pmap_core.concepts.gradients.count_all_reduces": ("pmap_core.concepts.gradients", "count_all_reduces"),
    "pmap_core.concepts.mesh_view.place": ("pmap_core.concepts.mesh_view", "place"),
    "pmap_core.concepts.mesh_2d_view.shape_program": ("pmap_core.concepts.mesh_2d_view", "shape_program"),
    "pmap_core.concepts.mesh_2d.scaling_book_rows": ("pmap_core.concepts.mesh_2d", "scaling_book_rows"),
    "pmap_core.concepts.sharding_in_types.ambiguous_dot": ("pmap_core.concepts.sharding_in_types", "ambiguous_dot"),
    "pmap_core.concepts.sharding_in_types.reduced_accumulation": (
        "pmap_core.concepts.sharding_in_types", "reduced_accumulation"),
    "pmap_core.costs.analytic.ring_bytes_sent_per_device": ("pmap_core.costs.analytic", "ring_bytes_sent_per_device"),
    "pmap_core.costs.analytic.zero_memory_per_device": ("pmap_core.costs.analytic", "zero_memory_per_device"),
    "pmap_core.concepts.migration.gradient_forms": ("pmap_core.concepts.migration", "gradient_forms"),
    "pmap_core.concepts.migration.out_specs_check": ("pmap_core.concepts.migration", "out_specs_check"),
    "pmap_core.concepts.migration.run_three_ways": ("pmap_core.concepts.migration", "run_three_ways"),
    "pmap_core.concepts.migration.jit_shardings": ("pmap_core.concepts.migration", "jit_shardings"),
    "pmap_core.concepts.sharded_dp.formula_bytes_per_param": (
        "pmap_core.concepts.sharded_dp", "formula_bytes_per_param"),
    "pmap_core.concepts.sharded_dp.measure_point": ("pmap_core.concepts.sharded_dp", "measure_point"),
    "pmap_core.concepts.multiprocess.group_loading": ("pmap_core.concepts.multiprocess", "group_loading"),
    "pmap_core.costs.analytic.zero_comm_bytes_per_step": ("pmap_core.costs.analytic", "zero_comm_bytes_per_step"),
    "pmap_core.practice.quiz.registry.answer": ("pmap_core.practice.quiz.registry", "answer"),
    "pmap_core.train.pipeline.schedule_summary": ("pmap_core.train.pipeline", "schedule_summary"),
    "pmap_core.train.pipeline.compiled_peaks": ("pmap_core.train.pipeline", "compiled_peaks"),
    "pmap_core.concepts.activation_memory.predict": ("pmap_core.concepts.activation_memory", "predict"),
    "pmap_core.concepts.activation_memory.fewest_saved": ("pmap_core.concepts.activation_memory", "fewest_saved"),
    "pmap_core.concepts.activation_memory.saved_bytes": ("pmap_core.concepts.activation_memory", "saved_bytes"),
    "pmap_core.concepts.activation_memory.score_growth": ("pmap_core.concepts.activation_memory", "score_growth"),
    "pmap_core.concepts.activation_memory.fitted": ("pmap_core.concepts.activation_memory", "fitted"),
    "pmap_core.concepts.activation_memory.recompute_share": (
        "pmap_core.concepts.activation_memory", "recompute_share"),
    "pmap_core.concepts.context.ring_schedule": ("pmap_core.concepts.context", "ring_schedule"),
    "pmap_core.concepts.context.work_per_device": ("pmap_core.concepts.context", "work_per_device"),
    "pmap_core.concepts.context.work_ratio": ("pmap_core.concepts.context", "work_ratio"),
    "pmap_core.concepts.context.sent_bytes": ("pmap_core.concepts.context", "sent_bytes"),
    "pmap_core.concepts.context.quadratic_share": ("pmap_core.concepts.context", "quadratic_share"),
    "pmap_core.concepts.context.ulysses_devices": ("pmap_core.concepts.context", "ulysses_devices"),
    "pmap_core.concepts.context.overlap_block": ("pmap_core.concepts.context", "overlap_block"),
    "pmap_core.concepts.experts.capacity": ("pmap_core.concepts.experts", "capacity"),
    "pmap_core.concepts.experts.dropped_fraction": ("pmap_core.concepts.experts", "dropped_fraction"),
    "pmap_core.concepts.experts.all_to_all_sent": ("pmap_core.concepts.experts", "all_to_all_sent"),
    "pmap_core.concepts.experts.step_all_to_all_bytes": ("pmap_core.concepts.experts", "step_all_to_all_bytes"),
    "pmap_core.concepts.experts.critical_batch": ("pmap_core.concepts.experts", "critical_batch"),
    "pmap_core.concepts.planner.view.layout_figure": ("pmap_core.concepts.planner.view", "layout_figure"),
    "pmap_core.practice.worksheets.smallest_devices_below": ("pmap_core.practice.worksheets", "smallest_devices_below"),
    "pmap_core.practice.worksheets.fastest_devices": ("pmap_core.practice.worksheets", "fastest_devices"),
}
# Names sheets used before the functions moved, and each one's name now: a sheet that uses an old
# name is refused with the new one in the message.
MOVED = {
    "pmap_core.sharding.plan_shards": "pmap_core.concepts.sharding.plan_shards",
    "pmap_core.sharding.map_leading_axis": "pmap_core.concepts.sharding.map_leading_axis",
    "pmap_core.collectives.run_collective": "pmap_core.concepts.collectives.run_collective",
    "pmap_core.composition.compare_compiled": "pmap_core.concepts.jit_composition.compare_compiled",
    "pmap_core.gradients.count_all_reduces": "pmap_core.concepts.gradients.count_all_reduces",
    "pmap_core.mesh_view.place": "pmap_core.concepts.mesh_view.place",
    "pmap_core.costmodel.ring_bytes_sent_per_device": "pmap_core.costs.analytic.ring_bytes_sent_per_device",
    "pmap_core.costmodel.zero_memory_per_device": "pmap_core.costs.analytic.zero_memory_per_device",
    "pmap_core.quiz.answer": "pmap_core.practice.quiz.registry.answer",
    "pmap_core.practice.quiz.answer": "pmap_core.practice.quiz.registry.answer",
    "pmap_core.worksheets.smallest_devices_below": "pmap_core.practice.worksheets.smallest_devices_below",
    "pmap_core.worksheets.fastest_devices": "pmap_core.practice.worksheets.fastest_devices",
}

Scalar = str | int | float | bool
Text = Mapping[str, str]  # {"en": ..., "zh": ...}


class WorksheetError(LabInputError):
    def __init__(self, where: str, problem: str):
        super().__init__("bad_worksheet", "{where}: {problem}", where=where, problem=problem)


@dataclasses.dataclass(frozen=True)
class DeviceRule:
    """How many devices a step uses on a runtime of D: the largest d <= min(at_most, D) that divides
    `divides` (any d when it is 0)."""

    at_most: int
    divides: int = 0

    def pick(self, available: int) -> int:
        top = min(self.at_most, available)
        return max(d for d in range(1, top + 1) if not self.divides or self.divides % d == 0)


def device_values(devices: int) -> dict[str, Scalar]:
    """What a step's settings, args and texts call its device count d, its last device and its mesh:
    the squarest 2-D mesh x × y of d devices with x <= y, as `mesh_view.default_mesh` picks it."""
    mesh_x = max(a for a in range(1, math.isqrt(devices) + 1) if devices % a == 0)
    mesh_y = devices // mesh_x
    return {"devices": devices, "last": devices - 1, "mesh": f"{mesh_x}x{mesh_y}", "mesh_x": mesh_x, "mesh_y": mesh_y}


def _bind(table: Mapping[str, Scalar], values: Mapping[str, Scalar]) -> dict[str, Scalar]:
    return {k: values[v[1:]] if isinstance(v, str) and v[1:] in values and v.startswith("$") else v
            for k, v in table.items()}


@dataclasses.dataclass(frozen=True)
class Step:
    id: str
    lab: str  # a lab's script name: the page builds its link
    settings: dict[str, Scalar]  # the lab's query parameters
    question: Text
    explain: Text  # may hold {answer}
    hints: tuple[Text, ...]
    kind: str
    function: str  # a key of ALLOWED
    args: dict[str, Scalar]
    result: tuple[str | int, ...]  # attribute names / keys and indices into what the function returns
    tolerance: float = 0.0  # relative, numbers only
    scale: float = 1.0  # numbers: the answer is value × scale (bytes → MB)
    choices: tuple[Mapping[str, str], ...] = ()  # {"id", "en", "zh"}, choices only
    devices: DeviceRule | None = None  # how many devices it runs on, at each runtime's D
    values: Mapping[str, Scalar] = dataclasses.field(default_factory=dict)  # its texts' values, once bound

    @property
    def needs_sweep(self) -> bool:
        return SWEEP_ARG in self.args.values()

    @property
    def bound(self) -> bool:
        return self.devices is None or bool(self.values)

    def at(self, available: int) -> Step:
        """This step on a runtime of `available` devices: its device count, settings and args fixed."""
        if self.devices is None:
            return self
        values = device_values(self.devices.pick(available))
        return dataclasses.replace(self, settings=_bind(self.settings, values), args=_bind(self.args, values),
                                   values=values)

    def say(self, text: Text, lang: str, **extra: str) -> str:
        """One of the step's texts in `lang`, its placeholders filled (the step bound with `at`)."""
        return text[lang].format(**self.values, **extra)

    def query(self, lang: str) -> dict[str, str]:
        """The lab's link parameters, as the lab's own widgets write them."""
        shown = {k: ("true" if v else "false") if isinstance(v, bool) else str(v) for k, v in self.settings.items()}
        return {**shown, "lang": lang}

    def choice_ids(self) -> list[str]:
        return [c["id"] for c in self.choices]


@dataclasses.dataclass(frozen=True)
class Sheet:
    id: str
    title: Text
    intro: Text
    steps: tuple[Step, ...]

    def at(self, available: int) -> Sheet:
        """Every step bound to a runtime of `available` devices (Step.at)."""
        return dataclasses.replace(self, steps=tuple(step.at(available) for step in self.steps))

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise LabInputError("unknown_step", "no step called {name!r}", name=step_id)


# --- loading and validating -------------------------------------------------------------


def _text(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or set(value) != set(LANGS) or not all(
            isinstance(value[lang], str) and value[lang].strip() for lang in LANGS):
        raise WorksheetError(where, "needs a non-empty text in each of en and zh, nothing else")
    return dict(value)


def _scalars(where: str, value: Any) -> dict[str, Scalar]:
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
        raise WorksheetError(where, "must be a table of plain values")
    return dict(value)


STEP_KEYS = {"id", "lab", "settings", "question", "explain", "hints", "kind", "function", "args", "result",
             "tolerance", "scale", "choices", "devices"}
RULE_LIMITS = {"at_most": 64, "divides": 1 << 20}  # 64: the most devices a runtime has here


def _device_rule(where: str, raw: Any) -> DeviceRule | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or "at_most" not in raw or set(raw) - set(RULE_LIMITS) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= RULE_LIMITS[k] for k, v in raw.items()):
        raise WorksheetError(where, f"devices must be a table of at_most (a whole number from 1 to "
                                    f"{RULE_LIMITS['at_most']}) and, if given, divides (1 to {RULE_LIMITS['divides']})")
    return DeviceRule(raw["at_most"], raw.get("divides", 0))


def _references(where: str, table: Mapping[str, Scalar], names: Sequence[str], sweep: bool) -> None:
    """Every "$name" in settings or args is one the step has."""
    for key, value in table.items():
        if isinstance(value, str) and value.startswith("$") and not (
                value[1:] in names or (sweep and value == SWEEP_ARG)):
            known = ", ".join([f"${n}" for n in names] + ([SWEEP_ARG] if sweep else [])) or "none"
            raise WorksheetError(where, f"{key} = {value!r} names no value of this step (it has: {known}; "
                                        f"a step names $devices and $mesh once it has a devices rule)")


def _placeholders(where: str, text: Mapping[str, str], names: Sequence[str]) -> None:
    """The text's {placeholders} are the same in both languages and each is one the step fills; a
    literal brace is doubled. Checked here, when the sheet loads, not when a student reads it."""
    found = {}
    for lang in LANGS:
        try:
            fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(text[lang])
                      if name is not None]
        except ValueError as error:
            raise WorksheetError(where, f"{lang}: {error}; write a literal brace as {{{{ or }}}}") from None
        for name, spec, conversion in fields:
            if name not in names or spec or conversion:
                shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
                allowed = ", ".join("{" + n + "}" for n in names) or "none"
                raise WorksheetError(where, f"{lang}: {shown} is not a placeholder this text may use "
                                            f"(it may use: {allowed}); write a literal brace as {{{{ or }}}}")
        found[lang] = {name for name, _, _ in fields}
    if found["en"] != found["zh"]:
        raise WorksheetError(where, f"en uses {sorted(found['en'])}, zh {sorted(found['zh'])}: "
                                    "both languages must give the same values")


def _step(where: str, raw: Any) -> Step:
    if not isinstance(raw, dict):
        raise WorksheetError(where, "a step must be a table")
    missing = {"id", "lab", "settings", "question", "explain", "hints", "kind", "function", "args", "result"} - set(raw)
    if missing or set(raw) - STEP_KEYS:
        raise WorksheetError(where, f"missing {sorted(missing)}, unknown {sorted(set(raw) - STEP_KEYS)}")
    if not isinstance(raw["id"], str) or not _ID.fullmatch(raw["id"]):
        raise WorksheetError(where, "id must be 1-40 of a-z, 0-9, _")
    if not isinstance(raw["lab"], str) or not _ID.fullmatch(raw["lab"]):
        raise WorksheetError(where, "lab must name a lab's script")
    if raw["kind"] not in KINDS:
        raise WorksheetError(where, f"kind must be one of {', '.join(KINDS)}")
    if not isinstance(raw["function"], str):
        raise WorksheetError(where, "function must be a dotted name")
    if raw["function"] in MOVED:
        raise WorksheetError(where, f"function {raw['function']!r} has moved: name it "
                                    f"{MOVED[raw['function']]!r}")
    if raw["function"] not in ALLOWED:
        raise WorksheetError(where, f"function {raw['function']!r} is not one a sheet may call")
    result = raw["result"]
    # Public names only: a path never reaches into dunder attributes (__globals__ and the like).
    if not isinstance(result, list) or not all(
            (isinstance(p, str) and _NAME.fullmatch(p)) or (isinstance(p, int) and not isinstance(p, bool))
            for p in result):
        raise WorksheetError(where, "result must be a list of public names and indices")
    hints = raw["hints"]
    if not isinstance(hints, list) or not hints:
        raise WorksheetError(where, "needs at least one hint")
    tolerance, scale = raw.get("tolerance", 0.0), raw.get("scale", 1.0)
    for name, value in (("tolerance", tolerance), ("scale", scale)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise WorksheetError(where, f"{name} must be a finite number >= 0")
    choices = raw.get("choices", [])
    if not isinstance(choices, list) or (raw["kind"] == CHOICE) != bool(choices):
        raise WorksheetError(where, "a choice step needs choices, and only a choice step has them")
    for choice in choices:
        if not isinstance(choice, dict) or not isinstance(choice.get("id"), str):
            raise WorksheetError(where, "each choice needs an id")
        _text(f"{where}, choice {choice['id']}", {k: v for k, v in choice.items() if k != "id"})
    rule = _device_rule(f"{where}, devices", raw.get("devices"))
    names = DEVICE_VALUES if rule else ()
    settings, args = _scalars(f"{where}, settings", raw["settings"]), _scalars(f"{where}, args", raw["args"])
    _references(f"{where}, settings", settings, names, sweep=False)
    _references(f"{where}, args", args, names, sweep=True)
    texts = {"question": _text(f"{where}, question", raw["question"]),
             "explain": _text(f"{where}, explain", raw["explain"]),
             **{f"hint {i + 1}": _text(f"{where}, hint {i + 1}", h) for i, h in enumerate(hints)},
             **{f"choice {c['id']}": {lang: c[lang] for lang in LANGS} for c in choices}}
    for part, text in texts.items():
        _placeholders(f"{where}, {part}", text, (*names, ANSWER) if part == "explain" else names)
    return Step(raw["id"], raw["lab"], settings, texts["question"], texts["explain"],
                tuple(texts[f"hint {i + 1}"] for i in range(len(hints))), raw["kind"], raw["function"], args,
                tuple(result), float(tolerance), float(scale), tuple(choices), rule)


def parse_sheet(sheet_id: str, text: str) -> Sheet:
    where = f"worksheets/{sheet_id}.toml"
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise WorksheetError(where, f"not valid TOML ({error})") from None
    if set(raw) != {"title", "intro", "steps"}:
        raise WorksheetError(where, "needs exactly title, intro and steps")
    if not isinstance(raw["steps"], list) or not raw["steps"]:
        raise WorksheetError(where, "needs at least one step")
    steps = tuple(_step(f"{where}, step {i + 1}" + (f" ({s['id']})" if isinstance(s, dict) and isinstance(
        s.get("id"), str) else ""), s) for i, s in enumerate(raw["steps"]))
    if len({s.id for s in steps}) != len(steps):
        raise WorksheetError(where, "two steps share an id")
    return Sheet(sheet_id, _text(f"{where}, title", raw["title"]), _text(f"{where}, intro", raw["intro"]), steps)


@dataclasses.dataclass(frozen=True)
class Sheets:
    """What `load_sheets` found: the sheets that load, and for each file that does not, why."""

    sheets: tuple[Sheet, ...]
    broken: tuple[WorksheetError, ...]


def sheet_order(path: pathlib.Path) -> tuple[int, str]:
    """A sheet's place: by the number its file name starts with (9_… before 10_…), then by name."""
    digits = path.stem[:len(path.stem) - len(path.stem.lstrip("0123456789"))]
    return (int(digits) if digits else 1 << 30, path.name)


def load_sheets(folder: pathlib.Path | None = None) -> Sheets:
    """Every sheet in `folder` (`WORKSHEETS_DIR`), in the order of the numbers their file names start
    with (a sheet's id is its file name). A file that does not load is set aside with what is wrong with
    it; the others load all the same."""
    loaded, broken = [], []
    for path in sorted(pathlib.Path(folder or WORKSHEETS_DIR).glob("*.toml"), key=sheet_order):
        try:
            loaded.append(parse_sheet(path.stem, path.read_text(encoding="utf-8")))
        except WorksheetError as error:
            broken.append(error)
        except (OSError, UnicodeDecodeError) as error:
            broken.append(WorksheetError(f"worksheets/{path.name}", f"cannot be read ({type(error).__name__})"))
        except Exception as error:  # noqa: BLE001 - whatever else a file does wrong, it costs only its own sheet
            broken.append(WorksheetError(f"worksheets/{path.name}", f"cannot be loaded ({type(error).__name__}: "
                                                                    f"{error})"))
    return Sheets(tuple(loaded), tuple(broken))


# --- the answer, computed ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SweepMeasure:
    devices: int
    efficiency: float
    throughput: float  # steady samples/s


@dataclasses.dataclass(frozen=True)
class MeasuredSweep:
    """What a student's scaling sweep measured, from the session or from the store."""

    model: str
    scaling: str
    points: tuple[SweepMeasure, ...]


def _matching(sweep: MeasuredSweep, model: str, scaling: str) -> tuple[SweepMeasure, ...]:
    if (sweep.model, sweep.scaling) != (model, scaling) or not sweep.points:
        raise LabInputError("sweep_mismatch", "the latest sweep trained {got}; this step needs {wanted}",
                            got=f"{sweep.model}/{sweep.scaling}", wanted=f"{model}/{scaling}")
    return tuple(sorted(sweep.points, key=lambda p: p.devices))


def smallest_devices_below(sweep: MeasuredSweep, model: str, scaling: str, threshold: float) -> int:
    """The smallest D whose efficiency E(D) is below `threshold` in the sweep; 0 when none is."""
    return next((p.devices for p in _matching(sweep, model, scaling) if p.efficiency < threshold), 0)


def fastest_devices(sweep: MeasuredSweep, model: str, scaling: str) -> int:
    """The D with the highest steady throughput in the sweep."""
    return max(_matching(sweep, model, scaling), key=lambda p: p.throughput).devices


def measured_sweep(sweep: Any) -> MeasuredSweep:
    """A `training.SweepResult` as a MeasuredSweep: the points of its own implementation (a sweep
    that compares implementations measures the others too)."""
    points = tuple(SweepMeasure(p.devices, p.efficiency, p.result.steady_throughput) for p in sweep.points
                   if p.result.config.impl == sweep.config.impl)
    return MeasuredSweep(sweep.config.model, sweep.mode, points)


def function_of(name: str) -> Any:
    """The allowed function a step names."""
    module, attribute = ALLOWED[name]  # a KeyError here is a sheet that skipped validation
    return getattr(importlib.import_module(module), attribute)


def _read(value: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        value = value[part] if isinstance(part, int) or isinstance(value, Mapping) else getattr(value, part)
    return value


def runtime_devices() -> int:
    """D, the devices this process's runtime has."""
    import jax

    return jax.device_count()


def compute_answer(step: Step, sweep: MeasuredSweep | None = None) -> float | str:
    """Run the step's function here and read its answer: a number, a choice id, or a shape like "(4, 2)".
    A step not yet bound to a device count (Step.at) runs on this runtime's devices."""
    if not step.bound:
        step = step.at(runtime_devices())
    if step.needs_sweep and sweep is None:
        raise LabInputError("needs_sweep", "this step is checked against your own sweep: run one first")
    args = {k: sweep if v == SWEEP_ARG else v for k, v in step.args.items()}
    value = _read(function_of(step.function)(**args), step.result)
    if step.kind == NUMBER:
        return float(value) * step.scale
    if step.kind == SHAPE:
        return format_shape(value)
    answer = str(value).lower() if isinstance(value, bool) else str(value)
    if answer not in step.choice_ids():
        raise WorksheetError(f"step {step.id}", f"computed {answer!r}, which is not one of its choices")
    return answer


def is_correct(step: Step, prediction: Any, answer: float | str) -> bool:
    """Score a prediction against the computed answer (`scoring`): numbers within the step's relative tolerance."""
    return scoring.is_correct(step.kind, prediction, answer, step.tolerance)


def shown(answer: float | str) -> str:
    return f"{answer:.4g}" if isinstance(answer, float) else str(answer)
