"""A class on one MLflow store: students' names and class codes as run tags, exercise results as
runs, and what a teacher's Class page reads back.

A student's display name and class code are free text shown to classmates: they are cleaned of
control characters and cut to a length here, and stored as tags. The code is the class's only key:
it is folded (case and width: "CS101", "cs101" and "ＣＳ１０１" are one class) and has at least
CODE_MIN_CHARS characters. Runs are found by `class_key`, a digest of the code, so user text reaches a
search filter only as a code of plain letters, digits and dashes (to find runs recorded before codes
were folded), and no quoting of user text is ever needed. Names are no key: two students may share
one. Code points that draw as nothing are removed from names, and names are compared by what they
draw as (UTS #39's skeleton, `skeleton`); each run carries the digest of its browser (`BROWSER_TAG`),
so `name_notes` marks blank names, names that differ but look alike, names recorded from more than one
browser and names two browsers used at the same time at one step, and `browsers_at_once` tells a page
whether its browser is one of those.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import unicodedata
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

import pandas as pd
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode

from pmap_core.tracking import EXPERIMENT, FINISHED, mlflow_backend, predictions, store_uri, stored_count, tracking_uri

NAME_MAX_CHARS, CODE_MAX_CHARS = 40, 24
CODE_MIN_CHARS = 3  # a shorter code is too easy to hit by chance, or by a typo
CLASS_TAG, STUDENT_TAG, CLASS_KEY_TAG = "class_code", "student", "class_key"
STUDENT_KEY_TAG = "student_key"  # the digest of the name's skeleton: runs under names drawn alike are found together
BROWSER_TAG = predictions.BROWSER_TAG  # a digest telling apart the browsers that record under one name
EXERCISE_EXPERIMENT = "pmap-lab-worksheets"  # apart from the training runs the Experiments page compares
STEP_METRIC = "step."  # + step id: 1 right, 0 wrong
MAX_RUNS = 5000  # runs of a kind the Class page reads for a class …
PER_STUDENT_RUNS = 300  # … of which at most these of one student (one run per sheet and session)
SCAN_FACTOR = 2  # … among the class's newest SCAN_FACTOR·MAX_RUNS
RUN_COLUMNS = ["student", "kind", "sheet", "step", "result", "model", "global_batch", "scaling", "impl",
               "devices", "steady_throughput", "efficiency", "run_id", "experiment_id", "start_time"]
_PLAIN_CODE = re.compile(r"[a-z0-9-]+")
REMOVED_CATEGORIES = ("C", "Zl", "Zp")  # control, format, unassigned, private use; line and paragraph separators
# Code points that draw as nothing. Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt;
# those of category C go with REMOVED_CATEGORIES anyway), and U+2800 BRAILLE PATTERN BLANK, which is no
# default-ignorable but draws as a blank: "Bob" + U+034F, U+FE0F or U+3164 draws as "Bob".
INVISIBLE_RANGES = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x2800, 0x2800),
                    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
                    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
# Letters drawn like others, each to its prototype: the entries of Unicode's confusables.txt (UTS #39,
# "Unicode Security Mechanisms", version 14.0.0) whose source is ASCII, Latin (U+0100-U+02AF), Greek,
# Cyrillic or a Latin small capital (U+1D00-U+1D2B) and whose prototype is ASCII letters or digits.
# Fullwidth and mathematical letters are folded by NFKD before the table is read.
CONFUSABLES = {
    **dict(zip("ƧϨȜƷЗӠƼбȣȢɑαаΑАƄЬΒВᴄϲсϹСԁеҽΕЕſϜɡƍԌһΗНıɪɩιͺіӏϳјͿЈΚК|1IƖǀΙІӀΜϺМΝᴏᴑοσо0ΟОρϱрΡРԛᴦгƦƽѕЅΤТᴜʋ"
                   "υᴠνѵѴɯᴡѡԝԜхΧХɣʏγуүΥϒУҮᴢΖ",
                   "2233335688aaaAAbbBBcccCCdeeEEfFggGhHHiiiiiiijjJJKKllllllllMMMNoooooOOOpppPPqrrRssSTTuuu"
                   "vvvVwwwwWxXXyyyyyYYYYzZ", strict=True)),
    "ӕ": "ae", "Ӕ": "AE", "Ы": "bl", "ǳ": "dz", "ʣ": "dz", "ǲ": "Dz", "Ǳ": "DZ", "ĳ": "ij", "ǉ": "lj", "Ĳ": "lJ",
    "ǈ": "Lj", "Ǉ": "LJ", "ǁ": "ll", "Ю": "lO", "ʪ": "ls", "ʫ": "lz", "ǌ": "nj", "ǋ": "Nj", "Ǌ": "NJ", "œ": "oe",
    "Œ": "OE", "m": "rn", "ʦ": "ts",
    # Beyond the file: U+0185 LATIN SMALL LETTER TONE SIX is a prototype of its own there (U+044C
    # CYRILLIC SMALL LETTER SOFT SIGN maps to it), yet common fonts draw "Boƅ" as "Bob".
    "ƅ": "b", "ь": "b",
}
_CONFUSABLES = str.maketrans(CONFUSABLES)


def invisible(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in INVISIBLE_RANGES)


def sanitize(text: object, max_chars: int) -> str:
    """`text` without control, format or unassigned characters and line breaks (U+2028 and U+2029
    too), bidi overrides and zero-width marks, nor any code point that draws as nothing (INVISIBLE_RANGES:
    a name of Hangul fillers only is blank), surrounding spaces stripped, cut to `max_chars`."""
    kept = "".join(ch for ch in str(text)
                   if not unicodedata.category(ch).startswith(REMOVED_CATEGORIES) and not invisible(ch))
    return kept.strip()[:max_chars].strip()


def sanitize_name(text: object) -> str:
    return sanitize(text, NAME_MAX_CHARS)


def sanitize_code(text: object) -> str:
    """The class a typed code names: cleaned as a name is, then case and width folded (NFKC and
    Unicode case folding), so "CS101", "cs101" and "ＣＳ１０１" are one class."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", str(text)).casefold())
    return sanitize(folded, CODE_MAX_CHARS)


def usable_code(text: object) -> str | None:
    """The class code `text` names, or None when it is shorter than CODE_MIN_CHARS (or empty)."""
    code = sanitize_code(text)
    return code if len(code) >= CODE_MIN_CHARS else None


def code_from_link(text: str) -> str | None:
    """The class code a link names, when the link holds it as a code is typed (only case and width may
    differ: "CS101" names "cs101"); None for anything the cleaning would change otherwise."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    code = usable_code(text)
    return code if code == folded else None


def class_key(code: str) -> str:
    """What runs are searched by: hex digits only, whatever characters the code holds."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:32]


def class_tags(student: str, code: str) -> dict[str, str]:
    """The tags a student's runs carry; none without a usable class code."""
    code = usable_code(code)
    if code is None:
        return {}
    return {CLASS_TAG: code, STUDENT_TAG: sanitize_name(student), CLASS_KEY_TAG: class_key(code),
            STUDENT_KEY_TAG: student_key(student)}


def class_filter(code: str) -> str:
    return f"tags.{CLASS_KEY_TAG} = '{class_key(sanitize_code(code))}'"


def _class_filters(typed: str) -> list[str]:
    """The filters that find a class's runs: by its code's digest; then the runs recorded before codes
    were folded, keyed by the code as it was typed: by the digest of `typed` (cleaned, not folded),
    and, for a code of plain letters, digits and dashes, by the code tag in any case (the only user
    text a filter holds, and only when it holds no quote, backslash or wildcard)."""
    filters = [class_filter(typed)]
    legacy = sanitize(typed, CODE_MAX_CHARS)
    if legacy and legacy != sanitize_code(typed):
        filters.append(f"tags.{CLASS_KEY_TAG} = '{class_key(legacy)}'")
    if _PLAIN_CODE.fullmatch(sanitize_code(typed)):
        filters.append(f"tags.{CLASS_TAG} ILIKE '{sanitize_code(typed)}'")
    return filters


class NameNote(NamedTuple):
    """What a page says beside a student's name: it is blank, or it looks like another name of the
    class; `letters` are its characters that make the difference ("А U+0410 CYRILLIC CAPITAL LETTER A");
    `browsers`: how many browsers recorded under it, where more than one did (a student who went on in
    another browser, or a namesake); `at_once`: two of them used it at the same time at one step."""

    blank: bool = False
    lookalike: bool = False
    letters: tuple[str, ...] = ()
    browsers: int = 0
    at_once: bool = False


def skeleton(text: str) -> str:
    """What `text` draws as, for comparing names (UTS #39's skeleton: decompose, map each character to its
    prototype, decompose again; NFKD also folds fullwidth and mathematical letters): "Bɑb", "Boƅ", "Ｂob"
    and "Bob" share one, "Bob" and "bob" do not. Invisible code points are left out."""
    visible = "".join(ch for ch in str(text) if not invisible(ch))
    return unicodedata.normalize("NFD", unicodedata.normalize("NFKD", visible).translate(_CONFUSABLES))


def student_key(name: str) -> str:
    """What a name's runs are found by (hex digits only): the digest of its skeleton; "" for a blank name."""
    shape = skeleton(sanitize_name(name)).strip()
    return class_key(shape) if shape else ""


def _described(chars: str) -> tuple[str, ...]:
    return tuple(f"{ch} U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip() for ch in dict.fromkeys(chars))


def name_notes(names: object, browsers: Mapping[str, int] | None = None,
               at_once: Collection[str] = ()) -> dict[str, NameNote]:
    """A note for each distinct name of `names`: blank ones (nothing visible: "", or Hangul fillers
    only), names that differ but look alike (one skeleton: "Anna" and "Аnna", "Bob" and "Bɑb"), names
    that `browsers` says more than one browser recorded under, and those that two browsers used at the
    same time at one step (`at_once`). Names are what students typed; the code is the class's only key, so
    two students may also share one name: the browsers tell them apart."""
    distinct = list(dict.fromkeys("" if name is None else str(name) for name in names))  # type: ignore[attr-defined]
    groups: dict[str, list[str]] = {}
    for name in distinct:
        if skeleton(name).strip():
            groups.setdefault(skeleton(name), []).append(name)
    shared = {name: count for name, count in (browsers or {}).items() if count > 1}
    together = set(at_once)
    notes = {name: NameNote(blank=not skeleton(name).strip(), browsers=shared.get(name, 0), at_once=name in together)
             for name in distinct}
    for group in groups.values():
        if len(group) < 2:
            continue
        for name in group:
            changed = "".join(ch for ch in name
                              if not ch.isascii() and unicodedata.normalize("NFC", skeleton(ch)) != ch)
            outside = changed or "".join(ch for ch in name if not ch.isascii())
            notes[name] = notes[name]._replace(lookalike=True, letters=_described(outside))
    return notes


def _client(uri: str | None) -> Any:
    from mlflow.tracking import MlflowClient

    for name, value in mlflow_backend.HTTP_ENV_DEFAULTS.items():  # a dead server is known in seconds
        os.environ.setdefault(name, value)
    return MlflowClient(tracking_uri=store_uri(uri or tracking_uri()))


def record_exercise(sheet_id: str, results: Mapping[str, bool], tags: Mapping[str, str],
                    run_id: str | None = None, uri: str | None = None,
                    attempts: Mapping[str, str] | None = None) -> str:
    """Write a sheet's results (metric `step.<id>`: 1 right, 0 wrong) to the student's run for the
    sheet, created on first use; returns its id. The run is ended at once, so it is never left
    RUNNING when the student closes the page; later results are added to it. When `run_id` is gone
    from the store (deleted, or the store reset), the results go to a new run, whose id is returned.
    `attempts` are prediction tags (`predictions.prediction_tag`), written in the same call as the results."""
    client = _client(uri)
    entries = [(f"{STEP_METRIC}{step}", 1.0 if right else 0.0, None) for step, right in results.items()]
    if run_id is not None:
        try:
            _write(client, run_id, entries, attempts)
            return run_id
        except MlflowException:
            if _run_is_live(client, run_id):
                raise  # the run is there: the write failed for another reason
    # No run yet, or the session's run is gone (deleted in MLflow's UI, or the store reset or replaced).
    experiment = mlflow_backend.experiment_id(client, EXERCISE_EXPERIMENT)
    run = client.create_run(experiment, run_name=f"worksheet-{sheet_id}",
                            tags={**tags, "lab": "worksheet", "sheet": sheet_id})
    client.set_terminated(run.info.run_id, status=FINISHED)
    _write(client, run.info.run_id, entries, attempts)
    return run.info.run_id


def _write(client: Any, run_id: str, entries: list, attempts: Mapping[str, str] | None) -> None:
    """The results and the attempts' tags in one call (a class's worth of checks at once: one write each)."""
    if not attempts:
        mlflow_backend.write_metrics(client, run_id, entries)
        return
    from mlflow.entities import Metric, RunTag

    now = int(time.time() * 1000)
    client.log_batch(run_id, metrics=[Metric(key, value, now, 0) for key, value, _ in entries],
                     tags=[RunTag(key, value) for key, value in attempts.items()])


def _run_is_live(client: Any, run_id: str) -> bool:
    """Whether the store holds `run_id` and it is not deleted (another failure of the store raises)."""
    try:
        return client.get_run(run_id).info.lifecycle_stage == "active"
    except MlflowException as error:
        if error.error_code == ErrorCode.Name(RESOURCE_DOES_NOT_EXIST):
            return False
        raise


def browsers_at_once(code: str, student: str, uri: str | None = None, since_ms: int = 0,
                     limit: int = 200) -> set[str]:
    """The browsers that recorded under `student` (or a name drawn alike) in the class at the same time as
    another browser, at one step (`predictions.at_once`), since `since_ms`: one name in use by two people,
    not a student who went on in another browser."""
    key = student_key(student)
    client = _client(uri)
    found = client.get_experiment_by_name(EXERCISE_EXPERIMENT)
    if not key or usable_code(code) is None or found is None:
        return set()
    runs = client.search_runs([found.experiment_id], max_results=limit, order_by=["attributes.start_time DESC"],
                              filter_string=f"{class_filter(code)} and tags.{STUDENT_KEY_TAG} = '{key}'")
    frame = predictions.recorded(runs, since_ms)
    flagged = predictions.at_once(frame, frame["student"].map(skeleton))
    return set(frame.loc[flagged, "browser"])


class ClassRuns(NamedTuple):
    """What the Class page shows: the rows of `class_runs`, and the kinds of run ("exercise",
    "training") of which the class has more than `limit`: only the newest `limit` of those are read;
    and every prediction recorded on the exercise runs (`predictions.rows`: first ones marked); the
    students of whom only the newest PER_STUDENT_RUNS runs of a kind are read."""

    runs: pd.DataFrame
    capped: tuple[str, ...]
    limit: int
    predictions: pd.DataFrame | None = None
    cut_students: tuple[str, ...] = ()  # students with more than PER_STUDENT_RUNS runs of a kind: their newest shown


def _search(client: Any, experiment: str, code: str, limit: int, per_student: int) -> tuple[list, bool, set]:
    """The class's newest runs in `experiment`: at most `per_student` of each student (by the name the
    runs carry) and `limit` in all, read from the newest SCAN_FACTOR·`limit`; whether the class has more
    than were kept, and the students who have more than `per_student`. A cap per student, not only for the
    class: one name's flood of runs leaves every other student's newest runs in view."""
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return [], False, set()
    scan = SCAN_FACTOR * limit
    runs = {}
    for filter_string in _class_filters(code):
        for run in client.search_runs([found.experiment_id], filter_string=filter_string, max_results=scan + 1,
                                      order_by=["attributes.start_time DESC"]):
            runs[run.info.run_id] = run
    newest = sorted(runs.values(), key=lambda run: run.info.start_time or 0, reverse=True)
    code = sanitize_code(code)  # a digest is not the code: the tag must name the class itself
    mine = [run for run in newest[:scan] if sanitize_code(run.data.tags.get(CLASS_TAG, "")) == code]
    kept, counts, cut, more = [], {}, set(), len(newest) > scan
    for run in mine:
        student = run.data.tags.get(STUDENT_TAG, "")
        counts[student] = counts.get(student, 0) + 1
        if counts[student] > per_student:
            cut.add(student)
        elif len(kept) < limit:
            kept.append(run)
        else:
            more = True
    return kept, more, cut


def read_class(code: str, uri: str | None = None, limit: int | None = None, since_ms: int = 0,
               per_student: int | None = None) -> ClassRuns:
    """Every run of the class, one row per training run and one per exercise step answered
    (RUN_COLUMNS), and where the class has more runs than `limit` (MAX_RUNS) of a kind, which kinds;
    of each student at most `per_student` (PER_STUDENT_RUNS) runs of a kind; with `since_ms` (when the
    class was last reset), only what was recorded from then on."""
    limit = MAX_RUNS if limit is None else limit
    per_student = PER_STUDENT_RUNS if per_student is None else per_student
    client = _client(uri)
    rows = []
    exercises, more_exercises, cut = _search(client, EXERCISE_EXPERIMENT, code, limit, per_student)
    recorded = predictions.rows(exercises, since_ms, same_name=skeleton)
    exercises = [run for run in exercises if (run.info.start_time or 0) >= since_ms]
    for run in exercises:
        base = {"student": run.data.tags.get(STUDENT_TAG, ""), "kind": "exercise",
                "sheet": run.data.tags.get("sheet"), "run_id": run.info.run_id,
                "experiment_id": run.info.experiment_id, "start_time": run.info.start_time}
        rows += [{**base, "step": key[len(STEP_METRIC):], "result": value}
                 for key, value in sorted(run.data.metrics.items()) if key.startswith(STEP_METRIC)]
    trainings, more_trainings, cut_trainings = _search(client, EXPERIMENT, code, limit, per_student)
    for run in (run for run in trainings if (run.info.start_time or 0) >= since_ms):
        params, metrics = run.data.params, run.data.metrics
        if run.data.tags.get("sweep") == "true" or "steady_throughput" not in metrics:
            continue  # a sweep's parent repeats its children; an unfinished run has no figures
        rows.append({"student": run.data.tags.get(STUDENT_TAG, ""), "kind": "training", "model": params.get("model"),
                     "global_batch": stored_count(params.get("global_batch")), "scaling": params.get("scaling"),
                     "impl": params.get("impl"), "devices": stored_count(params.get("devices")),
                     "steady_throughput": metrics.get("steady_throughput"), "efficiency": metrics.get("efficiency"),
                     "run_id": run.info.run_id, "experiment_id": run.info.experiment_id,
                     "start_time": run.info.start_time})
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    frame["start_time"] = pd.to_datetime(frame["start_time"], unit="ms", utc=True)
    for name in ("global_batch", "devices"):
        frame[name] = frame[name].astype("Int64")
    frame = frame.sort_values(["student", "kind", "start_time"], kind="stable").reset_index(drop=True)
    capped = tuple(kind for kind, more in (("exercise", more_exercises), ("training", more_trainings)) if more)
    return ClassRuns(frame, capped, limit, recorded, tuple(sorted(cut | cut_trainings)))


def without_sheets(record: ClassRuns, sheets: Collection[str]) -> ClassRuns:
    """The class as a page without the teacher key sees it: nothing of the sheets in `sheets` (those
    withheld), neither their results nor their predictions, since both tell the answers."""
    if not sheets:
        return record
    runs = record.runs[~record.runs["sheet"].isin(list(sheets))].reset_index(drop=True)
    recorded = record.predictions
    if recorded is not None:
        recorded = recorded[~recorded["sheet"].isin(list(sheets))].reset_index(drop=True)
    return record._replace(runs=runs, predictions=recorded)


def class_runs(code: str, uri: str | None = None) -> pd.DataFrame:
    """Every run of the class (at most the newest MAX_RUNS of each kind), one row per training run and
    one per exercise step answered (RUN_COLUMNS)."""
    return read_class(code, uri).runs


def completion(runs: pd.DataFrame) -> pd.DataFrame:
    """Who answered which exercise: one row per student, one column per "sheet/step", 1 right, 0 wrong."""
    done = runs[runs["kind"] == "exercise"]
    if done.empty:
        return pd.DataFrame(columns=["student"])
    done = done.assign(exercise=done["sheet"] + "/" + done["step"])
    table = done.pivot_table(index="student", columns="exercise", values="result", aggfunc="max")
    return table.reset_index().rename_axis(columns=None)


def best_efficiency(runs: pd.DataFrame) -> pd.DataFrame:
    """Each student's best scaling efficiency E(D) at each D: one row per student, one column per D."""
    trained = runs[(runs["kind"] == "training") & runs["efficiency"].notna()]
    if trained.empty:
        return pd.DataFrame(columns=["student"])
    table = trained.pivot_table(index="student", columns="devices", values="efficiency", aggfunc="max")
    table.columns = [f"D={int(d)}" for d in table.columns]
    return table.reset_index()


def settings_groups(runs: pd.DataFrame) -> list[str]:
    """The training settings of the class's runs, most runs first, as "model · B=… · scaling · impl"."""
    trained = runs[runs["kind"] == "training"]
    return list(trained.apply(settings_label, axis=1).value_counts().index) if not trained.empty else []


def settings_label(row: pd.Series) -> str:
    return f"{row['model']} · B={row['global_batch']} · {row['scaling']} · {row['impl']}"


def leaderboard(runs: pd.DataFrame, settings: str) -> pd.DataFrame:
    """For one settings group: each student's best steady throughput at each D, fastest first."""
    trained = runs[runs["kind"] == "training"]
    if trained.empty:
        return pd.DataFrame(columns=["student", "devices", "steady_throughput"])
    same = trained[trained.apply(settings_label, axis=1) == settings]
    best = same.groupby(["student", "devices"], as_index=False)["steady_throughput"].max()
    return best.sort_values("steady_throughput", ascending=False, kind="stable").reset_index(drop=True)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)  # what a spreadsheet reads as a number


def csv_safe(value: object) -> object:
    """A text a spreadsheet could run as a formula gets a leading quote: one that starts like a formula
    ("=HYPERLINK(…)", also in full width: "＝"), or with anything a spreadsheet may trim in front of
    one (a space of any kind, a line break, a control or zero-width character). A plain number ("-5",
    "+2.5e3") is no formula and stays as it is. Values written straight to the store never went
    through `sanitize`, so any of these may be there."""
    if not isinstance(value, str) or not value or PLAIN_NUMBER.fullmatch(value):
        return value
    first = value[0]
    if (unicodedata.normalize("NFKC", first).startswith(FORMULA_STARTS) or first.isspace()
            or unicodedata.category(first).startswith(("C", "Z"))):
        return f"'{value}"
    return value


def to_csv(runs: pd.DataFrame) -> bytes:
    """The rows the page shows, as CSV; no text in them (names, codes, params, tags: whatever the
    store holds) can become a spreadsheet formula."""
    safe = runs.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(csv_safe)
    return safe.to_csv(index=False).encode("utf-8")
