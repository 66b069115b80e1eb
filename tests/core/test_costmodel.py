"""The cost model's formulas against values computed by hand."""

import pytest

from pmap_core import LabInputError
from pmap_core.costs import analytic as cm


def test_gradient_bytes_is_params_times_bytes():
    assert cm.gradient_bytes(1.5e9, 2) == 3e9


def test_ring_all_reduce_alpha_beta_model():
    # 2·3·5 µs + 2·3/4 · 1 GB / 50 GB/s = 30 µs + 30 ms
    assert cm.ring_allreduce_seconds(1e9, 4, 5e-6, 50e9) == pytest.approx(0.03003)
    assert cm.ring_allreduce_seconds(1e9, 1, 5e-6, 50e9) == 0.0
    assert cm.ring_bytes_sent_per_device(100e6, 4) == pytest.approx(150e6)


def test_compute_time_and_the_transformer_rule():
    assert cm.transformer_flops_per_sample(1e9, 1000) == 6e12
    assert cm.compute_seconds(6e12, 100e12, 0.5) == pytest.approx(0.12)


@pytest.mark.parametrize("bytes_per_value, optimizer, mixed, per_param", [
    (2, "adam", True, 16), (4, "adam", False, 16), (4, "sgd", False, 8), (2, "momentum", True, 12),
])
def test_memory_per_device(bytes_per_value, optimizer, mixed, per_param):
    memory = cm.memory_per_device(1e9, bytes_per_value, optimizer, mixed)
    assert memory.total == pytest.approx(per_param * 1e9)


def test_strong_scaling_rows_by_hand():
    # 1e9 params in fp32 (S = 4 GB), 1e12 FLOPs per sample, 64 samples, 100 TFLOP/s at u = 0.5,
    # 100 GB/s links, no latency: compute(D) = 1.28 s / D, comm(D) = 2(D−1)/D · 0.04 s.
    plan = cm.scaling(1e9, 4, 1e12, 64, 100, 0.5, 100, 0.0, 8)
    assert [r.devices for r in plan.rows] == [1, 2, 4, 8]
    two = plan.rows[1]
    assert two.compute_s == pytest.approx(0.64) and two.comm_s == pytest.approx(0.04)
    assert two.step_s == pytest.approx(0.68)
    assert two.efficiency == pytest.approx(1.28 / (2 * 0.68))
    assert plan.comm_dominates_from is None and plan.best_devices == 8


def test_communication_dominates_and_overlap_hides_it():
    # compute(D) = 0.01 s / D; comm(D) ≈ 2(D−1)/D · 0.04 s: already larger at D = 2.
    plan = cm.scaling(1e9, 4, 1e12, 1, 100, 1.0, 100, 0.0, 8, mode=cm.STRONG)
    assert plan.comm_dominates_from == 2 and plan.best_devices == 1
    overlapped = cm.scaling(1e9, 4, 1e12, 1, 100, 1.0, 100, 0.0, 8, overlap=True)
    row = overlapped.rows[1]
    assert row.step_s == pytest.approx(max(row.compute_s, row.comm_s))


def test_weak_scaling_keeps_compute_per_device():
    plan = cm.scaling(1e9, 4, 1e12, 64, 100, 0.5, 100, 0.0, 4, mode=cm.WEAK)
    assert [r.compute_s for r in plan.rows] == pytest.approx([1.28, 1.28, 1.28])


@pytest.mark.parametrize("call, code", [
    (lambda: cm.ring_allreduce_seconds(1e9, 4, 5e-6, 0.0), "not_positive"),
    (lambda: cm.gradient_bytes(-5, 2), "not_positive"),
    (lambda: cm.scaling(1e9, 2, 1e12, 8, 100, 0.5, 50, 5, cm.MAX_MODEL_DEVICES + 1), "out_of_range"),
    (lambda: cm.scaling(1e9, 2, 1e12, 8, 100, 0.5, 50, 5, 8, mode="sideways"), "unknown_mode"),
    (lambda: cm.memory_per_device(1e9, 2, "lion", True), "unknown_optimizer"),
])
def test_bad_inputs_are_refused(call, code):
    with pytest.raises(LabInputError) as error:
        call()
    assert error.value.code == code


def test_presets_are_complete():
    assert {"resnet50", "bert_base", "gpt2_xl", "llama2_7b"} <= set(cm.MODELS)
    assert cm.MODELS["resnet50"].params == 25.6e6 and cm.MODELS["bert_base"].params == 110e6
    assert {"pcie4_x16", "nvlink4_h100", "ib_ndr", "eth_100g"} <= set(cm.LINKS)
