"""Sharded data parallelism (ZeRO 1–3 / FSDP), gradient accumulation, bfloat16 gradients and mixed
precision: the same parameters as replicated DP at every D, bytes measured from real shards, compiled
HLO and the compiled program's memory, against the sources' formulas."""

import dataclasses

import numpy as np
import pytest

from pmap_core.cli.commands import main
from pmap_core.costs import analytic
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

# 321 parameters in two layers: w1 (8, 32) and b1 (32,), 288 values; w2 (32,) and b2, 33 values.
ADAM_MLP = TrainConfig(model="mlp", impl="jit", optimizer="adam", global_batch=64, hidden=32, features=8,
                       steps=4, chunk=4, learning_rate=0.01, seed=1)
RTOL = 1e-5
# The sharded strategies compile another program for the same sums (flat, padded layer buffers; a
# reduce-scatter, not an all-reduce), and Adam moves a parameter whose gradient is near zero by about
# ±η whatever its size: measured, the largest difference to dp is 3.0e-6 (b1[8], D = 2, η = 0.01).
ATOL = 1e-5


def run(**changes):
    return train(validate(dataclasses.replace(ADAM_MLP, **changes)), measure_scaling=False)


def assert_same_params(result, reference, rtol=RTOL):
    for name, value in reference.params.items():
        np.testing.assert_allclose(result.params[name], value, rtol=rtol, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("devices", [1, 2, 8])
def test_every_strategy_ends_with_dps_parameters(devices):
    dp = run(devices=devices)
    for strategy in ("zero1", "zero2", "zero3"):
        result = run(devices=devices, strategy=strategy)
        assert_same_params(result, dp)
        assert result.final_loss == pytest.approx(dp.final_loss, rel=RTOL)
        assert result.replicas_identical


def test_at_eight_devices_each_strategy_holds_an_eighth_of_what_it_shards():
    dp, zero1, zero2, zero3 = (run(devices=8, strategy=s).footprint for s in ("dp", "zero1", "zero2", "zero3"))
    assert zero3.param_bytes_per_device == pytest.approx(dp.param_bytes_per_device / 8, rel=0.1)
    assert zero1.opt_bytes_per_device == pytest.approx(dp.opt_bytes_per_device / 8, rel=0.1)
    assert zero2.grad_bytes_per_device == pytest.approx(dp.grad_bytes_per_device / 8, rel=0.1)
    assert dp.param_bytes_per_device == 321 * 4 and dp.padding_bytes_per_device == 0
    # zero1 and zero2 hold the whole params: every layer's flat buffer padded to a multiple of 8.
    assert zero1.param_bytes_per_device == zero2.param_bytes_per_device == 321 * 4 + zero1.padding_bytes_per_device
    assert zero1.padding_bytes_per_device == (328 - 321) * 4  # layers of 288 and 33 values: 288 + 40
    # The collectives each strategy claims, read from the compiled HLO (ZeRO §7.2).
    assert set(dp.comm_by_kind) == {"all-reduce"}
    assert set(zero1.comm_by_kind) == set(zero2.comm_by_kind) == set(zero3.comm_by_kind) == {
        "reduce-scatter", "all-gather"}
    for footprint in (dp, zero1, zero2, zero3):
        assert footprint.ratios()["comm"] == pytest.approx(1.0, abs=0.05)
        assert footprint.ratios()["param"] == pytest.approx(1.0, abs=0.05)


@pytest.mark.parametrize("devices", [3, 6])
def test_at_a_count_the_layers_do_not_divide_every_strategy_shards_and_matches_dp(devices):
    dp = run(devices=devices, global_batch=6 * 7 * 4)
    for strategy, sharded in (("zero1", ("opt",)), ("zero2", ("opt", "grad")), ("zero3", ("opt", "grad", "param"))):
        result = run(devices=devices, global_batch=6 * 7 * 4, strategy=strategy)
        assert result.final_loss == pytest.approx(dp.final_loss, rel=1e-5)
        for kind in sharded:
            held = getattr(result.footprint, f"{kind}_bytes_per_device")
            assert held <= 1.1 * getattr(dp.footprint, f"{kind}_bytes_per_device") / devices, (strategy, kind)
        if strategy == "zero1":  # whole params: each layer (288 and 33 values) padded to a multiple of D
            assert result.footprint.padding_bytes_per_device == 4 * (-288 % devices + -33 % devices)


def test_at_eight_devices_zero1_and_zero2_send_what_dp_does_and_zero3_half_as_much_again():
    config = dict(devices=8, hidden=256, global_batch=256)
    dp, zero1, zero2, zero3 = (run(strategy=s, **config).footprint for s in ("dp", "zero1", "zero2", "zero3"))
    for footprint in (zero1, zero2):
        assert footprint.comm_bytes_per_step == pytest.approx(dp.comm_bytes_per_step, rel=0.05)
    assert zero3.comm_bytes_per_step >= 1.3 * dp.comm_bytes_per_step
    # Per layer, a gather for the forward and one for the backward: twice the reduce-scatter's bytes.
    assert zero3.comm_by_kind["all-gather"] == pytest.approx(2 * zero3.comm_by_kind["reduce-scatter"], rel=0.01)


@pytest.mark.parametrize("hidden", [256, 1024])
def test_zero3_holds_less_at_its_peak_than_dp(hidden):
    dp, zero3 = (run(devices=8, hidden=hidden, global_batch=256, strategy=s).footprint for s in ("dp", "zero3"))
    assert zero3.peak_bytes_per_device < dp.peak_bytes_per_device
    assert dp.compiled_memory["argument_size_in_bytes"] >= dp.param_bytes_per_device + dp.opt_bytes_per_device


def test_mixed_precision_holds_the_papers_sixteen_bytes_a_parameter_and_zero3_an_eighth():
    def bytes_per_param(strategy):
        f = run(devices=8, hidden=256, global_batch=256, precision="mixed", strategy=strategy).footprint
        return (f.param_bytes_per_device + f.grad_bytes_per_device + f.opt_bytes_per_device) / f.param_count

    assert bytes_per_param("dp") == pytest.approx(16, abs=0.5)
    assert bytes_per_param("zero1") == pytest.approx(2 + 2 + 12 / 8, abs=0.25)
    assert bytes_per_param("zero3") == pytest.approx(2, abs=0.25)
    mixed, f32 = run(devices=4, precision="mixed", steps=20, chunk=10), run(devices=4, steps=20, chunk=10)
    assert mixed.final_loss == pytest.approx(f32.final_loss, rel=0.05)  # bfloat16 rounding, the same descent


def test_the_accumulator_is_whole_for_zero1_and_a_shard_for_zero2():
    zero1, zero2 = (run(devices=4, global_batch=256, accum_steps=4, strategy=s).footprint for s in ("zero1", "zero2"))
    assert zero1.grad_bytes_per_device == zero1.param_bytes_per_device  # the whole local sum, reduce-scattered once
    assert zero1.reductions_per_step == 1 and zero1.deepest_loop == 1
    assert zero2.grad_bytes_per_device == pytest.approx(zero1.grad_bytes_per_device / 4, rel=0.1)
    assert zero2.reductions_per_step == 4 and zero2.deepest_loop == 2  # a reduce-scatter per micro-batch


def test_accumulating_four_micro_batches_is_one_step_on_the_whole_batch():
    one = run(devices=4, global_batch=256)
    four = run(devices=4, global_batch=256, accum_steps=4)
    assert_same_params(four, one)
    # One gradient collective per step (per 4 micro-batches), none inside the micro-batch loop.
    assert four.footprint.reductions_per_step == one.footprint.reductions_per_step == 1
    assert four.footprint.deepest_loop == 1
    assert four.footprint.comm_bytes_per_step == one.footprint.comm_bytes_per_step


def test_bfloat16_gradients_halve_the_gradient_collective():
    f32 = run(devices=4, strategy="zero2")
    bf16 = run(devices=4, strategy="zero2", grad_dtype="bfloat16")
    assert bf16.footprint.emitted_grad_comm_bytes_per_step == f32.footprint.emitted_grad_comm_bytes_per_step / 2
    np.testing.assert_allclose(bf16.losses, f32.losses, rtol=1e-2)  # rounded gradients, nearly the same curve
    assert bf16.losses != f32.losses


def test_the_textbook_formulas():
    psi = 1e9
    assert analytic.zero_memory_per_device(psi, 8, "dp", 2, 2, 12).total == 16 * psi  # ZeRO §3
    assert analytic.zero_memory_per_device(psi, 8, "zero3", 2, 2, 12).total == 2 * psi
    assert analytic.zero_memory_per_device(psi, 4, "zero1", 2, 2, 12).total == 4 * psi + 3 * psi
    assert analytic.zero_comm_bytes_per_step(psi, 8, "dp", 1, 1) == pytest.approx(2 * psi * 7 / 8)
    assert analytic.zero_comm_bytes_per_step(psi, 8, "zero1", 1, 1) == pytest.approx(2 * psi * 7 / 8)  # §7.2.1
    assert analytic.zero_comm_bytes_per_step(psi, 8, "zero3", 1, 1) == pytest.approx(3 * psi * 7 / 8)
    assert analytic.zero_comm_bytes_per_step(psi, 8, "zero2", 1, 1, accum_steps=4) == pytest.approx(5 * psi * 7 / 8)
    assert analytic.state_bytes("mixed", "adam") == analytic.StateBytes(2, 2, 12)  # ZeRO §3
    assert analytic.zero_comm_bytes_per_step(psi, 1, "zero2") == 0
    assert analytic.largest_model_params(16e9, 8, "zero3") == pytest.approx(8e9)
    with pytest.raises(LabInputError) as error:
        analytic.zero_memory_per_device(psi, 8, "zero4")
    assert error.value.code == "unknown_strategy"


@pytest.mark.parametrize("changes, code", [
    (dict(impl="pmap", strategy="zero1"), "strategy_needs_jit"),
    (dict(accum_steps=3), "micro_batch_not_divisible"),
    (dict(strategy="zero9"), "unknown_strategy"),
    (dict(grad_dtype="float16"), "unknown_grad_dtype"),
])
def test_bad_settings_are_refused_with_a_code(changes, code):
    with pytest.raises(LabInputError) as error:
        validate(dataclasses.replace(ADAM_MLP, devices=8, **changes))
    assert error.value.code == code


def test_the_cli_refuses_a_strategy_on_pmap_in_one_line(capfd):
    status = main(["train", "--no-tracking", "--impl", "pmap", "--strategy", "zero3", "--devices", "2"])
    out, err = capfd.readouterr()
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith("error: ") and "jit" in err and len(err.strip().splitlines()) == 1


def test_dp_on_the_sharded_path_takes_the_mean_gradient_with_sgd():
    # Adam hides a gradient's scale; SGD does not. dp with accumulation runs the sharded program with
    # one unpadded layout, and must still divide the summed gradient by D·K, as the replicated step does.
    sgd = {"optimizer": "sgd", "learning_rate": 0.1, "devices": 4, "global_batch": 64}
    replicated = run(**sgd)
    for strategy in ("dp", "zero1"):
        accumulated = run(**sgd, strategy=strategy, accum_steps=2)
        assert_same_params(accumulated, replicated)
        assert accumulated.final_loss == pytest.approx(replicated.final_loss, rel=RTOL)
