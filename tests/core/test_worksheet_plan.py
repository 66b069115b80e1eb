"""Sheet 14 (plan a run) against references worked out apart from the planner: ZeRO-3's 16Ψ/D with one block input a
block and the float32 logits under full recomputation, 16Ψ replicated, a ring all-reduce's 2(D − 1)/D of the bfloat16
gradient and ZeRO-3's three collectives per micro-batch, full recomputation's 6/8 of the achievable fraction, PaLM's
FLOPs per token over D × peak × 0.6, the bubble (P − 1)/(v·M). Every step opens the plan page with "predict first" on,
on a layout the page offers, and holds at every D (nothing runs on devices)."""

import pytest

from pmap_core.concepts.planner import HARDWARE, MODELS
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import DEFAULT_ASSUMPTIONS
from pmap_core.practice import worksheets

SHEET = next(sheet for sheet in worksheets.load_sheets().sheets if sheet.id == "14_plan")
PSI_8B, PSI_70B = MODELS["llama3-8b"].params, MODELS["llama3-70b"].params
S, V = 8192, 128_000


@pytest.fixture(scope="module")
def answers():
    return {step.id: worksheets.compute_answer(step) for step in SHEET.steps}


def test_the_sheet_has_at_least_six_steps_each_predicted_first_on_the_plan_page():
    assert len(SHEET.steps) >= 6 and {step.lab for step in SHEET.steps} == {"plan"}
    for step in SHEET.steps:
        assert step.devices is None and step.settings["predict"] is True
        assert step.settings["quantity"] == step.args["quantity"] in pv.QUANTITIES
        shared = set(step.settings) & set(step.args)
        assert {k: step.settings[k] for k in shared} == {k: step.args[k] for k in shared}, step.id
        model = MODELS[step.args["model"]]
        work = pv.workload(step.args["tokens"], step.args["seq_len"], step.args["precision"])
        assert step.args["layout"] in pv.layout_keys(model, step.args["devices"], work), step.id


def memory_steps(step_id: str):
    """The planner's memory of a memory step's layout, by part."""
    step = SHEET.step(step_id)
    a = step.args
    pick = pv.Pick(a["layout"], a["zero"], a["remat"], a["microbatches"], a["virtual"])
    return pv.picked(MODELS[a["model"]], HARDWARE[a["hardware"]], a["devices"],
                     pv.workload(a["tokens"], a["seq_len"], a["precision"]), DEFAULT_ASSUMPTIONS, pick).memory


def test_the_answers_are_the_references(answers):
    # The memory steps: the training state as the explanations work it out, then at least each block's input and
    # one of the loss's tensors on top (the planner may count more: the reveal lists its parts).
    for step_id, state, least in (("fsdp_memory", 16 * PSI_70B / 64, 2 * S * 8192 * 80 + S * V * 4),
                                  ("replicated_memory", 16 * PSI_8B, 2 * S * 4096 * 32 + S * V * 4)):
        memory = memory_steps(step_id)
        assert (memory.params + memory.grads + memory.optimizer) == pytest.approx(state, rel=0.01)
        assert state + least <= answers[step_id] * 1e9 <= 1.5 * (state + least)
        assert answers[step_id] == pytest.approx(memory.total / 1e9)
    assert answers["replicated_memory"] > 80 > answers["fsdp_memory"]
    assert answers["dp_bytes"] == pytest.approx(2 * 7 / 8 * PSI_8B * 2 / 1e9, rel=0.01)
    assert answers["zero3_bytes"] == pytest.approx(8 * 3 * 7 / 8 * PSI_8B * 2 / 1e9, rel=0.01)
    assert answers["remat_mfu"] == pytest.approx(60 * 6 / 8)
    flops = (6 * PSI_8B + 12 * 32 * 4096 * S) * 4 / 3 * 524_288
    assert answers["step_time"] == pytest.approx(flops / (8 * 989e12 * 0.6), rel=1e-6)
    assert answers["bubble_plain"] == pytest.approx(15 / 16)
    assert answers["bubble_interleaved"] == pytest.approx(15 / (7 * 16))


def test_each_answer_is_accepted_and_a_wrong_one_refused(answers):
    for step in SHEET.steps:
        answer = answers[step.id]
        assert worksheets.is_correct(step, answer, answer)
        assert not worksheets.is_correct(step, answer * (1 + 3 * step.tolerance) + 1, answer)
