"""Interview questions on planning a run: every parallel axis at once, for a published model on preset hardware
(`concepts.planner`).

Like every question of the quiz, each answer is what a program returns here: the planner's own figures — the
training state of a first pipeline stage's device under ZeRO-1 (`predict.state_memory`), the least micro-batches for
a small bubble (`predict`), which link a mesh axis's collectives take (`predict.axis_level`), a published run's MFU
predicted as the paper ran it beside the MFU it reported (`search.evaluate_published`), and what bounds the planner's
first plan (`search.plan`, read as the page reads it, `view.read_verdict`). None of them runs on devices, so they hold
at every device count.
"""

from __future__ import annotations

from pmap_core.concepts.planner import (
    HARDWARE,
    MODELS,
    PUBLISHED,
    Assumptions,
    Layout,
    Workload,
    evaluate_published,
    plan,
)
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import NODE, axis_level, predict, state_memory
from pmap_core.practice.quiz.types import CHOICE, NUMBER, Question

GB = 1e9
# Llama 3 405B's 16K-GPU layout (Dubey et al. 2024, Table 4): TP 8, PP 16, DP 128; ZeRO-1 over the replicas.
STATE = {"model": "llama3-405b", "layout": Layout(data=128, stage=16, model=8, zero=1),
         "workload": Workload(sequences=2048, seq_len=8192)}
BUBBLE_STAGES, BUBBLE_AT_MOST = 16, 0.05  # P stages, one per device; the bubble over the ideal step
LEVEL = {"hardware": "h100", "layout": Layout(data=64, model=16)}  # a model axis twice a node's 8 GPUs
PUBLISHED_RUN = "llama3-405b-16k"
WITHIN_POINTS = 0.02
# What the questions say they assume: 60% of peak achievable for every FLOP, half of each axis's communication hidden.
QUESTION_ASSUMPTIONS = Assumptions(achievable=0.6, overlap=0.5)
ABOVE, WITHIN, BELOW = "above the paper's", "within 2 points of it", "below the paper's"
WITHIN_NODE, ACROSS_NODES = "within a node (NVLink)", "across nodes (InfiniBand)"
BOUND = {"model": "llama3-8b", "hardware": "h100", "devices": 64, "workload": Workload(sequences=128, seq_len=8192)}
MEMORY, BUBBLE, NOTHING = "memory", "the bubble", "nothing beside compute"
AXIS_BOUNDS = ("data axis", "stage axis", "expert axis", "seq axis", "model axis")


def state_gb() -> float:
    """GB of parameters, gradients and optimizer state on a first-stage device of Llama 3 405B at TP 8 × PP 16 ×
    DP 128, mixed precision with Adam, ZeRO-1."""
    return sum(state_memory(MODELS[STATE["model"]], STATE["layout"], STATE["workload"])) / GB


def fewest_microbatches() -> float:
    """The least M for which a pipeline of 16 stages, one per device, has a bubble of at most 5% of the ideal
    step, as the planner predicts it (Llama 3 8B, one sequence a micro-batch)."""
    model, hardware = MODELS["llama3-8b"], HARDWARE["h100"]
    m = 1
    while predict(model, Layout(stage=BUBBLE_STAGES, microbatches=m), Workload(m, 8192), hardware).bubble \
            > BUBBLE_AT_MOST:
        m += 1
    return float(m)


def model_axis_link() -> str:
    """Which link the model axis of 16 devices takes on H100 nodes of 8."""
    level = axis_level(LEVEL["layout"], "model", HARDWARE[LEVEL["hardware"]])
    return WITHIN_NODE if level == NODE else ACROSS_NODES


def published_mfu() -> str:
    """Llama 3 405B's 16K-GPU run predicted as it ran (no recomputation), against the 41% MFU it reported."""
    run = PUBLISHED[PUBLISHED_RUN]
    predicted = evaluate_published(run, MODELS[run.model], HARDWARE[run.hardware], QUESTION_ASSUMPTIONS,
                                   as_run=True).prediction.mfu
    if abs(predicted - run.utilisation) <= WITHIN_POINTS:
        return WITHIN
    return ABOVE if predicted > run.utilisation else BELOW


def first_plan_bound() -> str:
    """Beside compute, what bounds the planner's first plan for Llama 3 8B on 64 H100s, 128 sequences of 8,192
    tokens a step."""
    result = plan(MODELS[BOUND["model"]], HARDWARE[BOUND["hardware"]], BOUND["devices"], BOUND["workload"],
                  QUESTION_ASSUMPTIONS)
    reading = pv.read_verdict(result)
    if reading.bound == pv.BOUND_AXIS:
        return f"{reading.bound_comm.axis} axis"
    return {pv.BOUND_MEMORY: MEMORY, pv.BOUND_BUBBLE: BUBBLE, pv.BOUND_NOTHING: NOTHING}[reading.bound]


QUESTIONS = (
    Question("plan_state", NUMBER, state_gb, tolerance=0.05),
    Question("plan_microbatches", NUMBER, fewest_microbatches),
    Question("plan_axis_link", CHOICE, model_axis_link, lambda n: [WITHIN_NODE, ACROSS_NODES]),
    Question("plan_published_mfu", CHOICE, published_mfu, lambda n: [ABOVE, WITHIN, BELOW]),
    Question("plan_bound", CHOICE, first_plan_bound, lambda n: [MEMORY, BUBBLE, *AXIS_BOUNDS, NOTHING]),
)
