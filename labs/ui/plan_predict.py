"""The Plan page's prediction first: the layout the learner picks with its ZeRO stage, remat policy, M and v (each
starting from the planner's best variant of that layout), the guess checked against the planner's figure of that
pick (and recorded for a class), and what the reveal shows of it."""

from __future__ import annotations

import dataclasses

import streamlit as st

from labs.ui import predicting
from labs.ui.i18n import Texts
from labs.ui.links import url_choice, url_int
from labs.ui.plan_inputs import forget_when_changed
from labs.ui.plan_ranking import GB, memory_label
from pmap_core.concepts.planner import REMAT, search
from pmap_core.concepts.planner import view as pv
from pmap_core.concepts.planner.predict import Prediction
from pmap_core.practice import scoring

LAST = "plan.last"            # session state: the Reveal of the last prediction checked
LAYOUT_WAS = "plan.layout_was"  # session state: the picked layout of the last run (another starts its choices again)
PICK_SETTINGS = ("zero", "remat", "microbatches", "virtual")
TOLERANCE = 0.1              # a prediction within 10% of the planner's figure is right


@dataclasses.dataclass(frozen=True)
class Reveal:
    """A prediction checked: what it was for, the guess, and the planner's figure of the picked layout."""

    settings: tuple
    quantity: str
    guess: float
    answer: float
    right: bool
    prediction: Prediction
    recorded: predicting.Recorded


def best_by_layout(result: search.PlanResult) -> dict[str, search.Plan]:
    return {pv.layout_key(p.layout): p for p in (*result.plans, *result.unfit)}


def pick_widgets(T: Texts, result: search.PlanResult, work) -> pv.Pick:
    """The layout the learner picks, and its ZeRO stage, remat policy, M and v: each starts from the planner's best
    variant of that layout."""
    keys = pv.layout_keys(result.model, result.devices, work)
    best = best_by_layout(result)
    first = (result.plans or result.unfit)[0]
    layout_col, remat_col = st.columns([3, 2])
    with layout_col:
        key = url_choice(T, "layout", keys, pv.layout_key(first.layout))
    forget_when_changed(T, LAYOUT_WAS, key, PICK_SETTINGS)
    start = pv.pick_of(best[key].layout) if key in best else pv.Pick(key)
    with remat_col:
        remat = url_choice(T, "remat", list(REMAT), start.remat, radio=True)
    # A row of their own: in a narrower column Streamlit hides a number input's - and + buttons.
    zero_col, microbatches_col, virtual_col = st.columns(3)
    with zero_col:
        zero = url_int(T, "zero", start.zero, 0, 3, slider=False)
    with microbatches_col:
        microbatches = url_int(T, "microbatches", start.microbatches, 1, pv.MAX_TOKENS, slider=False)
    with virtual_col:
        virtual = url_int(T, "virtual", start.virtual, 1, max(2, result.model.layers), slider=False)
    return pv.Pick(key, zero, remat, microbatches, virtual)


def check_guess(T: Texts, settings: tuple, model, hardware, devices: int, work, assumptions, pick: pv.Pick,
                quantity: str, guess: float) -> None:
    prediction = pv.picked(model, hardware, devices, work, assumptions, pick)
    answer = pv.figure(prediction, quantity)
    right = scoring.is_correct(scoring.NUMBER, guess, answer, TOLERANCE)
    # With a class code, the guess is recorded before the page shows the answer.
    recorded = predicting.record_attempt(T.page, quantity, guess, answer, right, {quantity: right})
    st.session_state[LAST] = Reveal(settings, quantity, float(guess), answer, right, prediction, recorded)


def show_reveal(T: Texts, reveal: Reveal, result: search.PlanResult) -> None:
    unit = T(f"unit.{reveal.quantity}")
    st.markdown(T("outcome", guess=f"{reveal.guess:.4g}", answer=f"{reveal.answer:.4g}", unit=unit))
    if reveal.right:
        st.success(T("outcome.right", tolerance=TOLERANCE), icon="🎯")
    else:
        st.info(T("outcome.wrong", tolerance=TOLERANCE), icon="🔎")
    predicting.saw_answer(T.page, reveal.quantity)  # from now on this browser's guesses say so
    done = reveal.recorded
    predicting.show_record(done.recorded, done.error, done.no_code, done.after_answer)
    p = reveal.prediction
    st.markdown(T("picked.figures", layout=p.layout.label(), memory=p.memory.total / GB,
                  budget=p.memory_budget / GB, step=p.step_s, mfu=p.mfu, bubble=p.bubble,
                  comm=sum(c.bytes for c in p.comm) / GB))
    st.caption(T("picked.fits") if p.fits else T("picked.unfit"))
    st.caption(T("picked.memory_parts", parts="; ".join(f"{memory_label(T, part)} {held / GB:,.3g} GB"
                                                          for part, held in pv.memory_parts(p))))
    ranks = {pv.layout_key(plan.layout): i + 1 for i, plan in enumerate(result.plans)}
    key = pv.layout_key(p.layout)
    if key in ranks:
        best = result.plans[ranks[key] - 1].prediction
        st.caption(T("picked.rank", rank=ranks[key], count=len(result.plans), best=best.layout.label(),
                     step=best.step_s))
    else:
        st.caption(T("picked.no_rank"))
