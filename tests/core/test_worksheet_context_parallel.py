"""Sheet 12 (context parallelism) against references worked out apart from the functions it names: the ring's block
at step 1 by (i − k) mod P, the causal pairs of contiguous and zig-zag blocks by the sum 1 + 2 + … , the ring's bytes
by 4(P − 1) blocks a layer, the s² share by 1/P, Ulysses's cap by the divisors of the heads, the overlap condition by
w·F/(2β) from the vendors' figures. The two steps that run on devices are checked bound to D = 1, 2, 3 and 5 (P = 1,
2, 3 and 4)."""

import pytest

from pmap_core.costs import analytic
from pmap_core.practice import worksheets

SHEET = next(sheet for sheet in worksheets.load_sheets().sheets if sheet.id == "12_context_parallel")


def pairs(positions) -> int:
    """Unmasked (query, key) pairs of these query positions under the causal mask."""
    return sum(j + 1 for j in positions)


@pytest.fixture(scope="module")
def answers():
    return {step.id: worksheets.compute_answer(step, None) for step in SHEET.at(1).steps}


def test_the_sheet_has_at_least_five_steps_on_the_lab():
    assert len(SHEET.steps) >= 5 and {step.lab for step in SHEET.steps} == {"context_parallel"}
    bound = [step.id for step in SHEET.steps if step.devices is not None]
    assert bound == ["ring_bytes", "square_share"]


def test_the_steps_that_need_no_device(answers):
    assert answers["ring_block"] == (0 - 1) % 4 == 3
    assert answers["contiguous_ratio"] == pytest.approx(pairs(range(36, 48)) / pairs(range(12)))
    assert answers["contiguous_ratio"] == pytest.approx(510 / 78)  # as the explanation says
    assert answers["zigzag_pairs"] == pairs([*range(6), *range(42, 48)]) == 21 + 273 == pairs(range(48)) / 4
    assert answers["ulysses_most"] == max(d for d in range(1, 9) if 12 % d == 0) == 6
    chip, link = analytic.ACCELERATORS["h100"], analytic.LINKS["ib_ndr"]
    assert answers["overlap_block"] == pytest.approx(2 * chip.peak_tflops * 1e12 / (2 * link.bandwidth_gbps * 1e9))
    nvlink = analytic.LINKS["nvlink4_h100"].bandwidth_gbps
    assert nvlink / link.bandwidth_gbps == 9  # "a ninth of that suffices"


@pytest.mark.parametrize(("runtime", "p"), [(1, 1), (2, 2), (3, 3), (5, 4)])
def test_the_steps_that_run_on_devices_at_each_d(runtime, p):
    steps = {step.id: step for step in SHEET.at(runtime).steps}
    for step_id in ("ring_bytes", "square_share"):
        assert steps[step_id].values["devices"] == steps[step_id].settings["devices"] == p
    block = 12 * (24 // p) * 16 * 4
    assert worksheets.compute_answer(steps["ring_bytes"]) == 4 * (p - 1) * block * 2
    assert worksheets.compute_answer(steps["square_share"]) == pytest.approx(1 / p, rel=1e-6)
    for step in steps.values():
        assert worksheets.is_correct(step, worksheets.compute_answer(step), worksheets.compute_answer(step))
