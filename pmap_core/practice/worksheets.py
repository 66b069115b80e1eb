"""Exercise sheets: steps whose answers are computed by running pmap_core, never typed in.

A sheet is a TOML file in `worksheets/` (both languages in it). Each step names a lab and the
settings that open it, a question, the kind of answer, hints, and the function whose result is the
answer: a dotted name from `ALLOWED` (a fixed table, so a data file can never import anything else),
its arguments, and the path to the value in what it returns (`["after", 2, 0]` reads
`result.after[2][0]`). Open steps take the student's own sweep as the argument `"$sweep"`.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pathlib
import re
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
    "pmap_core.costs.analytic.ring_bytes_sent_per_device": ("pmap_core.costs.analytic", "ring_bytes_sent_per_device"),
    "pmap_core.costs.analytic.zero_memory_per_device": ("pmap_core.costs.analytic", "zero_memory_per_device"),
    "pmap_core.practice.quiz.registry.answer": ("pmap_core.practice.quiz.registry", "answer"),
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

    @property
    def needs_sweep(self) -> bool:
        return SWEEP_ARG in self.args.values()

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
             "tolerance", "scale", "choices"}


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
    if (raw["kind"] == CHOICE) != bool(choices):
        raise WorksheetError(where, "a choice step needs choices, and only a choice step has them")
    for choice in choices:
        if not isinstance(choice, dict) or not isinstance(choice.get("id"), str):
            raise WorksheetError(where, "each choice needs an id")
        _text(f"{where}, choice {choice['id']}", {k: v for k, v in choice.items() if k != "id"})
    return Step(raw["id"], raw["lab"], _scalars(f"{where}, settings", raw["settings"]),
                _text(f"{where}, question", raw["question"]), _text(f"{where}, explain", raw["explain"]),
                tuple(_text(f"{where}, hint {i + 1}", h) for i, h in enumerate(hints)), raw["kind"],
                raw["function"], _scalars(f"{where}, args", raw["args"]), tuple(result), float(tolerance),
                float(scale), tuple(choices))


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
    steps = tuple(_step(f"{where}, step {i + 1}", s) for i, s in enumerate(raw["steps"]))
    if len({s.id for s in steps}) != len(steps):
        raise WorksheetError(where, "two steps share an id")
    return Sheet(sheet_id, _text(f"{where}, title", raw["title"]), _text(f"{where}, intro", raw["intro"]), steps)


def load_sheets(folder: pathlib.Path = WORKSHEETS_DIR) -> tuple[Sheet, ...]:
    """Every sheet in `folder`, in file-name order (a sheet's id is its file name)."""
    return tuple(parse_sheet(path.stem, path.read_text(encoding="utf-8"))
                 for path in sorted(pathlib.Path(folder).glob("*.toml")))


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


def compute_answer(step: Step, sweep: MeasuredSweep | None = None) -> float | str:
    """Run the step's function here and read its answer: a number, a choice id, or a shape like "(4, 2)"."""
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
