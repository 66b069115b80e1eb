"""The Class page's charts of predictions: where a class's first predictions at one step fell against
the computed answer, and each student's predictions over time. Titles and legend words come in
already translated; names and predictions are data, drawn as text by Vega, never as markdown."""

from __future__ import annotations

import altair as alt
import pandas as pd

from pmap_core.tracking import predictions

RIGHT_COLOR, WRONG_COLOR, ANSWER_COLOR = "#2ca02c", "#d62728", "#1f77b4"


def first_predictions_plot(first: pd.DataFrame, *, x_title: str, y_title: str, outcome_title: str,
                           right: str, wrong: str, answer_title: str, place_title: str, on_scale: str,
                           below: str, above: str) -> alt.Chart:
    """A dot plot of one step's first predictions (one dot each, stacked where equal) with a rule at each
    computed answer: on a number line when every prediction and answer is a number, else one column per
    value. The number line spans the class's own spread (`predictions.step_scale`): a prediction off it is
    drawn at its edge as a triangle pointing the way it lies, its value in the tooltip."""
    scale, answers = predictions.step_scale(first), first["answer"].drop_duplicates()
    numbers = scale is not None
    values = predictions.as_numbers(first["prediction"]) if numbers else first["prediction"].astype(str)
    places = values.map(scale.where) if numbers else pd.Series(0, index=first.index)
    dots = pd.DataFrame({
        "value": values.clip(scale.low, scale.high) if numbers else values,
        "prediction": first["prediction"].astype(str),
        "place": places.map({-1: below, 0: on_scale, 1: above}),
        "outcome": first["result"].map(lambda r: right if r >= 1 else wrong),
    })
    dots["n"] = dots.groupby("value").cumcount() + 1
    rules = pd.DataFrame({"value": predictions.as_numbers(answers) if numbers else answers.astype(str),
                          "what": answer_title})
    kind = "quantitative" if numbers else "nominal"
    x = alt.X(field="value", type=kind, title=x_title,
              scale=alt.Scale(domain=[scale.low, scale.high], zero=False, padding=24) if numbers else alt.Undefined)
    points = alt.Chart(dots).mark_point(size=120, opacity=0.85, filled=True).encode(
        x=x, y=alt.Y(field="n", type="quantitative", title=y_title, axis=alt.Axis(tickMinStep=1)),
        color=alt.Color(field="outcome", type="nominal", title=outcome_title,
                        scale=alt.Scale(domain=[right, wrong], range=[RIGHT_COLOR, WRONG_COLOR])),
        shape=alt.Shape(field="place", type="nominal", title=place_title,
                        scale=alt.Scale(domain=[on_scale, below, above],
                                        range=["circle", "triangle-left", "triangle-right"])),
        tooltip=[alt.Tooltip(field="prediction", type="nominal", title=x_title),
                 alt.Tooltip(field="outcome", type="nominal", title=outcome_title)])
    rule = alt.Chart(rules).mark_rule(color=ANSWER_COLOR, strokeWidth=3, strokeDash=[6, 3]).encode(
        x=alt.X(field="value", type=kind),
        tooltip=[alt.Tooltip(field="what", type="nominal", title=answer_title),
                 alt.Tooltip(field="value", type=kind, title=x_title)])
    return (rule + points).properties(height=220)


def timeline(rows: pd.DataFrame, *, time_title: str, student_title: str, outcome_title: str, right: str,
             wrong: str, attempt_title: str, first: str, later: str, step_title: str,
             prediction_title: str) -> alt.Chart:
    """Each student's predictions over time: one row per student, a circle for a first prediction, a
    triangle for a later attempt, coloured right or wrong."""
    frame = pd.DataFrame({
        "time": rows["start_time"], "student": rows["student"].astype(str),
        "outcome": rows["result"].map(lambda r: right if r >= 1 else wrong),
        "attempt": rows["first"].map(lambda f: first if f else later),
        "step": rows["sheet"].astype(str) + "/" + rows["step"].astype(str),
        "prediction": rows["prediction"].astype(str),
    })
    return alt.Chart(frame).mark_point(size=110, filled=True).encode(
        x=alt.X(field="time", type="temporal", title=time_title, axis=alt.Axis(format="%H:%M:%S", labelOverlap=True)),
        y=alt.Y(field="student", type="nominal", title=student_title),
        color=alt.Color(field="outcome", type="nominal", title=outcome_title,
                        scale=alt.Scale(domain=[right, wrong], range=[RIGHT_COLOR, WRONG_COLOR])),
        shape=alt.Shape(field="attempt", type="nominal", title=attempt_title,
                        scale=alt.Scale(domain=[first, later], range=["circle", "triangle-up"])),
        tooltip=[alt.Tooltip(field="time", type="temporal", title=time_title, format="%H:%M:%S"),
                 alt.Tooltip(field="step", type="nominal", title=step_title),
                 alt.Tooltip(field="prediction", type="nominal", title=prediction_title),
                 alt.Tooltip(field="outcome", type="nominal", title=outcome_title),
                 alt.Tooltip(field="attempt", type="nominal", title=attempt_title)],
    ).properties(height=max(180, 36 * frame["student"].nunique()))  # the legends need 180
