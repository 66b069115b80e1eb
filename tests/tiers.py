"""The suite's two tiers and the order of its queue, as plain functions of test ids and parameters:
tests/conftest.py applies them to the collected tests, tests/core/test_tiers.py checks them.

The full tier, README's command, runs every test. The quick tier (`-m quick`), the loop to run before every commit,
runs the tests these rules choose; no test marks itself:
- the levels that run in the test process and start nothing: tests/core and tests/pages (no browser, no server, no
  child process), and from tests/system only QUICK_SYSTEM_TESTS (the CLI: a training run as a user starts it, and
  one refusal of each other command whose module nothing else runs), less FULL_ONLY (what repeats a kind of claim
  the quick tier checks elsewhere, each entry says where);
- one point per claim: a test's parametrizations that differ only in their points (a device count, a mesh axis, a
  pipeline's stages, micro-batches or layers, a page's language: POINTS) are one claim, which the quick tier checks
  once: in English, on a 2-D mesh where one is offered, else at the smallest odd device count over one, else at the
  fewest devices over one. Every other parameter (a page, an error, a program) names a claim of its own.
So a test added to tests/core or tests/pages is quick at one point, and one added anywhere else is full only.

The full tier runs every claim at the device counts where it can differ, once each (`repeats`): of a claim's
device counts (DEVICE_COUNT_POINTS) one per kind: one device (nothing to split), an odd count, an even count that is
no power of two, a power of two (8, the default, where it is one of them), more than 8; the others repeat a kind
and run only with `--every-point`. Where a claim runs in both languages at several kinds of count, each kind runs in
one language, English and 中文 in turn, so that each language is seen once and neither at every count. The quick
tier chooses among what the full tier runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

QUICK_LEVELS = ("tests/core/", "tests/pages/")
QUICK_SYSTEM_TESTS = {  # a test by its id without parameters
    "tests/system/test_cli_training.py::test_train_prints_one_json_object_and_logs_the_run",
    "tests/system/test_commbench_cli.py::test_cli_rejects_a_bad_sweep",
    "tests/system/test_export.py::test_the_cli_refuses_bad_settings_in_one_line",
    "tests/system/test_plan_cli.py::test_a_bad_global_batch_is_refused_in_one_line",
    "tests/system/test_deployment_checks.py::test_a_store_that_does_not_answer_fails_the_checks_in_one_line",
}
FULL_ONLY = {  # a module, or a test by its id without parameters
    "tests/pages/test_extremes.py": "every widget of every page at both ends; each page opens on its defaults and "
                                    "moves one widget in tests/pages/test_moved_from_browser.py",
    "tests/pages/test_trace_view_more.py": "a page's trace is shown in tests/pages/test_trace_view.py (ZeRO) and "
                                           "logged to a run by the CLI's test (tests/system/test_cli_profile.py); "
                                           "the straggler is read from its traces in tests/core/test_profiling.py",
    "tests/core/test_profiling_pipeline.py": "the pipeline page reads the bubble of P = 2, M = 4 from a trace "
                                             "(tests/pages/test_trace_view.py)",
    "tests/pages/test_app_pages.py": "a check of the page benchmark's harness, not of the lab: the quick tier runs "
                                     "the pages it times",
}
MESH_POINTS = {"devices", "runtime", "data", "model", "seq", "expert", "stages", "mesh", "n", "p", "t"}
DEVICE_COUNT_POINTS = {"devices", "runtime", "n"}  # a process's or a run's device count; the other axes are shapes
POINTS = MESH_POINTS | {"micro", "layers", "lang"}


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def level_of(module: str) -> str:
    return module.rsplit("/", 1)[0]


def point(name: str, value: Any) -> tuple[int, ...] | None:
    """The sizes of the mesh axes that `name = value` sets (() for a language, or a size that is no mesh axis), or
    None where it is no point but a claim of its own (a device count of "abc" is an input to refuse)."""
    if name not in POINTS:
        return None
    if name == "lang":
        return () if value in ("en", "zh") else None
    if isinstance(value, str) and value.replace("x", "").isdigit():  # a mesh written "2x4"
        sizes = tuple(int(size) for size in value.split("x"))
    elif isinstance(value, int) and not isinstance(value, bool):
        sizes = (value,)
    else:
        return None
    return sizes if name in MESH_POINTS else ()


def claim_and_rank(nodeid: str, params: Mapping[str, Any]) -> tuple[tuple, tuple]:
    """(the claim a test checks, the rank of its point within that claim: the lowest is the quick tier's)."""
    claim, axes = [nodeid.split("[", 1)[0]], []
    for name, value in params.items():
        sizes = point(name, value)
        if sizes is None:
            claim.append((name, repr(value)))
        else:
            axes.extend(sizes)
    devices = math.prod(axes)
    odd = devices % 2 == 1 and devices > 1
    return tuple(claim), (params.get("lang", "en") != "en", -sum(size > 1 for size in axes), not odd, devices)


def count_kind(devices: int) -> tuple[int, int]:
    """(the kind of a device count, its preference within the kind: the lowest runs)."""
    if devices == 1:
        return 0, 0
    if devices > 8:
        return 4, devices
    if devices % 2:
        return 1, devices
    if devices & (devices - 1):
        return 2, devices
    return 3, abs(8 - devices)


def repeats(tests: Iterable[tuple[str, Mapping[str, Any]]]) -> set[str]:
    """The ids among `tests`, each (id, parameters), that repeat a kind of device count (or a language) another of
    the same claim runs: the full tier leaves them out."""
    groups: dict[tuple, list[tuple[tuple[int, int], str, str]]] = {}
    for nodeid, params in tests:
        counts = [math.prod(sizes) for name, value in params.items()
                  if name in DEVICE_COUNT_POINTS and (sizes := point(name, value))]
        lang = params.get("lang")
        rest = tuple((name, repr(value)) for name, value in params.items()
                     if name not in DEVICE_COUNT_POINTS and not (name == "lang" and point(name, value) == ()))
        if len(counts) != 1:  # no device count (or two): a claim of its own
            continue
        groups.setdefault((nodeid.split("[", 1)[0], rest), []).append((count_kind(counts[0]), lang, nodeid))
    left_out = set()
    for points in groups.values():
        best: dict[int, dict[str | None, tuple]] = {}
        for (kind, rank), lang, nodeid in points:
            if lang not in best.setdefault(kind, {}) or rank < best[kind][lang][0]:
                best[kind][lang] = (rank, nodeid)
        langs = sorted({lang for _, lang, _ in points}, key=lambda lang: lang != "en")
        several = len(best) > 1
        kept = set()
        for turn, kind in enumerate(sorted(best)):
            by_lang = best[kind]
            if not several:  # one kind of count: every language
                kept.update(nodeid for _, nodeid in by_lang.values())
                continue
            wanted = langs[turn % len(langs)]
            kept.add((by_lang.get(wanted) or min(by_lang.values()))[1])
        left_out.update(nodeid for _, _, nodeid in points if nodeid not in kept)
    return left_out


def quick(tests: Iterable[tuple[str, Mapping[str, Any], bool]]) -> set[str]:
    """The ids of the quick tier among `tests`, each (id, parameters, marked alone), in the order collected."""
    best: dict[tuple, tuple[tuple, str]] = {}
    for nodeid, params, alone in tests:
        test = nodeid.split("[", 1)[0]
        chosen = nodeid.startswith(QUICK_LEVELS) or test in QUICK_SYSTEM_TESTS
        if chosen and not alone and not FULL_ONLY.keys() & {module_of(nodeid), test}:
            claim, rank = claim_and_rank(nodeid, params)
            if claim not in best or rank < best[claim][0]:
                best[claim] = (rank, nodeid)
    return {nodeid for _, nodeid in best.values()}


def queue_seconds(measured: Mapping[str, float], collected: Mapping[str, int],
                  selected: Mapping[str, int]) -> dict[str, float]:
    """Each selected module's expected seconds: its measured seconds (tests/durations.json), or for a module not
    measured yet its number of tests at the seconds a test of its level takes in the measured modules; times the
    share of its tests this run selects."""
    known = [module for module in collected if module in measured]
    per_test = {}
    for level in {level_of(module) for module in collected}:
        same = [module for module in known if level_of(module) == level]
        per_test[level] = sum(measured[m] for m in same) / max(1, sum(collected[m] for m in same))
    return {module: measured.get(module, per_test[level_of(module)] * collected[module])
            * count / max(1, collected[module]) for module, count in selected.items()}
