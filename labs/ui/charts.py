"""Small Altair chart builders the labs share. Each takes a tidy pandas DataFrame
and the column names to draw, plus already-translated axis titles."""

from __future__ import annotations

import altair as alt
import pandas as pd

# Device colours stay the same on every chart: device d is always the same hue.
DEVICE_SCHEME = "tableau10"


def tooltips(df: pd.DataFrame) -> list[alt.Tooltip]:
    """Every column in the tooltip, typed from its dtype: a plain column name would make Altair look up
    its schema classes again for each one (milliseconds per chart, held under the GIL on every rerun)."""
    return [alt.Tooltip(field=column, type="quantitative" if pd.api.types.is_numeric_dtype(df[column]) else "nominal")
            for column in df.columns]


def heatmap(df: pd.DataFrame, x: str, y: str, value: str, *, x_title: str, y_title: str,
            value_title: str, title: str = "", text: str | None = None, by_device: bool = False,
            height: int | None = None, categories: list[str] | None = None) -> alt.Chart:
    """A grid of coloured cells (e.g. device × element) with a number written in each cell.

    Colour shows `value` (a diverging scale), or with `by_device` the device in column `value`
    (with `categories`, its values in the order of the colours: each keeps its hue in every language);
    the number written is column `text` (default: `value`). `text=""` writes nothing.
    """
    base = alt.Chart(df, title=title).encode(
        x=alt.X(f"{x}:O", title=x_title),
        y=alt.Y(f"{y}:O", title=y_title),
    )
    if by_device:
        scale = alt.Scale(scheme=DEVICE_SCHEME, domain=categories) if categories else alt.Scale(scheme=DEVICE_SCHEME)
        color = alt.Color(f"{value}:N", title=value_title, scale=scale)
    else:
        color = alt.Color(f"{value}:Q", title=value_title,
                          scale=alt.Scale(scheme="redblue", domainMid=0, reverse=True))
    chart = base.mark_rect().encode(color=color, tooltip=tooltips(df))
    label = value if text is None else text
    if label:
        numeric = pd.api.types.is_numeric_dtype(df[label])
        text = alt.Text(f"{label}:Q", format=".4~g") if numeric else alt.Text(f"{label}:N")
        chart = chart + base.mark_text(fontSize=10).encode(text=text)
    return chart.properties(height=height) if height else chart


def bar(df: pd.DataFrame, x: str, y: str, *, x_title: str, y_title: str, color: str | None = None,
        color_title: str = "", title: str = "", stack: bool = True, order: str | None = None) -> alt.Chart:
    """Bars of y per x (e.g. per device), optionally stacked by `color` (e.g. compute + communication)
    in the order of column `order`."""
    encoding = {
        "x": alt.X(f"{x}:O", title=x_title),
        "y": alt.Y(f"{y}:Q", title=y_title, stack="zero" if stack else None),
        "tooltip": tooltips(df),
    }
    if color is not None:
        sort = alt.EncodingSortField(field=order, op="min") if order else "ascending"
        encoding["color"] = alt.Color(f"{color}:N", title=color_title, sort=sort,
                                      scale=alt.Scale(scheme=DEVICE_SCHEME))
    if order is not None:
        encoding["order"] = alt.Order(f"{order}:Q")
    return alt.Chart(df, title=title).mark_bar().encode(**encoding)


def line(df: pd.DataFrame, x: str, y: str, *, x_title: str, y_title: str, color: str | None = None,
         color_title: str = "", title: str = "") -> alt.Chart:
    """Lines with points, e.g. a metric against the device count or the step."""
    encoding = {
        "x": alt.X(f"{x}:Q", title=x_title),
        "y": alt.Y(f"{y}:Q", title=y_title),
        "tooltip": tooltips(df),
    }
    if color is not None:
        encoding["color"] = alt.Color(f"{color}:N", title=color_title)
    return alt.Chart(df, title=title).mark_line(point=True).encode(**encoding)
