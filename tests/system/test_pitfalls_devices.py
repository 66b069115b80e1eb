"""The mistakes page's entries at other device counts, each count in a child process of its own (the
count is fixed per process): every claim holds with 1 and 3 devices (8, the default, is tests/core's), exactly
the entries that need two devices differ at one, and the page at one device says which."""


import pytest

from labs.texts import table as text_table
from pmap_core.practice import pitfalls

# One process per count (fixed per process), all at once.
PITFALL_DEVICE_COUNTS = (1, 3)


@pytest.fixture(scope="module")
def pitfalls_at_each_device_count():
    from harness.processes import json_at_device_counts

    return json_at_device_counts(["-m", "tests.children.pitfall_runs"], PITFALL_DEVICE_COUNTS, timeout=600)


@pytest.mark.parametrize("devices", PITFALL_DEVICE_COUNTS)
def test_every_claim_holds_at_each_device_count(pitfalls_at_each_device_count, devices):
    """What the page says holds with 1 and 3 devices too: one device is where an app may start."""
    from pmap_core.practice.pitfalls import entries

    for pitfall_id, got in pitfalls_at_each_device_count[devices].items():
        assert got["claim"] and not got["fix_raised"], (devices, pitfall_id, got["mistake"])
        assert got["differs_here"] == (devices == 1 and pitfall_id in entries.NEEDS_TWO_DEVICES)
        if not got["differs_here"]:  # a raising entry raises, any other runs
            assert got["raised"] == (got["kind"] == pitfalls.RAISES), (devices, pitfall_id, got["mistake"])
        else:  # with one device the mistake runs: the page's one-device note says so
            assert not got["raised"], (pitfall_id, got["mistake"])
        # The kind the page states here is the kind the run showed: with one device, the fix's result.
        assert got["kind_shown"] == got["kind_here"], (devices, pitfall_id, got["mistake"])
        expected = entries.ONE_DEVICE_KINDS[pitfall_id] if got["differs_here"] else got["kind"]
        assert got["kind_here"] == expected, (devices, pitfall_id)


def test_at_one_device_exactly_the_entries_that_need_two_devices_do_not_show(pitfalls_at_each_device_count):
    from pmap_core.practice.pitfalls import entries

    one = pitfalls_at_each_device_count[1]
    not_showing = {i for i, got in one.items()
                   if (got["kind"] == pitfalls.RAISES and not got["raised"]) or got["differs_here"]}
    assert not_showing == set(entries.NEEDS_TWO_DEVICES)
    # The three leftovers this note was written for, the shard_map trap (D times the gradient is the gradient
    # at D = 1), and the two that came with the migration entries.
    assert {"unreplicated_params", "out_axes_none", "same_key", "index_output", "shard_map_trap",
            "committed_input"} == not_showing
    # All but y[0] run and give the fix's result: not an error, not a wrong number, at D = 1.
    assert {i for i, got in one.items() if got["kind_shown"] == pitfalls.HARMLESS} == not_showing - {"index_output"}


def test_mistakes_page_at_one_device_says_which_entries_need_two_and_its_claims_hold():
    """The page at D = 1 runs in a child process with one device: the note, then a run confirmed on this JAX."""
    from harness.processes import run_python

    done = run_python(["-m", "tests.children.mistakes_page_notes"], devices=1, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    table = text_table("mistakes")
    from pmap_core.practice.pitfalls import entries

    for entry in sorted(entries.NEEDS_TWO_DEVICES):
        for lang in ("en", "zh"):
            info = next(line for line in lines if line.startswith(f"{entry} {lang} INFO"))
            assert table[f"entry.{entry}.one_device"][lang] in info
            caption = next(line for line in lines if line.startswith(f"{entry} {lang} CAPTION"))
            assert table["count_one_device"][lang].format(count=len(entries.NEEDS_TWO_DEVICES)) in caption
            # The counts by kind are those of one device: 12 raise, 5 run with the fix's result.
            kinds = [entries.ONE_DEVICE_KINDS.get(e.id, e.kind) for e in entries.PITFALLS]
            count = table["count"][lang].format(count=len(kinds), raises=kinds.count(pitfalls.RAISES),
                                                silent=kinds.count(pitfalls.SILENT),
                                                wasteful=kinds.count(pitfalls.WASTEFUL))
            count += " " + table["count_harmless"][lang].format(harmless=kinds.count(pitfalls.HARMLESS))
            assert count in caption and kinds.count(pitfalls.HARMLESS) == 5, caption
        assert f"{entry} en SUCCESS 1 WARNING 0" in lines  # the claim, checked at D = 1
        kind = table[f"kind.{entries.ONE_DEVICE_KINDS[entry]}"]
        for lang in ("en", "zh"):  # the kind stated before the run (zh) and read from it (en)
            shown = next(line for line in lines if line.startswith(f"{entry} {lang} KIND"))
            assert f"**{kind[lang]}** — " in shown, shown
            assert table["kind.raises"][lang] not in shown and table["kind.silent"][lang] not in shown
    leading = next(line for line in lines if line.startswith("leading_axis en INFO"))
    assert "With one device" not in leading  # entries that show at D = 1 carry no note
    assert "leading_axis en SUCCESS 1 WARNING 0" in lines
