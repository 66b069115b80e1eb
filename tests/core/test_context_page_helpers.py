"""What the Context parallelism page, its worksheet and its questions read from `concepts.context`: the page's
settings checked as the CLI checks them (one LabInputError each), Ulysses refused where the program refuses it, the
ring's attention bytes against all-gather's from compiled steps, the work ratio, the sweep's lengths, the s²
coefficient of the residuals per device against one device's (1/P for all-gather and Ulysses, at most that for the
ring), the ring's overlap condition worked out by hand from the cited figures."""

from __future__ import annotations

import dataclasses

import jax
import pytest

from pmap_core.concepts import context as cp
from pmap_core.costs import analytic
from pmap_core.train import models, transformer
from pmap_core.validation import LabInputError

SMALL = dict(batch=4, seq_len=16, d_model=8, heads=2, layers=2)


@pytest.mark.parametrize(("changes", "code"), [
    (dict(devices=3), "mesh_not_divisible"),                       # 3 does not divide seq_len 16 (nor batch 4)
    (dict(devices=4, seq_len=12, layout="zigzag"), "zigzag_not_divisible"),
    (dict(devices=2, batch=3), "batch_not_divisible"),
    (dict(devices=2, d_model=9), "block_not_divisible"),
    (dict(devices=2, layers=1), "out_of_range"),
    (dict(devices=cp.MAX_DEVICES + 1), "out_of_range"),
    (dict(devices=2, seq_len=cp.MAX_SEQ_LEN + 2), "out_of_range"),
    (dict(devices=2, layout="striped"), "unknown_context_layout"),
])
def test_settings_the_program_would_refuse_are_one_error_each(changes, code):
    with pytest.raises(LabInputError) as refused:
        cp.check_settings(**{**SMALL, **changes})
    assert refused.value.code == code and "\n" not in str(refused.value)


def test_settings_that_run_and_the_schemes_each_allows():
    settings = cp.check_settings(**SMALL, devices=4, layout="zigzag")
    assert (settings.devices, settings.block, settings.dims.seq_len, settings.dims.vocab) == (4, 4, 16, cp.VOCAB)
    allowed = cp.schemes_for(settings)
    assert allowed["allgather"] is None and allowed["ring"] is None
    assert allowed["ulysses"].code == "ulysses_needs_heads"  # 4 devices, 2 heads
    assert all(v is None for v in cp.schemes_for(dataclasses.replace(settings, devices=2)).values())


def test_ulysses_runs_where_the_seq_axis_divides_the_heads():
    assert cp.ulysses_devices(4) == (1, 2, 4)
    assert cp.ulysses_devices(6) == (1, 2, 3, 6)
    assert [cp.ulysses_max_devices(h) for h in (1, 4, 6, 8)] == [1, 4, 6, 8]


def test_bytes_of_the_schemes_own_collectives_and_their_comparison():
    assert cp.attention_bytes({"all-gather": 10.0, "reduce-scatter": 10.0, "all-reduce": 5.0}) == 20.0
    assert cp.compare(100.0, 100.0) == cp.compare(101.0, 100.0) == cp.SAME
    assert cp.compare(90.0, 100.0) == cp.FEWER and cp.compare(110.0, 100.0) == cp.MORE
    assert cp.compare(0.0, 0.0) == cp.SAME


@pytest.mark.parametrize("devices", [1, 2])
def test_the_ring_sends_what_all_gather_sends_and_the_formula_says(devices):
    ring, gathered = (cp.sent_bytes(**SMALL, devices=devices, scheme=s) for s in ("ring", "allgather"))
    block = SMALL["batch"] * SMALL["seq_len"] // devices * SMALL["d_model"] * 4
    assert ring == gathered == 4 * (devices - 1) * block * SMALL["layers"]  # K and V, forward and backward
    dims = transformer.Dims(SMALL["d_model"], SMALL["heads"], SMALL["seq_len"], cp.VOCAB)
    assert cp.formula_attention_bytes("ring", dims, SMALL["layers"], SMALL["batch"], devices) == ring
    settings = cp.check_settings(**SMALL, devices=devices)
    heard = []
    measurement = cp.measured(settings, heard.append)
    assert heard == [*cp.SCHEMES, cp.ONE_DEVICE] and not measurement.refused
    assert cp.ring_vs_allgather(measurement) == cp.SAME
    assert cp.measured(settings).steps["ring"] is measurement.steps["ring"]  # kept for the next click
    assert cp.loss_gap(measurement) < 1e-5
    assert measurement.reference_loss == cp.measure(dims, SMALL["layers"], SMALL["batch"], devices).reference_loss


def test_the_pages_first_settings_run_on_every_device_count_it_allows():
    for devices in range(1, cp.MAX_DEVICES + 1):
        seq_len, batch = cp.default_seq_len(devices), cp.default_batch(devices)
        assert seq_len >= 32 and seq_len % (2 * devices) == 0 and batch >= 4 and batch % devices == 0, devices
        for layout in cp.LAYOUTS if devices <= jax.device_count() else ():  # the devices there are
            cp.check_settings(batch, seq_len, 32, 4, 2, devices, layout)  # no error
    assert (cp.default_seq_len(3), cp.default_batch(3), cp.default_seq_len(8), cp.default_batch(8)) == (36, 6, 32, 8)


def test_the_largest_settings_are_within_the_programs_limits():
    """Every widget at its maximum: the program's own checks (the work of a run included) accept it."""
    biggest = cp.check_settings(cp.MAX_BATCH, cp.MAX_SEQ_LEN, cp.MAX_D_MODEL, cp.MAX_HEADS, cp.MAX_LAYERS,
                                min(cp.MAX_DEVICES, jax.device_count()), "zigzag")
    assert all(refused is None for refused in cp.schemes_for(biggest).values())


def test_work_ratio_and_the_sweeps_lengths():
    assert cp.work_ratio(32, 4) == pytest.approx((25 + 32) * 8 / 2 / 36)  # positions 24–31 over 0–7
    assert cp.work_ratio(32, 4, "zigzag") == 1.0
    for devices in range(1, cp.MAX_DEVICES + 1):
        for layout in cp.LAYOUTS:
            lens = cp.sweep_seq_lens(devices, layout)
            chunks = devices * (2 if layout == "zigzag" else 1)
            assert len(lens) == 4 and lens[0] >= 8 and all(s % chunks == 0 for s in lens), (devices, layout)
            assert lens == tuple(lens[0] * k for k in (1, 2, 3, 4)) and lens[-1] <= cp.MAX_SEQ_LEN


def test_one_device_residuals_are_the_unsplit_models():
    dims = transformer.Dims(8, 2, 16, cp.VOCAB)
    params = transformer.init_params(dims, 2, 0)
    x, y = transformer.make_sequences(dims, 4, 0)
    expected = models.residual_bytes(models.saved_residuals(lambda p, x_, y_: transformer.loss(p, x_, y_),
                                                            params, x, y))
    assert cp.residual_bytes(dims, 2, 4, 1, cp.ONE_DEVICE) == expected


@pytest.mark.parametrize("devices", [2, 3])
def test_the_square_term_per_device_falls_as_one_over_p(devices):
    batch = 2 * devices
    for scheme in ("allgather", "ulysses"):
        if scheme == "ulysses" and 2 % devices:
            continue
        assert cp.quadratic_share(batch, 8, 2, 2, devices, scheme) == pytest.approx(1 / devices, rel=1e-6)
    assert cp.quadratic_share(batch, 8, 2, 2, devices, "ring") <= 1 / devices * (1 + 1e-6)
    settings = cp.check_settings(batch, 24, 8, 2, 2, devices)
    sweeps = {s.scheme: s for s in cp.sweep_residuals(settings)}
    assert set(sweeps) == {cp.ONE_DEVICE, "allgather", "ring", *(["ulysses"] if devices == 2 else [])}
    assert sweeps["allgather"].fit[2] == pytest.approx(sweeps[cp.ONE_DEVICE].fit[2] / devices, rel=1e-6)


def test_the_rings_overlap_condition_by_hand():
    chip, wire = analytic.ACCELERATORS["h100"], analytic.LINKS["nvlink4_h100"]
    found = cp.overlap("h100", "nvlink4_h100")
    assert found.min_block == pytest.approx(2 * chip.peak_tflops * 1e12 / (2 * wire.bandwidth_gbps * 1e9))
    assert cp.overlap_block("h100", "ib_ndr") == pytest.approx(989e12 / 50e9)
    compute, transfer = found.times(round(found.min_block), 1, 4096)
    assert compute == pytest.approx(transfer, rel=1e-3)  # at the threshold the two times meet
    assert all(o.min_block > 0 for o in cp.overlaps()) and len(cp.overlaps()) == len(cp.OVERLAP_PAIRS)
