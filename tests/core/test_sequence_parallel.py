"""Sequence parallelism (Megatron-SP, `--sequence-parallel`) on a data × model mesh of the transformer: the same
loss and gradients as tensor parallelism; the bytes on the wire (ring bytes from the compiled HLO) and the
activations one device keeps (JAX's residuals by shard) against Korthikanti et al. 2022's claims, at t = 2 and 4;
and the runs it refuses, in one line each."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pmap_core.cli import commands
from pmap_core.concepts import sequence_parallel as seqpar
from pmap_core.train import transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

# 16 sequences of 64 tokens and 8 heads on a 1 × t mesh: the page's longest sequence and most heads, where the
# attention's s² terms outweigh the inputs the kept form holds whole (see the last tests).
DIMS, LAYERS, ROWS, DATA = transformer.Dims(heads=8, seq_len=64), 2, 16, 1


@pytest.fixture(scope="module")
def steps():
    """Each split at t = 1, 2 and 4 (D = 1, 2, 4)."""
    return {(t, sp): seqpar.split_step(DIMS, LAYERS, ROWS, DATA, t, sp)
            for t in (1, 2, 4) for sp in ("off", "on", "keep")}


@pytest.mark.parametrize("t", [2, 4])
@pytest.mark.parametrize("sp", ["on", "keep"])
def test_it_computes_what_tensor_parallelism_computes(steps, t, sp):
    ours, tp = steps[t, sp], steps[t, "off"]
    assert ours.loss == pytest.approx(tp.loss, rel=1e-6)
    for name, grad in tp.grads.items():
        np.testing.assert_allclose(ours.grads[name], grad, rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("t", [2, 4])
def test_kept_whole_its_gathers_and_scatters_send_what_the_all_reduces_did(steps, t):
    """A ring all-reduce is a reduce-scatter then an all-gather (§4.2.2): the same bytes, within 2%."""
    keep, tp = steps[t, "keep"], steps[t, "off"]
    assert set(tp.comm_by_kind) == {"all-reduce"}
    assert keep.comm_by_kind["all-gather"] > 0 and keep.comm_by_kind["reduce-scatter"] > 0
    assert keep.comm_bytes == pytest.approx(tp.comm_bytes, rel=0.02)


@pytest.mark.parametrize("t", [2, 4])
def test_beyond_the_ring_s_bytes_it_sums_the_gradients_of_the_parameters_that_see_split_positions(t):
    """On a 1 × t mesh the kept form sends tensor parallelism's bytes plus `parameter_gradient_bytes` exactly:
    the LayerNorms, the row-parallel biases, the embeddings, the output layer and the loss, each device's part summed
    or gathered over the model axis. A vocabulary, a width and a length that differ tell each term apart."""
    dims = transformer.Dims(d_model=32, heads=4, seq_len=16, vocab=48)
    keep, tp = (seqpar.split_step(dims, 3, 4, 1, t, sp) for sp in ("keep", "off"))
    assert keep.comm_bytes - tp.comm_bytes == pytest.approx(seqpar.parameter_gradient_bytes(dims, 3, t), rel=1e-9)


@pytest.mark.parametrize("t", [2, 4])
def test_megatrons_gathers_again_once_per_product_in_the_backward_pass(steps, t):
    on, keep = steps[t, "on"], steps[t, "keep"]
    assert on.comm_bytes - keep.comm_bytes == pytest.approx(seqpar.regathered_bytes(DIMS, LAYERS, ROWS, t), rel=1e-6)
    assert on.comm_by_kind["reduce-scatter"] == keep.comm_by_kind["reduce-scatter"]


@pytest.mark.parametrize("t", [2, 4])
def test_megatrons_keeps_one_t_th_of_the_activations(steps, t):
    """Table 2: sbh/t·(34 + 5as/h) with sequence parallelism — every term ÷t of one device's (t = 1)."""
    whole = steps[1, "off"].residual_bytes
    assert steps[t, "on"].residual_bytes == pytest.approx(whole / t, rel=0.10)
    # Tensor parallelism alone divides the attention's and the MLP's terms only; kept whole, the gathered inputs
    # are not divided either.
    assert steps[t, "on"].residual_bytes < steps[t, "keep"].residual_bytes < steps[t, "off"].residual_bytes


@pytest.mark.parametrize("t", [2, 4])
def test_kept_whole_it_keeps_in_memory_what_megatrons_form_sends_again(steps, t):
    """The kept form holds the other devices' parts of each gathered input, the bytes Megatron-LM's form sends again
    instead: (t − 1)/t · 2 · layers · b · s · h · 4."""
    on, keep = steps[t, "on"], steps[t, "keep"]
    assert keep.residual_bytes - on.residual_bytes == seqpar.regathered_bytes(DIMS, LAYERS, ROWS, t)


@pytest.mark.parametrize("t", [2, 4])
def test_where_the_attention_outweighs_the_gathered_inputs_the_kept_form_meets_both_claims(steps, t):
    """§4.2.2's bytes (tensor parallelism's, within 2%) and Table 2's activations (÷t, within 10%) at once: the
    inputs kept whole grow as b·s·h, the attention's score terms as a·s²·b, and the parameters' gradients are
    parameter-sized, so at 16 sequences of 64 with 8 heads both are a small share."""
    keep, tp, whole = steps[t, "keep"], steps[t, "off"], steps[1, "off"].residual_bytes
    assert keep.comm_bytes == pytest.approx(tp.comm_bytes, rel=0.02)
    assert keep.residual_bytes == pytest.approx(whole / t, rel=0.10)


def test_one_model_device_is_tensor_parallelism():
    step = seqpar.split_step(DIMS, LAYERS, ROWS, DATA, 1, "on")
    assert step.comm_by_kind.get("all-gather", 0) == 0 and step.comm_by_kind.get("reduce-scatter", 0) == 0


def _config(**changes) -> TrainConfig:
    return TrainConfig(**{**dict(model="transformer", devices=4, global_batch=16, steps=2, chunk=2, impl="tensor",
                                 mesh_model=2, sequence_parallel="on"), **changes})


@pytest.mark.parametrize(("changes", "code"), [
    (dict(model="mlp"), "sequence_parallel_needs_transformer"),
    (dict(seq_len=30, devices=4, mesh_model=4), "mesh_not_divisible"),
    (dict(impl="pmap", mesh_model=1), "sequence_parallel_needs_mesh"),
    (dict(sequence_parallel="both"), "unknown_sequence_parallel"),
])
def test_it_refuses_in_one_line(changes, code):
    with pytest.raises(LabInputError) as refused:
        validate(_config(**changes))
    assert refused.value.code == code
    assert "\n" not in str(refused.value)


def test_the_cli_trains_it_and_reports_it(capsys):
    assert commands.main(["train", "--model", "transformer", "--mesh", "data=2,model=2", "--sequence-parallel",
                          "on", "--steps", "4", "--chunk", "4", "--global-batch", "16", "--d-model", "16",
                          "--heads", "2", "--seq-len", "8", "--vocab", "16", "--json", "--no-tracking"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sequence_parallel"] == "on" and report["mesh_model"] == 2
    assert report["residual_bytes_per_device"] > 0 and report["comm_bytes_per_step"] > 0
