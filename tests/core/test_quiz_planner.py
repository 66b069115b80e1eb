"""The interview questions on planning a run against references worked out apart from their programs: the first
stage's state counted from Llama 3 405B's shape, ZeRO-1's 4 + 12/128 bytes a parameter; the least M with 15/M ≤ 0.05;
a model axis of 16 beyond a node of 8; the published run's MFU predicted as run against the 41% it reported; the first
plan's bound read off its step's parts (`search.step_parts`) and the variants of its layout."""

import math

import pytest

from pmap_core.concepts.planner import (
    HARDWARE,
    MODELS,
    PUBLISHED,
    Assumptions,
    Layout,
    Workload,
    evaluate_published,
    plan,
    step_parts,
)
from pmap_core.concepts.planner.predict import predict
from pmap_core.concepts.planner.search import COMPUTE, MEMORY
from pmap_core.practice.quiz import planner as quiz_plan
from pmap_core.practice.quiz import registry as quiz
from tests.quiz_support import assert_answer_matches, assert_questions_have_texts

AS_ASKED = Assumptions(achievable=0.6, overlap=0.5)  # the questions say: 60% of peak achievable, half hidden


def state_reference() -> float:
    m = MODELS["llama3-405b"]
    d, f, q, kv = m.d_model, m.d_ff, m.q_width, m.kv_width
    block = d * q + 2 * d * kv + q * d + 2 * d + 3 * d * f  # Q, K, V, O, two RMSNorm gains, SwiGLU
    per_device = (block * m.layers / 16 + m.vocab * d) / 8        # the first stage's blocks and the embedding
    return per_device * (2 + 2 + 12 / 128) / 1e9


def bound_reference() -> str:
    """The largest part of the first plan's step beside compute, or memory where a faster variant of the first's
    layout does not fit."""
    setting = quiz_plan.BOUND
    result = plan(MODELS[setting["model"]], HARDWARE[setting["hardware"]], setting["devices"], setting["workload"],
                  AS_ASKED)
    if result.verdict.bound == MEMORY:
        return quiz_plan.MEMORY
    parts = {k: v for k, v in step_parts(result.plans[0].prediction, 0.5).items() if k != COMPUTE}
    name, seconds = max(parts.items(), key=lambda kv: kv[1])
    if seconds <= 0:
        return quiz_plan.NOTHING
    return quiz_plan.BUBBLE if name == "bubble" else f"{name} axis"


def published_reference() -> str:
    run = PUBLISHED["llama3-405b-16k"]
    mfu = evaluate_published(run, MODELS[run.model], HARDWARE[run.hardware], AS_ASKED, as_run=True).prediction.mfu
    return quiz_plan.WITHIN if abs(mfu - 0.41) <= 0.02 else quiz_plan.ABOVE if mfu > 0.41 else quiz_plan.BELOW


REFERENCES = {
    "plan_state": state_reference(),
    "plan_microbatches": float(math.ceil(15 / 0.05)),
    "plan_axis_link": quiz_plan.ACROSS_NODES,
    "plan_published_mfu": published_reference(),
    "plan_bound": bound_reference(),
}


def test_every_question_has_a_reference_and_texts_in_both_languages():
    assert_questions_have_texts(quiz_plan.QUESTIONS, REFERENCES, 4)


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    assert_answer_matches(question_id, REFERENCES[question_id], rel=0.001)


def test_the_bubble_question_is_the_planners_bubble_at_its_answer():
    m = int(quiz.answer("plan_microbatches"))
    at = [predict(MODELS["llama3-8b"], Layout(stage=16, microbatches=k), Workload(k, 8192), HARDWARE["h100"]).bubble
          for k in (m - 1, m)]
    assert at[0] > 0.05 >= at[1]
