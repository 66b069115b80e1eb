"""The mixture of experts (`train.transformer`, `--experts E --top-k k --capacity-factor c`) and expert parallelism
(`train.experts`, impl expert, `--mesh data=X,expert=Y`): the dense model untouched at E = 0; one step's loss and
every gradient on data × expert meshes (1×2, 2×2, 2×4 and 1×3) equal to one device's with ample capacity; the
bytes its compiled step sends against the formula's; capacity and dropped tokens; the refusals, in one line each;
training, the CLI and MLflow."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re

import jax
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from pmap_core.cli import commands
from pmap_core.concepts import experts as ce
from pmap_core.costs import analytic, ring
from pmap_core.tracking import callback
from pmap_core.train import experts, logical, models, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

# 12 experts split over expert axes of 2, 3 and 4; top-2 with c = 6 gives each expert C = ⌈6·8·2/12⌉ = 8 = T slots
# per sequence of 8 tokens: no choice can be dropped (a token chooses an expert at most once), so the groups a
# device routes cannot change what any token gets. 24 sequences split over every mesh used here.
DIMS = transformer.Dims(d_model=16, heads=2, seq_len=8, vocab=16, experts=12, top_k=2, capacity_factor=6.0)
LAYERS, BATCH, RTOL = 2, 24, 1e-5
# (data, expert): the expert axis alone at 2 and at an odd 3, and two 2-D meshes, the second of 8 devices (1 × 4
# would repeat them).
MESHES = [(1, 2), (2, 2), (2, 4), (1, 3)]
PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "pmap_core"


def _relative(ours: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(ours - reference)) / np.max(np.abs(reference)))


@pytest.fixture(scope="module")
def one_device():
    return ce.one_device(DIMS, LAYERS, BATCH)


@pytest.fixture(scope="module")
def steps():
    made: dict[tuple[int, int], ce.ExpertStep] = {}

    def get(data: int, expert: int) -> ce.ExpertStep:
        if (data, expert) not in made:
            made[data, expert] = ce.expert_step(DIMS, LAYERS, BATCH, data, expert)
        return made[data, expert]

    return get


# --- the dense model: untouched when there are no experts -------------------------------------------------------

def test_the_dense_model_is_unchanged_when_experts_is_zero():
    """No router, the MLP's parameters and count as before, no routing figures, and a routing given to a dense model
    changes no bit (the compiled HLO and the gradients' bytes of the code before the mixture of experts were compared
    by hand: identical)."""
    dims = transformer.Dims()
    assert dims.experts == 0 and dims.routing is None
    params = transformer.init_params(dims, LAYERS, 0)
    assert list(params) == [n for layer in transformer.layer_names(LAYERS) for n in layer]
    assert transformer.block_names(0)[-4:] == ("block0.w_fc", "block0.b_fc", "block0.w_proj", "block0.b_proj")
    assert sum(p.size for p in params.values()) == transformer.param_count(dims, LAYERS) == 28_384  # as before
    assert transformer.experts_of(params) == 0
    x, y = transformer.make_sequences(dims, 8, 0)
    plain = jax.jit(jax.value_and_grad(transformer.loss))(params, x, y)
    routed = jax.jit(jax.value_and_grad(lambda p, x_, y_: transformer.loss(
        p, x_, y_, transformer.Split(routing=transformer.Routing(1, 0.5)))))(params, x, y)
    assert float(plain[0]) == pytest.approx(3.4580104, rel=1e-6)  # the value before experts existed
    assert np.asarray(plain[0]).tobytes() == np.asarray(routed[0]).tobytes()
    assert all(np.array_equal(plain[1][name], routed[1][name]) for name in params)
    assert transformer.routed_logits(params, x)[1] == ()


def test_an_moe_block_has_a_router_and_e_experts_with_logical_axes():
    params = transformer.init_params(DIMS, LAYERS, 0)
    assert params["block1.router"].shape == (16, 12) and params["block1.expert_w_fc"].shape == (12, 16, 64)
    assert params["block1.expert_w_proj"].shape == (12, 64, 16) and params["block1.expert_b_proj"].shape == (12, 16)
    assert "block0.w_fc" not in params and transformer.experts_of(params) == 12
    assert sum(p.size for p in params.values()) == transformer.param_count(DIMS, LAYERS)
    assert transformer.expert_param_count(DIMS, LAYERS) == sum(
        p.size for n, p in params.items() if ".expert_" in n)
    axes = logical.param_axes(models.TRANSFORMER, LAYERS, DIMS.experts)
    assert list(axes) == list(params) and all(len(axes[n]) == params[n].ndim for n in params)
    specs = experts.param_specs(LAYERS, DIMS.experts)
    assert specs["block0.expert_w_fc"] == jax.P("expert", None, None) and specs["block0.router"] == jax.P(None, None)
    assert specs["tok_emb"] == jax.P(None, None)
    assert tuple(experts.TOKENS) == (("data", "expert"), None)   # the batch over data × expert


def test_no_program_module_names_a_parameter_of_the_transformer():
    names = {n.split(".", 1)[-1] for layer in transformer.layer_names(LAYERS, DIMS.experts) for n in layer}
    names |= {n.split(".", 1)[-1] for layer in transformer.layer_names(LAYERS) for n in layer}
    for program in ("experts", "context", "tensor"):
        source = (PACKAGE / "train" / f"{program}.py").read_text()
        assert not [n for n in names if re.search(rf"""["']{re.escape(n)}["']""", source)], program


# --- routing: capacity, order, drops -------------------------------------------------------------------------

def test_capacity_rounds_up_and_drops_the_later_choices_first():
    assert transformer.Routing(2, 1.25).capacity(32, 8) == 10 and transformer.Routing(2, 0.3).capacity(32, 8) == 3
    assert transformer.Routing(2, 0.5).capacity(32, 8) == 4 and transformer.Routing(1, 0.01).capacity(8, 8) == 1
    # One group of 4 tokens, 2 experts, every token preferring expert 0, then 1; k = 2, C = ⌈0.5·4·2/2⌉ = 2.
    a = np.zeros((1, 4, 2), np.float32)
    router = np.array([[2.0, 1.0], [0.0, 0.0]], np.float32)
    a[0, :, 0] = 1.0
    dispatch, combine, routed = transformer.route(a, router, transformer.Routing(2, 0.5))
    dispatch = np.asarray(dispatch)
    # expert 0's two slots: tokens 0 and 1 (first choices, by position); expert 1's: tokens 0 and 1 (second choices)
    assert dispatch[0, :, 0].tolist() == [[1, 0], [0, 1], [0, 0], [0, 0]]
    assert dispatch[0, :, 1].tolist() == [[1, 0], [0, 1], [0, 0], [0, 0]]
    assert np.asarray(routed.load).tolist() == [[4, 4]] and np.asarray(routed.kept).tolist() == [[2, 2]]
    p = np.exp([2.0, 1.0]) / np.exp([2.0, 1.0]).sum()  # the gates, not renormalised over the top-k
    np.testing.assert_allclose(np.asarray(combine)[0, 0, :, 0], p, rtol=1e-6)


def test_a_dropped_choice_adds_nothing_and_the_token_goes_on_through_the_residual():
    params = transformer.init_params(DIMS, LAYERS, 0)
    a = np.random.default_rng(0).standard_normal((3, 8, 16)).astype(np.float32)
    tight = transformer.Split(routing=transformer.Routing(2, 0.05))   # C = 1 slot per expert per sequence
    out, routed = transformer.moe(params, "block0.", a, tight)
    dispatch, _, _ = transformer.route(a, params["block0.router"], tight.routing)
    dropped = np.asarray(dispatch).sum(axis=(2, 3)) == 0                   # tokens with no slot at all
    assert dropped.any() and np.abs(np.asarray(out)[dropped]).max() == 0.0
    assert int(np.asarray(routed.kept).sum()) == int(np.asarray(dispatch).sum()) <= 3 * 12


# --- one step on data × expert meshes: one device's loss and gradients, the formula's bytes -----------------------

@pytest.mark.parametrize(("data", "expert"), MESHES)
def test_the_loss_and_every_gradient_are_one_devices(steps, one_device, data, expert):
    step, (loss, grads) = steps(data, expert), one_device
    assert abs(step.loss - loss) / loss < RTOL
    for name, grad in grads.items():
        assert _relative(step.grads[name], grad) < RTOL, name


@pytest.mark.parametrize(("data", "expert"), MESHES)
def test_the_bytes_sent_are_the_all_to_all_formula_and_the_all_reduces(steps, data, expert):
    """Four all-to-alls per block (two forward, their transposes backward), each (Y − 1)/Y of the dispatched buffer
    B/(X·Y)·E·C·d; the gradients all-reduced over data × expert (replicated) and over data (the experts)."""
    step = steps(data, expert)
    assert step.all_to_alls == 4 * LAYERS
    for kind, value in step.formula_by_kind.items():
        assert step.comm_by_kind[kind] == pytest.approx(value, rel=0.05), kind
    assert set(step.comm_by_kind) == {"all-to-all", "all-reduce"}
    assert step.comm_bytes == pytest.approx(step.formula_total, rel=0.05)
    capacity = DIMS.routing.capacity(DIMS.seq_len, DIMS.experts)
    buffer = BATCH // (data * expert) * DIMS.experts * capacity * DIMS.d_model * 4
    assert step.all_to_all_hlo == pytest.approx(4 * LAYERS * (expert - 1) / expert * buffer)


def test_all_to_all_sends_one_d_th_of_an_all_gather_of_the_same_array():
    for devices in (2, 4, 8):
        found = ce.all_to_all_vs_all_gather(4096, devices)
        assert found.all_to_all_hlo == pytest.approx(found.all_to_all_formula)
        assert found.all_gather_hlo == pytest.approx(found.all_gather_formula)
        assert found.ratio == pytest.approx(1 / devices)
    assert ring.hops("all_to_all", 4) == 3 and ring.bytes_factor("all_to_all", 4) == 0.75


def test_the_heatmap_counts_each_devices_tokens_per_expert():
    dims = dataclasses.replace(DIMS, capacity_factor=0.5)
    found = ce.tokens_per_expert(dims, LAYERS, BATCH, 2, 4)
    assert found.routed.shape == found.kept.shape == (8, 12) and found.sequences_per_device == 3
    assert (found.routed.sum(axis=1) == 3 * 8 * 2).all()   # every device: 3 sequences of 8 tokens, 2 choices each
    assert (found.kept <= np.minimum(found.routed, 3 * found.capacity)).all()
    assert found.holder == tuple(e // 3 for e in range(12))


# --- capacity factor 0.5: dropped tokens, counted and predicted --------------------------------------------------

def test_a_half_capacity_drops_over_a_fifth_of_the_choices_as_predicted():
    """The acceptance case (`--experts 8 --top-k 2 --capacity-factor 0.5 --mesh data=2,expert=4`, the default
    transformer sizes), 3 steps of 64 sequences: the run's dropped fraction, counted from the dispatch of the trained
    parameters, beside the one predicted from each sequence's load and C, and the one from the batch's load alone."""
    config = validate(TrainConfig(model="transformer", impl="expert", devices=8, mesh_expert=4, experts=8, top_k=2,
                                  capacity_factor=0.5, global_batch=64, steps=3, chunk=3))
    run = train(config, measure_scaling=False)
    figures = callback.result_metrics(run)
    assert figures["dropped_fraction"] > 0.2
    assert abs(figures["predicted_dropped_fraction"] - figures["dropped_fraction"]) < 0.05
    assert figures["mean_load_dropped_fraction"] <= figures["dropped_fraction"]
    assert figures["load_balance_loss"] > 0
    rows = ce.dropped_by_capacity(transformer.Dims(experts=8), LAYERS, 64, (0.5, 1, 2, 4))
    measured = [row.measured for row in rows]
    assert measured == sorted(measured, reverse=True) and measured[0] > 0.5 and measured[-1] == 0.0
    assert all(row.predicted == row.measured and row.from_mean_load <= row.measured for row in rows)


# --- training, refusals, the CLI and MLflow ----------------------------------------------------------------------

TRAIN = TrainConfig(model="transformer", impl="expert", devices=1, global_batch=BATCH, steps=4, chunk=4,
                    d_model=DIMS.d_model, heads=DIMS.heads, seq_len=DIMS.seq_len, vocab=DIMS.vocab,
                    experts=DIMS.experts, top_k=DIMS.top_k, capacity_factor=DIMS.capacity_factor)


def test_training_on_2x4_follows_one_devices_loss_curve():
    one = train(validate(TRAIN), measure_scaling=False)
    run = train(validate(dataclasses.replace(TRAIN, devices=8, mesh_expert=4)), measure_scaling=False)
    np.testing.assert_allclose(run.losses, one.losses, rtol=RTOL)
    for name, value in one.params.items():
        assert _relative(run.params[name], value) < RTOL, name
    assert run.replicas_identical and run.footprint.comm_bytes_per_step == pytest.approx(
        run.footprint.model_comm_bytes_per_step, rel=0.05)
    assert run.footprint.param_bytes_per_device < one.footprint.param_bytes_per_device  # 3 of the 12 experts


def _config(**changes) -> TrainConfig:
    return dataclasses.replace(TRAIN, **{**dict(devices=4, mesh_expert=4), **changes})


@pytest.mark.parametrize(("changes", "code"), [
    (dict(devices=5, mesh_expert=5), "experts_not_divisible"),        # 5 does not divide 12 experts
    (dict(devices=8, mesh_expert=8), "experts_not_divisible"),
    (dict(top_k=13), "top_k_above_experts"),
    (dict(experts=0, top_k=2), "expert_impl_needs_experts"),
    (dict(devices=6), "mesh_not_divisible"),
    (dict(model="mlp"), "experts_need_transformer_sgd"),
    (dict(optimizer="adam"), "experts_need_transformer_sgd"),
    (dict(impl="pmap", mesh_expert=1), "experts_need_expert_impl"),
    (dict(impl="context", mesh_expert=1, mesh_seq=4), "experts_need_expert_impl"),
    (dict(impl="tensor", mesh_expert=1, mesh_model=2), "experts_need_expert_impl"),
    (dict(impl="pmap", mesh_expert=1, experts=0, top_k=1), "experts_need_expert_impl"),
])
def test_it_refuses_in_one_line(changes, code):
    with pytest.raises(LabInputError) as refused:
        validate(_config(**changes))
    assert refused.value.code == code
    assert "\n" not in str(refused.value)


SMALL = ["--model", "transformer", "--steps", "3", "--chunk", "3", "--global-batch", "24", "--d-model", "16",
         "--heads", "2", "--seq-len", "8", "--vocab", "16", "--experts", "8", "--top-k", "2", "--capacity-factor", "4"]


def test_the_cli_splits_the_experts_ends_at_one_devices_loss_and_mlflow_records_it(capsys):
    assert commands.main(["train", "--mesh", "data=2,expert=4", "--json", *SMALL]) == 0
    report = json.loads(capsys.readouterr().out)
    assert commands.main(["train", "--devices", "1", "--json", "--no-tracking", *SMALL]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert (report["impl"], report["mesh_expert"], report["mesh_data"], alone["impl"]) == ("expert", 4, 2, "expert")
    assert report["final_loss"] == pytest.approx(alone["final_loss"], rel=RTOL)
    assert report["dropped_fraction"] == alone["dropped_fraction"] == 0.0
    assert report["comm_bytes_per_step"] == pytest.approx(report["formula_comm_bytes_per_step"], rel=0.05)
    run = MlflowClient(os.environ["MLFLOW_TRACKING_URI"]).get_run(report["run_id"]).data
    assert (run.params["experts"], run.params["top_k"], run.params["capacity_factor"], run.params["mesh_expert"]) == (
        "8", "2", "4.0", "4")
    assert run.metrics["dropped_fraction"] == 0.0 and run.metrics["load_balance_loss"] > 0


def test_the_cli_refuses_in_one_line_with_status_2(capsys):
    assert commands.main(["train", "--mesh", "data=1,expert=3", "--no-tracking", *SMALL]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the expert axis (3 devices) must divide the 8 experts")
    assert commands.main(["train", "--impl", "pmap", "--no-tracking", *SMALL]) == 2
    assert "trains with impl expert" in capsys.readouterr().err
    assert commands.main(["train", "--mesh", "data=2,expert=2", "--devices", "8", "--no-tracking", *SMALL]) == 2
    assert "--mesh data=2,expert=2 uses 4 devices, not 8" in capsys.readouterr().err


def test_mlflow_params_and_the_run_name_come_from_the_config():
    params = callback.run_params(_config())
    assert (params["experts"], params["top_k"], params["capacity_factor"], params["mesh_expert"],
            params["mesh_data"]) == (12, 2, 6.0, 4, 1)
    assert callback.run_name(_config()).startswith("transformer-expert-d16-h2-T8-V16-1x4expert-E12-k2-c6")


def test_the_formula_is_the_scaling_book_s_two_all_to_alls_per_block_each_way():
    terms = analytic.expert_comm_terms(256, 32, 32, 2, 8, 2, 1.0, 1e5, 6e4, 2, 4)
    all_to_all = sum(t.bytes for t in terms if t.collective == "all-to-all")
    # k·T·h per device at c = 1: 32 sequences × 32 tokens × 2 choices × 32 values × 4 bytes; (Y − 1)/Y of it; 4 a block
    assert all_to_all == pytest.approx(2 * 4 * 3 / 4 * 32 * 32 * 2 * 32 * 4)
