"""The page's helpers in `concepts.experts`: the first settings split the experts over every device, the expert axis
is gcd(D, E), bad settings are one LabInputError each, the prediction's bands, the critical batch, and a measurement
made of the same figures as the functions it gathers, and what a perfectly balanced router drops under C = ⌈c·k·T/E⌉."""

import numpy as np
import pytest

from pmap_core.concepts import experts as ce
from pmap_core.validation import LabInputError


@pytest.mark.parametrize("devices", [1, 2, 3, 5, 8])
def test_the_first_settings_run_on_every_device_count(devices):
    e, b = ce.default_experts(devices), ce.default_batch(devices)
    settings = ce.check_settings(b, e, 2, 1.25, devices)
    assert settings.expert == devices and e % devices == 0 and b % devices == 0 and e >= 4 and b >= 8


def test_the_expert_axis_is_the_greatest_common_divisor():
    assert [ce.expert_axis(d, 8) for d in (1, 2, 3, 4, 5, 6, 8)] == [1, 2, 1, 4, 1, 2, 8]


@pytest.mark.parametrize(("args", "code"), [
    ((8, 6, 2, 1.25, 4, 4), "experts_not_divisible"),
    ((8, 4, 5, 1.25, 4, None), "top_k_above_experts"),
    ((8, 8, 2, 1.25, 4, 3), "mesh_not_divisible"),
    ((4, 6, 2, 1.25, 3, None), "batch_not_divisible"),
    ((8, 8, 2, 1.25, 17, None), "out_of_range"),
    ((64, 8, 2, 1.25, 4, None), "out_of_range"),
])
def test_bad_settings_are_one_error_each(args, code):
    with pytest.raises(LabInputError) as refused:
        ce.check_settings(*args)
    assert refused.value.code == code
    assert "\n" not in str(refused.value)


def test_the_bands_and_the_critical_batch():
    assert [ce.drop_band(f) for f in (0, 0.01, 0.25, 0.49, 0.5, 1)] == [
        ce.NONE, ce.UNDER_QUARTER, ce.UNDER_HALF, ce.UNDER_HALF, ce.OVER_HALF, ce.OVER_HALF]
    assert ce.critical_batch(8, 2) == 960 and ce.critical_batch(4, 4) == ce.DENSE_CRITICAL_TOKENS
    assert ce.factors_for(1.25) == (0.5, 1.0, 1.25, 2.0, 4.0) and ce.factors_for(2) == ce.FACTORS


@pytest.mark.parametrize("devices", [1, 2])
def test_a_measurement_gathers_the_cores_figures(devices):
    settings = ce.check_settings(8, 4, 2, 1.25, devices)
    parts = []
    found = ce.measured(settings, parts.append)
    assert tuple(parts) == ce.PARTS
    dims = settings.dims
    assert found.drops == ce.dropped_by_capacity(dims, 2, 8, ce.factors_for(1.25))
    assert (found.tokens.routed == ce.tokens_per_expert(dims, 2, 8, 1, devices).routed).all()
    assert ce.answer(found) == ce.drop_band(ce.dropped_at(found.drops, 1.0).measured)
    assert ce.dropped_at(found.drops, 1.0).measured == ce.dropped_fraction(4, 2, 8)
    assert found.step.all_to_all_hlo == pytest.approx(found.step.all_to_all_formula)
    assert ce.buffer_elements(settings) == 8 // devices * 4 * 10 * 16  # C = ⌈1.25 · 16 · 2 / 4⌉ = 10
    if devices == 1:
        assert found.versus is None and found.step.all_to_all_hlo == 0
    else:
        assert found.versus.ratio == pytest.approx(1 / devices)
        assert found.versus.array_bytes == ce.buffer_elements(settings) * devices * 4


def round_robin_loads(seq_len: int, top_k: int, experts: int) -> np.ndarray:
    """One sequence routed by a perfectly balanced router: token i chooses experts (i·k + j) mod E, j < k (k different
    experts a token); each expert's count of choices."""
    load = np.zeros(experts, dtype=int)
    for i in range(seq_len):
        for j in range(top_k):
            load[(i * top_k + j) % experts] += 1
    return load


@pytest.mark.parametrize("devices", [1, 3, 6, 7])
def test_a_perfectly_balanced_router_drops_what_its_loads_exceed_the_slots_by(devices):
    """The page's first E on D devices (4, 6, 6, 7; k = 2, T = 16): k·T/E = 8, 5.33, 5.33, 4.57. At c = 1 the slots
    C = ⌈k·T/E⌉ are the most a balanced router sends one expert (exactly k·T/E only where E divides k·T); at c = 0.5 it
    drops 0.5, 0.4375, 0.4375, 0.34375 of its choices, not max(0, 1 − c) = 0.5 where E does not divide k·T."""
    e, t, k = ce.default_experts(devices), ce.PAGE_SEQ_LEN, 2
    load = round_robin_loads(t, k, e)
    assert load.sum() == k * t and load.max() - load.min() <= 1
    loads = ce.balanced_loads(t, k, e)
    assert (loads.low, loads.most, loads.high_count) == (load.min(), load.max(), int((load > load.min()).sum()))
    for c in ce.factors_for(1.25):
        over = np.maximum(load - ce.capacity(c, t, k, e), 0).sum()
        assert ce.balanced_dropped(c, t, k, e) == over / (k * t) <= max(0.0, 1 - c)
    assert ce.capacity(1, t, k, e) == loads.most and ce.balanced_dropped(1, t, k, e) == 0
    assert (ce.capacity(1, t, k, e) == k * t / e) == (devices == 1)
    assert ce.balanced_dropped(0.5, t, k, e) == {1: 0.5, 3: 0.4375, 6: 0.4375, 7: 0.34375}[devices]
    # The page's rows carry it beside what the router drops.
    dims = ce.check_settings(ce.default_batch(devices), e, k, 1.25, devices).dims
    rows = ce.dropped_by_capacity(dims, ce.PAGE_LAYERS, ce.default_batch(devices), (0.5,))
    assert [row.balanced for row in rows] == [ce.balanced_dropped(0.5, t, k, e)]
