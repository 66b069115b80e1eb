"""Predictions made before the answer shows, as a class records them, and what a class's first
predictions say against the computed answers.

Every press of a step's check button is one attempt. Its record — the prediction, the answer this
server computed, whether it was within the step's tolerance, the attempt's number in the session and
its time — is one tag on the student's run for the sheet (`prediction.<step>.<attempt>`), written in the
same call as the step's result, before the page shows the answer. A tag is written once per attempt
(writing it again writes the same value: a retried call records nothing twice). An attempt made in a
browser that had already been shown the step's answer (with no class code, under another code or
name, or in another tab) says so (`after_answer`). Reading back, a student's *first* prediction at a
step is the earliest one each of their browsers recorded after the class was last reset, unless it
was made after seeing the answer; the others are later attempts, kept apart.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

PREDICTION_TAG = "prediction."  # + step id + "." + attempt number
MAX_ATTEMPTS = 20  # attempts at one step recorded per session; later ones stay in the session only
PREDICTION_COLUMNS = ["student", "kind", "sheet", "step", "attempt", "first", "after_answer", "browser", "at_once",
                      "prediction", "answer", "result", "run_id", "experiment_id", "start_time"]
BROWSER_TAG = "browser"  # the run's tag that tells browsers apart (tracking.classroom.BROWSER_TAG)


def now_ms() -> int:
    return int(time.time() * 1000)


def _plain(value: Any) -> str | float:
    """A prediction or an answer as it is stored: a finite number as a float, anything else as text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)) and math.isfinite(float(value)):
        return float(value)
    return str(value)


def prediction_tag(step_id: str, attempt: int, prediction: Any, answer: Any, correct: bool,
                   time_ms: int | None = None, after_answer: bool = False) -> tuple[str, str]:
    """The tag (key, value) that records one attempt at a step; `after_answer`: made in a browser that had
    already been shown the step's answer (with no class code, under another code or name, in another tab)."""
    record = {"prediction": _plain(prediction), "answer": _plain(answer), "correct": bool(correct),
              "attempt": int(attempt), "time_ms": now_ms() if time_ms is None else int(time_ms),
              "after_answer": bool(after_answer)}
    return f"{PREDICTION_TAG}{step_id}.{int(attempt)}", json.dumps(record, ensure_ascii=True)


class AnswersSeen:
    """Which steps' answers each browser has been shown, kept by one server process for all its sessions:
    a tab with no class code that shows an answer marks the later records of that step from every tab of
    the same browser. At most `max_browsers` are kept (the one longest unseen is forgotten first)."""

    def __init__(self, max_browsers: int = 20_000):
        self._lock = threading.Lock()
        self._seen: OrderedDict[str, set[tuple[str, str]]] = OrderedDict()
        self._max = max_browsers

    def saw(self, browser: str, sheet_id: str, step_id: str) -> None:
        with self._lock:
            self._seen.setdefault(browser, set()).add((sheet_id, step_id))
            self._seen.move_to_end(browser)
            while len(self._seen) > self._max:
                self._seen.popitem(last=False)

    def has_seen(self, browser: str, sheet_id: str, step_id: str) -> bool:
        with self._lock:
            return (sheet_id, step_id) in self._seen.get(browser, ())


def shown(value: str | float) -> str:
    """A stored prediction or answer as the class page writes it (numbers to 10 significant digits)."""
    return f"{value:.10g}" if isinstance(value, float) else str(value)


class Attempt(NamedTuple):
    step: str
    attempt: int
    prediction: str | float
    answer: str | float
    correct: bool
    time_ms: int
    after_answer: bool = False


def attempts_of(tags: Mapping[str, str]) -> list[Attempt]:
    """The attempts a run's tags record; a tag that is not one the lab wrote (edited by hand, cut
    short) is left out."""
    found = []
    for key, value in tags.items():
        if not key.startswith(PREDICTION_TAG):
            continue
        step, _, number = key[len(PREDICTION_TAG):].rpartition(".")
        try:
            record = json.loads(value)
            attempt = Attempt(step, int(number), record["prediction"], record["answer"], bool(record["correct"]),
                              int(record["time_ms"]), record.get("after_answer") is True)
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        if step and attempt.attempt >= 1 and isinstance(attempt.prediction, (str, float, int)) and \
                isinstance(attempt.answer, (str, float, int)):
            found.append(attempt)
    return found


def recorded(runs: list[Any], since_ms: int = 0) -> pd.DataFrame:
    """One row per attempt recorded on `runs` at or after `since_ms`, oldest first: PREDICTION_COLUMNS but
    `first` and `at_once`, `browser` as the run's tag holds it, `start_time` in ms."""
    found = []
    for run in runs:
        run_tags = run.data.tags
        for a in attempts_of(run_tags):
            if a.time_ms < since_ms:
                continue
            found.append({"student": run_tags.get("student", ""), "kind": "prediction", "sheet": run_tags.get("sheet"),
                          "step": a.step, "attempt": a.attempt, "after_answer": a.after_answer,
                          "browser": run_tags.get(BROWSER_TAG, ""), "prediction": shown(_plain(a.prediction)),
                          "answer": shown(_plain(a.answer)), "result": 1.0 if a.correct else 0.0,
                          "run_id": run.info.run_id, "experiment_id": run.info.experiment_id, "start_time": a.time_ms})
    frame = pd.DataFrame(found, columns=[c for c in PREDICTION_COLUMNS if c not in ("first", "at_once")])
    frame["after_answer"] = frame["after_answer"].astype(bool)
    return frame.sort_values(["start_time", "run_id", "attempt"], kind="stable").reset_index(drop=True)


def at_once(frame: pd.DataFrame, names: pd.Series) -> pd.Series:
    """Per row of `frame` (`recorded`), whether another browser used the same name (`names`, one per row:
    a name, or what names drawn alike share) at the same time at the row's step: both recorded at that
    step, and the two browsers' spans of use (from the first to the last record each made under the name)
    overlap. A student who goes on in a second browser or device uses the first no more: never at once."""
    spans = frame.assign(name=names).groupby(["name", "browser"])["start_time"].agg(["min", "max"])
    flagged = set()
    for (name, sheet, step), group in frame.assign(name=names).groupby(["name", "sheet", "step"], sort=False):
        browsers = list(dict.fromkeys(group["browser"]))
        for i, one in enumerate(browsers):
            for other in browsers[i + 1:]:
                (low, high), (low2, high2) = spans.loc[(name, one)], spans.loc[(name, other)]
                if low <= high2 and low2 <= high:
                    flagged |= {(name, sheet, step, one), (name, sheet, step, other)}
    keys = zip(names, frame["sheet"], frame["step"], frame["browser"], strict=True)
    return pd.Series([key in flagged for key in keys], index=frame.index, dtype=bool)


def rows(runs: list[Any], since_ms: int = 0, same_name: Callable[[str], str] = str) -> pd.DataFrame:
    """One row per attempt recorded on `runs` (MLflow runs of a class's sheets) at or after
    `since_ms` (PREDICTION_COLUMNS). `browser` numbers the browsers that recorded under one name (or
    names `same_name` reads as one: those drawn alike) in the order they first did; `at_once` marks the
    rows where two of them used the name at the same time at one step (`at_once`), which a student who
    moves to another browser never does. `first` marks the earliest of each student's browsers at each
    step, unless it was made after that browser had been shown the answer (`after_answer`): such a record
    is never anyone's first prediction."""
    frame = recorded(runs, since_ms)
    earliest = ~frame.duplicated(["student", "browser", "sheet", "step"])
    frame.insert(PREDICTION_COLUMNS.index("first"), "first", earliest & ~frame["after_answer"])
    names = frame["student"].map(same_name)
    frame.insert(PREDICTION_COLUMNS.index("at_once"), "at_once", at_once(frame, names))
    order = frame.assign(name=names).drop_duplicates(["name", "browser"])
    numbers = {(name, browser): n + 1 for name, group in order.groupby("name", sort=False)
               for n, browser in enumerate(group["browser"])}
    frame["browser"] = pd.array([numbers[key] for key in zip(names, frame["browser"], strict=True)], dtype="Int64")
    frame["attempt"] = frame["attempt"].astype("Int64")
    frame["start_time"] = pd.to_datetime(frame["start_time"], unit="ms", utc=True)
    return frame


def browsers_per_name(predictions: pd.DataFrame) -> dict[str, int]:
    """Each student name's highest browser number (`rows`): more than 1 where the name was taken
    by another browser first."""
    if predictions is None or predictions.empty:
        return {}
    return {str(name): int(n) for name, n in predictions.groupby("student")["browser"].max().items()}


def names_at_once(predictions: pd.DataFrame) -> set[str]:
    """The names that two browsers used at the same time at one step (`rows`' `at_once`)."""
    if predictions is None or predictions.empty:
        return set()
    return {str(name) for name in predictions.loc[predictions["at_once"].astype(bool), "student"]}


def first_predictions(predictions: pd.DataFrame) -> pd.DataFrame:
    return predictions[predictions["first"].astype(bool)].reset_index(drop=True)


class Burst(NamedTuple):
    """First predictions at one step from several browsers under one name, or under names drawn alike:
    the names, how many browsers (each made one first prediction), and the seconds from the first to the last."""

    sheet: str
    step: str
    names: tuple[str, ...]
    browsers: int
    seconds: float


def bursts(predictions: pd.DataFrame, same_name: Callable[[str], str] = str) -> list[Burst]:
    """Each step's first predictions (`rows`) that came from more than one browser under one name (or
    names `same_name` reads as one), in the order they began: one person in several browsers or private
    windows can make several first predictions, which no record can tell from a namesake's."""
    first = first_predictions(predictions) if predictions is not None else pd.DataFrame()
    if first.empty:
        return []
    found = []
    for (sheet, step, _), group in first.groupby(["sheet", "step", first["student"].map(same_name)], sort=False):
        if group["browser"].nunique() > 1:
            span = (group["start_time"].max() - group["start_time"].min()).total_seconds()
            found.append(Burst(str(sheet), str(step), tuple(dict.fromkeys(map(str, group["student"]))),
                               int(group["browser"].nunique()), float(span)))
    return found


class StepSummary(NamedTuple):
    """What a class's first predictions at one step say: how many, the share within the step's
    tolerance of the computed answer, the most common wrong prediction (and how many made it), and
    the answers the servers computed (one, unless the students' runtimes or sweeps differed)."""

    sheet: str
    step: str
    count: int
    within: float
    common_wrong: str | None
    common_wrong_count: int
    answers: tuple[str, ...]


def summaries(predictions: pd.DataFrame) -> list[StepSummary]:
    """One StepSummary per step with first predictions, in sheet and step order of first appearance."""
    first = first_predictions(predictions)
    found = []
    for (sheet, step), group in first.groupby(["sheet", "step"], sort=False):
        # Ties go to the value predicted first: counted in the order of first appearance, sorted stably.
        wrong = group[group["result"] < 1]["prediction"].value_counts(sort=False).sort_values(
            ascending=False, kind="stable")
        common = (str(wrong.index[0]), int(wrong.iloc[0])) if len(wrong) else (None, 0)
        found.append(StepSummary(str(sheet), str(step), len(group), float(group["result"].mean()), *common,
                                 tuple(dict.fromkeys(group["answer"]))))
    return found


def as_numbers(values: pd.Series) -> pd.Series | None:
    """`values` as floats when every one is a number, otherwise None (choices and shapes)."""
    numbers = pd.to_numeric(values, errors="coerce")
    return None if numbers.isna().any() else numbers.astype(float)


def with_predictions(runs: pd.DataFrame, recorded: pd.DataFrame) -> pd.DataFrame:
    """A class's rows, then its predictions' (what the Class page's CSV holds): one table, the columns of both."""
    return pd.concat([runs, recorded], ignore_index=True) if len(recorded) else runs


OUTLIER_MADS = 10.0  # how far from the class's median prediction the scale reaches, in (scaled) median deviations


class Scale(NamedTuple):
    """The range of a dot plot of one step's predictions, and how many predictions lie below and above it."""

    low: float
    high: float
    below: int
    above: int

    def where(self, value: float) -> int:
        """-1 below the range, 1 above it, 0 on it."""
        return -1 if value < self.low else 1 if value > self.high else 0


def plot_scale(values: pd.Series, answers: pd.Series) -> Scale:
    """The range that shows a class's predictions against the computed answers: every answer, and the
    class's own spread (OUTLIER_MADS median absolute deviations, scaled to a standard deviation, each
    side of the median prediction; the median's size when most predictions agree), never wider than the
    values reach. The median and its deviation ignore a few outliers, whatever their size: one 1e12,
    ±1.7e308 or ±inf lies off the range, to be drawn at its edge and counted, instead of squeezing the
    class into one pixel or taking the axis away."""
    predicted = np.asarray(values, dtype=float)
    answered = np.asarray(answers, dtype=float)
    finite = predicted[np.isfinite(predicted)]
    answered = answered[np.isfinite(answered)]
    everything = np.concatenate([finite, answered])
    if not len(everything):
        return Scale(-1.0, 1.0, int((predicted < -1).sum()), int((predicted > 1).sum()))
    if len(finite):
        with np.errstate(over="ignore", invalid="ignore"):  # 1.7e308 - (-1.7e308) is inf: off the range anyway
            median = float(np.median(finite))
            deviation = float(np.median(np.abs(finite - median)))
        reach = min(OUTLIER_MADS * 1.4826 * deviation, 1e300) or max(abs(median), 1.0)
        low, high = median - reach, median + reach
        if len(answered):
            low, high = min(low, float(answered.min())), max(high, float(answered.max()))
        inside = everything[(everything >= low) & (everything <= high)]
        low, high = (float(inside.min()), float(inside.max())) if len(inside) else (median, median)
    else:
        low, high = float(answered.min()), float(answered.max())
    if not high / 2 - low / 2 > 0:  # one value: a range around it
        pad = max(abs(low) / 10, 1.0)
        low, high = low - pad, high + pad
    return Scale(low, high, int((predicted < low).sum()), int((predicted > high).sum()))


def step_scale(first: pd.DataFrame) -> Scale | None:
    """The dot plot's range for one step's first predictions (`plot_scale`), or None where a prediction
    or an answer is not a number (then each value is a column of its own)."""
    values, answers = as_numbers(first["prediction"]), as_numbers(first["answer"].drop_duplicates())
    return None if values is None or answers is None else plot_scale(values, answers)
