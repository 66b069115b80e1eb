"""Context parallelism (`train.context`, impl context, `--mesh data=X,seq=Y --context …`): each scheme computes what
one device computes (the attention's output and its gradients, the model's loss and gradients, the training loss)
at seq = 2, 3 and 8 and on a 2 × 4 data × seq mesh, contiguous and zig-zag; the bytes its compiled step sends
against the formula's; the ring follows its schedule; the zig-zag layout balances the causal work; the runs it
refuses, in one line each; the CLI and MLflow report it."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from mlflow.tracking import MlflowClient

from pmap_core.cli import commands
from pmap_core.concepts import context as cp
from pmap_core.tracking import callback
from pmap_core.train import context, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import train
from pmap_core.train.mesh import SEQ_AXIS, build_mesh
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

# 4 heads: Ulysses runs at seq 2 and 4 and is refused at 3 and 8. seq_len 48 divides into 2·P chunks for P = 2, 3,
# 4 and 8 (zig-zag); 24 sequences split over every data × seq shape used here. The seq axes: the smallest split, an
# odd one and 8 (4 would repeat them; it runs on the 2 × 4 mesh and in the ring's permutation).
DIMS, LAYERS, BATCH = transformer.Dims(d_model=16, heads=4, seq_len=48, vocab=16), 2, 24
SEQS = (2, 3, 8)
RTOL = 1e-5


def _runs(scheme: str, seq: int) -> bool:
    return scheme != "ulysses" or DIMS.heads % seq == 0


# (scheme, data, seq, layout): every scheme at every seq of SEQS it runs at (Ulysses: 2), both layouts, and on a
# 2 × 4 data × seq mesh (Ulysses too).
CASES = [(scheme, 1, seq, layout) for scheme in cp.SCHEMES for seq in SEQS for layout in cp.LAYOUTS
         if _runs(scheme, seq)] + [(scheme, 2, 4, "zigzag") for scheme in cp.SCHEMES]


def _relative(ours: np.ndarray, reference: np.ndarray) -> float:
    """The largest difference over the reference's largest magnitude."""
    return float(np.max(np.abs(ours - reference)) / np.max(np.abs(reference)))


@pytest.fixture(scope="module")
def one_device():
    return cp.one_device(DIMS, LAYERS, BATCH)


@pytest.fixture(scope="module")
def steps():
    """Each case's value-and-gradient step, compiled once for the module when a test first asks for it."""
    made: dict[tuple, cp.SchemeStep] = {}

    def get(scheme: str, data: int, seq: int, layout: str) -> cp.SchemeStep:
        key = (scheme, data, seq, layout)
        if key not in made:
            made[key] = cp.scheme_step(DIMS, LAYERS, BATCH, data, seq, scheme, layout)
        return made[key]

    return get


# --- the attention core alone: its output and the gradients of q, k and v -------------------------------------

@pytest.mark.parametrize(("scheme", "seq", "layout"), [(scheme, seq, layout) for scheme, data, seq, layout in CASES
                                                   if data == 1])
def test_the_attention_core_and_its_gradients_are_one_devices(scheme, seq, layout):
    b, t, h, k = 2, DIMS.seq_len, DIMS.heads, DIMS.d_head
    q, key, v, cotangent = (np.random.default_rng(n).standard_normal((b, t, h, k)).astype(np.float32)
                            for n in range(4))
    reference, pullback = jax.vjp(transformer.causal_attention, q, key, v)
    order = context.layout_positions(t, seq, layout).reshape(-1)
    mesh = build_mesh({SEQ_AXIS: seq})
    split = NamedSharding(mesh, P(None, SEQ_AXIS))
    core = jax.shard_map(context.attention_core(scheme, seq, t, layout), mesh=mesh, in_specs=(P(None, SEQ_AXIS),) * 3,
                         out_specs=P(None, SEQ_AXIS))
    arranged = [jax.device_put(a[:, order], split) for a in (q, key, v, cotangent)]
    out, ours = jax.jit(lambda q_, k_, v_, c_: (core(q_, k_, v_), jax.vjp(core, q_, k_, v_)[1](c_)))(*arranged)
    back = np.argsort(order)
    assert _relative(np.asarray(out)[:, back], np.asarray(reference)) < RTOL
    for name, grad, expected in zip("qkv", ours, pullback(cotangent), strict=True):
        assert _relative(np.asarray(grad)[:, back], np.asarray(expected)) < RTOL, name


# --- the whole model: loss and gradients, and the bytes of its step ---------------------------------------------

@pytest.mark.parametrize(("scheme", "data", "seq", "layout"), CASES)
def test_the_loss_and_every_gradient_are_one_devices(steps, one_device, scheme, data, seq, layout):
    step, (loss, grads) = steps(scheme, data, seq, layout), one_device
    assert abs(step.loss - loss) / loss < RTOL
    for name, grad in grads.items():
        assert _relative(step.grads[name], grad) < RTOL, name


@pytest.mark.parametrize(("scheme", "data", "seq", "layout"), CASES)
def test_each_collective_sends_what_the_formula_says(steps, scheme, data, seq, layout):
    """Ring bytes from the compiled HLO against `costs.analytic.context_comm_terms`, collective by collective and in
    all, within 5% (the formula includes the gradient's all-reduce over data × seq and the loss's mean)."""
    step = steps(scheme, data, seq, layout)
    assert set(step.comm_by_kind) == set(step.formula_by_kind)
    for kind, value in step.formula_by_kind.items():
        assert step.comm_by_kind[kind] == pytest.approx(value, rel=0.05), kind
    assert step.comm_bytes == pytest.approx(step.formula_total, rel=0.05)
    expected = {"allgather": {"all-gather", "reduce-scatter", "all-reduce"},
                "ring": {"collective-permute", "all-reduce"}, "ulysses": {"all-to-all", "all-reduce"}}[scheme]
    assert set(step.comm_by_kind) == expected


def test_a_device_keeps_less_for_its_backward_pass_as_the_seq_axis_grows(steps):
    """Every scheme splits the activations outside attention by P; the residuals per device fall with P."""
    for scheme in cp.SCHEMES:
        kept = [steps(scheme, 1, seq, "contiguous").residual_bytes for seq in (2, 4, 8) if _runs(scheme, seq)]
        assert kept == sorted(kept, reverse=True) and kept[-1] < kept[0] / 1.5, (scheme, kept)
        assert all(steps(scheme, 1, seq, "contiguous").peak_bytes for seq in (2, 4))


# --- the ring's schedule, followed by its program --------------------------------------------------------------

@pytest.mark.parametrize("seq", SEQS)
def test_the_ring_schedule_passes_every_block_once_around(seq):
    schedule = cp.ring_schedule(seq, "zigzag")
    assert schedule.pairs == tuple((i, (i + 1) % seq) for i in range(seq))
    assert schedule.blocks[0] == tuple(range(seq))  # each device starts with its own block
    for now, after in itertools.pairwise(schedule.blocks):
        assert all(after[target] == now[source] for source, target in schedule.pairs)
    for device in range(seq):
        assert sorted(step[device] for step in schedule.blocks) == list(range(seq))
    assert schedule.chunks == tuple((i, 2 * seq - 1 - i) for i in range(seq))


@pytest.mark.parametrize("seq", [3, 4])
def test_the_ring_program_permutes_by_its_schedule(steps, seq):
    """The forward pass passes K/V by the schedule's pairs; the backward pass, its transpose, passes dK/dV back."""
    pairs = set()
    for line in steps("ring", 1, seq, "contiguous").hlo.splitlines():
        if " collective-permute" in line and (found := re.search(r"source_target_pairs=\{(.*?)\}\}", line)):
            pairs.add(frozenset(tuple(map(int, p.split(","))) for p in re.findall(r"\{(\d+,\d+)", found[1] + "}")))
    forward = cp.ring_schedule(seq).pairs
    assert pairs == {frozenset(forward), frozenset((target, source) for source, target in forward)}


# --- the causal work of each device -------------------------------------------------------------------------

@pytest.mark.parametrize("seq", SEQS)
def test_contiguous_blocks_load_the_last_device_and_zig_zag_balances_them(seq):
    t = DIMS.seq_len
    contiguous, zigzag = cp.work_per_device(t, seq, "contiguous"), cp.work_per_device(t, seq, "zigzag")
    assert sum(contiguous) == sum(zigzag) == t * (t + 1) // 2
    assert list(contiguous) == sorted(contiguous) and contiguous[-1] > contiguous[0]
    assert len(set(zigzag)) == 1


def test_work_per_device_counts_the_mask():
    assert cp.work_per_device(8, 2, "contiguous") == (10, 26)   # positions 0–3: 1+2+3+4; 4–7: 5+…+8
    assert cp.work_per_device(8, 2, "zigzag") == (18, 18)       # 0, 1, 6, 7 and 2, 3, 4, 5


# --- training: the loss curve of the program, as the CLI runs it ------------------------------------------------

TRAIN = TrainConfig(model="transformer", devices=1, global_batch=BATCH, steps=3, chunk=3, d_model=DIMS.d_model,
                    heads=DIMS.heads, seq_len=DIMS.seq_len, vocab=DIMS.vocab, impl="jit")


@pytest.fixture(scope="module")
def unsplit():
    return train(validate(TRAIN), measure_scaling=False)


@pytest.mark.parametrize(("scheme", "data", "seq", "layout"), [
    ("allgather", 1, 8, "zigzag"), ("ring", 1, 3, "zigzag"), ("ring", 2, 4, "contiguous"),
    ("ulysses", 2, 2, "zigzag")])
def test_training_follows_one_devices_loss_curve(unsplit, scheme, data, seq, layout):
    run = train(validate(dataclasses.replace(TRAIN, impl="context", devices=data * seq, mesh_seq=seq, context=scheme,
                                             context_layout=layout)), measure_scaling=False)
    np.testing.assert_allclose(run.losses, unsplit.losses, rtol=RTOL)
    assert run.replicas_identical
    footprint = run.footprint
    assert footprint.comm_bytes_per_step == pytest.approx(footprint.model_comm_bytes_per_step, rel=0.05)
    assert footprint.residual_bytes_per_device > 0 and footprint.peak_bytes_per_device > 0


# --- refusals, the CLI and MLflow ---------------------------------------------------------------------------

def _config(**changes) -> TrainConfig:
    return dataclasses.replace(TRAIN, **{**dict(impl="context", devices=4, mesh_seq=4, context="ring"), **changes})


@pytest.mark.parametrize(("changes", "code"), [
    (dict(context="ulysses", devices=8, mesh_seq=8), "ulysses_needs_heads"),   # P > heads
    (dict(context="ulysses", devices=3, mesh_seq=3), "ulysses_needs_heads"),   # P does not divide them
    (dict(seq_len=30), "mesh_not_divisible"),
    (dict(seq_len=20, context_layout="zigzag"), "zigzag_not_divisible"),       # 4 divides 20, 8 does not
    (dict(devices=6), "mesh_not_divisible"),
    (dict(model="mlp"), "context_needs_transformer_sgd"),
    (dict(optimizer="adam"), "context_needs_transformer_sgd"),
    (dict(impl="pmap", mesh_seq=1), "context_needs_seq_mesh"),
    (dict(context="tree"), "unknown_context"),
    (dict(context_layout="striped"), "unknown_context_layout"),
])
def test_it_refuses_in_one_line(changes, code):
    with pytest.raises(LabInputError) as refused:
        validate(_config(**changes))
    assert refused.value.code == code
    assert "\n" not in str(refused.value)


def test_a_page_s_measurement_lists_ulysses_refusal_beside_the_schemes_that_ran():
    found = cp.measure(transformer.Dims(16, 4, 16, 16), 2, 8, seq=8, schemes=("ulysses",))
    assert found.steps == {} and found.refused["ulysses"].code == "ulysses_needs_heads"
    assert found.reference_loss > 0


SMALL = ["--model", "transformer", "--steps", "2", "--chunk", "2", "--global-batch", "8", "--d-model", "16",
         "--heads", "4", "--seq-len", "16", "--vocab", "16"]


def test_the_cli_trains_it_reports_it_and_mlflow_records_it(capsys):
    assert commands.main(["train", "--mesh", "data=1,seq=4", "--context", "ring", "--json", *SMALL]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["impl"], report["context"], report["mesh_seq"], report["mesh_data"]) == ("context", "ring", 4, 1)
    assert report["comm_bytes_per_step"] == pytest.approx(report["formula_comm_bytes_per_step"], rel=0.05)
    params = MlflowClient(os.environ["MLFLOW_TRACKING_URI"]).get_run(report["run_id"]).data.params
    assert (params["mesh_seq"], params["context"], params["context_layout"]) == ("4", "ring", "contiguous")


def test_the_cli_refuses_in_one_line_with_status_2(capsys):
    assert commands.main(["train", "--mesh", "data=1,seq=8", "--context", "ulysses", "--no-tracking", *SMALL]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: Ulysses splits the 4 heads over the 8 devices")
    assert commands.main(["train", "--context", "ring", "--no-tracking", *SMALL]) == 2
    assert "context parallelism (ring, contiguous)" in capsys.readouterr().err


def test_mlflow_params_come_from_the_config():
    params = callback.run_params(_config(context="ulysses", context_layout="zigzag"))
    assert (params["mesh_seq"], params["context"], params["context_layout"], params["mesh_data"]) == (
        4, "ulysses", "zigzag", 1)
    assert callback.run_name(_config(context="ulysses", context_layout="zigzag")).startswith(
        "transformer-context-d16-T48-V16-1x4seq-ulysses-zigzag")


@pytest.mark.parametrize("changes", [dict(layers=-1), dict(schemes=("spiral",)), dict(layout="allgather")])
def test_measure_refuses_settings_it_cannot_run_before_it_compiles_anything(changes):
    """Found by the entry-point fuzz: with no scheme to run, nonsense reached one device's loss (a ValueError)."""
    arguments = dict(dims=transformer.Dims(16, 4, 16, 16), layers=2, batch=8, seq=2, schemes=())
    with pytest.raises(LabInputError):
        cp.measure(**{**arguments, **changes})
