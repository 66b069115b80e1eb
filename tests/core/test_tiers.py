"""The suite's tiers and queue (tests/tiers.py): which tests the quick tier runs, and how long a module is expected
to take, on made-up test ids (the rules read ids and parameters only)."""

import pathlib

import pytest

from tests import tiers

ROOT = pathlib.Path(__file__).resolve().parents[2]

CORE = "tests/core/test_x.py::test_claim"


def test_a_claim_at_several_device_counts_and_languages_is_quick_once_in_english_at_an_odd_count():
    tests = [(f"{CORE}[{devices}-{lang}]", {"devices": devices, "lang": lang}, False)
             for devices in (1, 2, 3, 5, 8) for lang in ("zh", "en")]
    assert tiers.quick(tests) == {f"{CORE}[3-en]"}


def test_a_two_d_mesh_comes_before_an_odd_count_and_one_device_last():
    meshes = [(1, 1), (3, 1), (1, 2), (2, 2), (2, 4)]
    tests = [(f"{CORE}[{data}-{model}]", {"data": data, "model": model}, False) for data, model in meshes]
    assert tiers.quick(tests) == {f"{CORE}[2-2]"}
    written = [(f"{CORE}[{mesh}]", {"mesh": mesh}, False) for mesh in ("8", "1x1", "2x3", "4x2")]
    assert tiers.quick(written) == {f"{CORE}[2x3]"}
    powers = [(f"{CORE}[{devices}]", {"devices": devices}, False) for devices in (1, 8, 2)]
    assert tiers.quick(powers) == {f"{CORE}[2]"}


def test_the_full_tier_runs_each_kind_of_device_count_once_and_each_language_once():
    tests = [(f"{CORE}[{devices}-{lang}]", {"devices": devices, "lang": lang})
             for devices in (1, 2, 3, 4, 5, 6, 8, 16, 64) for lang in ("en", "zh")]
    kept = {nodeid for nodeid, _ in tests} - tiers.repeats(tests)
    # One device, an odd count, an even count no power of two, 8, more than 8; languages in turn.
    assert kept == {f"{CORE}[1-en]", f"{CORE}[3-zh]", f"{CORE}[6-en]", f"{CORE}[8-zh]", f"{CORE}[16-en]"}
    powers = [(f"{CORE}[{devices}]", {"devices": devices}) for devices in (1, 2, 4)]
    assert tiers.repeats(powers) == {f"{CORE}[2]"}  # the power of two nearest 8


def test_a_claim_at_one_kind_of_count_keeps_both_languages_and_other_parameters_stay_claims():
    tests = [(f"{CORE}[{devices}-{lang}]", {"devices": devices, "lang": lang}) for devices in (2, 8)
             for lang in ("en", "zh")]
    assert tiers.repeats(tests) == {f"{CORE}[2-en]", f"{CORE}[2-zh]"}
    shapes = [(f"{CORE}[{data}-{model}]", {"data": data, "model": model}) for data in (1, 2, 4) for model in (2, 4)]
    pages = [(f"{CORE}[{page}-{devices}]", {"page": page, "devices": devices}) for page in ("a", "b")
             for devices in (2, 8)]
    assert tiers.repeats(shapes) == set()  # a mesh's axes are shapes, each a claim
    assert tiers.repeats(pages) == {f"{CORE}[a-2]", f"{CORE}[b-2]"}
    assert tiers.repeats([(f"{CORE}[abc]", {"devices": "abc"}), (f"{CORE}[2]", {"devices": 2})]) == set()


def test_every_other_parameter_is_a_claim_of_its_own():
    tests = [(f"{CORE}[{page}-{devices}]", {"page": page, "devices": devices}, False)
             for page in ("home", "training") for devices in (1, 3)]
    tests += [(f"{CORE}[abc]", {"devices": "abc"}, False), (f"{CORE}[True]", {"devices": True}, False)]
    assert tiers.quick(tests) == {f"{CORE}[home-3]", f"{CORE}[training-3]", f"{CORE}[abc]", f"{CORE}[True]"}


def test_only_the_in_process_levels_and_the_cli_commands_are_quick():
    ids = ["tests/core/test_a.py::test_a", "tests/pages/test_b.py::test_b", "tests/system/test_c.py::test_c",
           "tests/browser/test_d.py::test_d", *tiers.QUICK_SYSTEM_TESTS]
    assert tiers.quick((nodeid, {}, False) for nodeid in ids) == {*ids[:2], *tiers.QUICK_SYSTEM_TESTS}
    assert all(nodeid.startswith("tests/system/") for nodeid in tiers.QUICK_SYSTEM_TESTS)
    assert tiers.quick([("tests/core/test_a.py::test_a", {}, True)]) == set()  # marked alone


@pytest.mark.parametrize("full_only", sorted(tiers.FULL_ONLY))
def test_a_full_only_entry_names_a_test_of_a_quick_level_and_keeps_it_out(full_only):
    assert full_only.startswith(tiers.QUICK_LEVELS) and tiers.FULL_ONLY[full_only]
    assert tiers.quick([(f"{full_only}::test_one[3]", {"devices": 3}, False), (full_only, {}, False)]) == set()


def test_a_module_not_measured_yet_is_estimated_from_its_tests_not_put_last():
    measured = {"tests/core/test_a.py": 30.0, "tests/core/test_b.py": 10.0, "tests/browser/test_c.py": 100.0}
    collected = {"tests/core/test_a.py": 10, "tests/core/test_b.py": 10, "tests/core/test_new.py": 12,
                 "tests/browser/test_c.py": 2, "tests/browser/test_new.py": 1}
    seconds = tiers.queue_seconds(measured, collected, collected)
    assert seconds["tests/core/test_new.py"] == pytest.approx(12 * 40 / 20)  # 2 s a test of tests/core
    assert seconds["tests/browser/test_new.py"] == pytest.approx(50.0)  # 50 s a test of tests/browser
    assert sorted(seconds, key=seconds.get, reverse=True)[:3] == [
        "tests/browser/test_c.py", "tests/browser/test_new.py", "tests/core/test_a.py"]


def test_a_module_run_in_part_is_expected_to_take_its_part():
    seconds = tiers.queue_seconds({"tests/core/test_a.py": 30.0}, {"tests/core/test_a.py": 10},
                                  {"tests/core/test_a.py": 4})
    assert seconds == {"tests/core/test_a.py": pytest.approx(12.0)}


@pytest.mark.parametrize("nodeid", sorted(tiers.QUICK_SYSTEM_TESTS | tiers.FULL_ONLY.keys()))
def test_every_test_the_rules_name_exists(nodeid):
    """A test renamed or removed would leave the quick tier without it, silently: each named one is still there."""
    module, _, name = nodeid.partition("::")
    source = (ROOT / module).read_text()
    assert not name or f"def {name}(" in source, nodeid
