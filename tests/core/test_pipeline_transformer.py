"""The transformer in pipeline stages (impl pipeline): its blocks split evenly over P stages, the embedding on
the first stage and the final LayerNorm, head and loss on the last; (micro-batch, seq_len, d_model) activations
between stages; both schedules, one pipeline or several side by side, ending where one device does."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from pmap_core.cli import commands
from pmap_core.train import loop, models, pipeline, transformer
from pmap_core.train.program import ProgramSpec
from pmap_core.validation import LabInputError
from tests.core.test_transformer import SMALL, small_config

# (D, P, M, layers), each under both schedules: one pipeline of 2, 3 and 4 stages, and 2 pipelines side by side
# with 2 blocks a stage. The full matrix (D = 2: P = 2, M = 2 and 4; D = 4: P = 2 × 2 pipelines at layers 2 and
# 4, P = 4; D = 8: P = 4 × 2, P = 2 × 4; D = 3: P = 3 at layers 3; both schedules, 16 runs, about 4 minutes on
# 2 shared cores) was measured once: every final loss within 2.7e-7 of one device's.
CASES = [(2, 2, 4, 2), (4, 2, 2, 4), (8, 4, 4, 4), (3, 3, 4, 3)]


def piped(devices: int, stages: int, micro: int, layers: int, schedule: str, **changes):
    return small_config(impl="pipeline", devices=devices, pipeline_stages=stages, microbatches=micro,
                        layers=layers, schedule=schedule, **changes)


@pytest.fixture(scope="module")
def one_device() -> dict[int, float]:
    """The final loss of one device (impl jit), by the number of blocks; run when first asked for."""
    finals: dict[int, float] = {}

    def final(layers: int) -> float:
        if layers not in finals:
            finals[layers] = loop.train(small_config(layers=layers), measure_scaling=False).final_loss
        return finals[layers]

    return final


# --- where the layers go ------------------------------------------------------------------

@pytest.mark.parametrize("layers, stages", [(2, 2), (4, 2), (3, 3), (4, 4), (2, 1)])
def test_the_embedding_goes_to_the_first_stage_and_the_head_to_the_last(layers, stages):
    names = models.layer_names("transformer", layers)
    split = models.stage_layers("transformer", layers, stages)
    assert [layer for stage in split for layer in stage] == list(range(layers + 2))  # each once, in order
    assert split[0][0] == 0 and names[0] == transformer.EMBED_NAMES
    assert split[-1][-1] == layers + 1 and names[-1] == transformer.HEAD_NAMES
    per = layers // stages
    for s, stage in enumerate(split):  # blocks s·per … (s + 1)·per − 1, at positions one further on
        assert [layer - 1 for layer in stage if 0 < layer <= layers] == list(range(s * per, (s + 1) * per))
    params = transformer.init_params(SMALL, layers, 0)
    layout = pipeline.StageLayout.of(params, layers, stages, "transformer")
    assert sorted(name for stage in layout.shapes for name, _ in stage) == sorted(params)
    assert layout.shapes[0][0][0] == "tok_emb" and layout.shapes[-1][-1][0] == "b_out"
    rows = layout.flatten(params)
    assert all(np.array_equal(value, params[name]) for name, value in layout.unflatten(rows).items())
    # The first and last stages carry the embedding and the head besides their blocks; the buffers pad to the largest.
    size = {name: value.size for name, value in params.items()}
    block = sum(size[name] for name in transformer.block_names(0))
    embed, head = (sum(size[name] for name in names) for names in (transformer.EMBED_NAMES, transformer.HEAD_NAMES))
    expected = [per * block] * stages
    expected[0] += embed
    expected[-1] += head
    assert layout.stage_sizes() == expected and layout.size == max(expected)


def test_the_mlp_splits_as_before():
    for layers, stages in ((4, 2), (4, 4), (6, 3), (2, 1)):
        per = layers // stages
        assert models.stage_layers("mlp", layers, stages) == tuple(
            tuple(range(s * per, (s + 1) * per)) for s in range(stages))
    layout = pipeline.StageLayout.of(models.init_params("mlp", 8, 32, 0, 4), 4, 2)
    assert [[name for name, _ in stage] for stage in layout.shapes] == [["w1", "b1", "w2", "b2"],
                                                                         ["w3", "b3", "w4", "b4"]]


def test_the_stash_holds_the_residual_stream_of_the_kept_micro_batches():
    """GPipe keeps all M inputs and one cotangent of (rows, seq_len, d_model) float32; 1F1B at most P."""
    spec = ProgramSpec("pipeline", "transformer", 4, 12, 8, 32, 1, layers=4, pipeline_stages=4, microbatches=8,
                       d_model=16, heads=2, seq_len=8, vocab=16)
    rows = 4 * 12 // 8
    assert pipeline.activation_shape(spec) == (rows, 8, 16)
    assert pipeline.stash_bytes(spec) == 4 * (8 + 1) * rows * 8 * 16
    one = dataclasses.replace(spec, schedule="1f1b")
    assert pipeline.stash_bytes(one) == 4 * (4 + 1) * rows * 8 * 16
    mlp = ProgramSpec("pipeline", "mlp", 4, 60, 8, 32, 1, layers=4, pipeline_stages=4, microbatches=8)
    assert pipeline.activation_shape(mlp) == (30, 32)


def test_the_compiled_peak_differs_by_the_residual_streams_1f1b_does_not_keep():
    """P = 4, M = 8, 12 rows a micro-batch: GPipe keeps 8 inputs of (12, 8, 16) float32, 1F1B 4; measured, the
    compiled peaks differ by exactly those 4 (24,576 bytes), as the MLP's do."""
    spec = ProgramSpec("pipeline", "transformer", 4, 24, 8, 32, 2, layers=4, pipeline_stages=4, microbatches=8,
                       d_model=16, heads=2, seq_len=8, vocab=16)
    peaks = pipeline.peak_bytes_by_schedule(spec)
    saved = pipeline.stash_bytes(spec) - pipeline.stash_bytes(dataclasses.replace(spec, schedule="1f1b"))
    assert saved == 4 * (8 - 4) * 12 * 8 * 16
    assert peaks["gpipe"] - peaks["1f1b"] == saved


# --- training -----------------------------------------------------------------------------

@pytest.mark.parametrize("schedule", pipeline.SCHEDULES)
@pytest.mark.parametrize("devices, stages, micro, layers", CASES)
def test_the_pipelined_transformer_ends_where_one_device_does(devices, stages, micro, layers, schedule, one_device):
    """20 SGD steps at η = 0.1 on 48 sequences: the final loss within 1e-5 of one device's (measured: within 2.7e-7;
    η = 0.1 as in test_transformer: the default 0.5 amplifies rounding differences)."""
    result = loop.train(piped(devices, stages, micro, layers, schedule), measure_scaling=False)
    reference = one_device(layers)
    assert len(result.losses) == 20 and result.losses[-1] < result.losses[0]
    assert abs(result.final_loss - reference) / reference <= 1e-5, (result.final_loss, reference)
    assert result.replica_max_diff == 0.0  # the pipelines' copies of each stage stay equal
    assert sorted(result.params) == sorted(transformer.init_params(SMALL, layers, 0))


# --- what is refused ----------------------------------------------------------------------

@pytest.mark.parametrize("changes, code", [
    (dict(layers=3), "layers_not_divisible"),                          # 3 blocks into 2 stages
    (dict(layers=2, stages=4, devices=4), "layers_not_divisible"),
    (dict(optimizer="adam"), "pipeline_needs_mlp_sgd"),
    (dict(precision="mixed"), "pipeline_needs_mlp_sgd"),
    (dict(strategy="zero3"), "pipeline_needs_mlp_sgd"),
    (dict(devices=3), "pipeline_devices"),
    (dict(micro=5), "microbatches_not_divisible"),
])
def test_what_the_pipelined_transformer_cannot_run_is_refused(changes, code):
    with pytest.raises(LabInputError) as refused:
        piped(**{**dict(devices=2, stages=2, micro=2, layers=2, schedule="gpipe"), **changes})
    assert refused.value.code == code
    assert "\n" not in str(refused.value)


def test_the_refusal_names_both_models_impl_pipeline_splits():
    with pytest.raises(LabInputError) as refused:
        small_config(model="linear", impl="pipeline", devices=2, pipeline_stages=2)
    assert refused.value.code == "pipeline_needs_mlp_sgd"
    assert "MLP or the transformer" in str(refused.value) and "got model linear" in str(refused.value)


def test_the_command_line_trains_the_transformer_in_stages(capsys, one_device):
    """The settings of the case (4, 2, 2, 4) under GPipe, chunk included: the same compiled program, so a cold
    compilation cache compiles it once for both; the command line ends where one device does too."""
    assert commands.main(["train", "--model", "transformer", "--layers", "4", "--pipeline-stages", "2",
                          "--microbatches", "2", "--devices", "4", "--steps", "20", "--chunk", "10",
                          "--global-batch", "48", "--learning-rate", "0.1", "--d-model", "16", "--heads", "2",
                          "--seq-len", "8", "--vocab", "16", "--json", "--no-tracking"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["model"], result["impl"], result["devices"], result["pipeline_stages"],
            result["microbatches"]) == ("transformer", "pipeline", 4, 2, 2)
    assert result["bubble_fraction"] == pytest.approx(1 / 3)  # (P − 1) / (M + P − 1); M = 1 would give 1/2
    assert math.isfinite(result["final_loss"]) and result["replicas_identical"]
    assert abs(result["final_loss"] - one_device(4)) / one_device(4) <= 1e-5, result["final_loss"]
