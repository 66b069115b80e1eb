"""The tutorial's demo program, corrected for current JAX and run step by step, beside the three
lines of the original that fail here."""

import inspect

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import background, shared_cache
from labs.ui.blocks import show_code
from labs.ui.i18n import texts
from labs.ui.links import url_devices, url_float, url_int
from labs.ui.visitor import guard
from pmap_core.practice import demo
from pmap_core.practice.pitfalls import format_values

T = texts("demo")


st.title(T("title"))
st.markdown(T("intro"))

left, right = st.columns(2)
with left:
    devices = url_devices(T, 8)
    # The tutorial's one sample per device; a one-device server starts with the two a line needs.
    per_device = url_int(T, "per_device", 1 if devices > 1 else 2, 1, demo.MAX_PER_DEVICE)
with right:
    steps = url_int(T, "steps", 300, 1, 2000)
    learning_rate = url_float(T, "lr", 0.5, 0.0001, 1.5, step=0.05, fmt="%.4f")

run = None
with guard(T):  # the server's warm-up ran the default; other settings run in the background, the page saying so
    settings = (devices, per_device, steps, learning_rate)
    key = ("demo", settings)
    run = shared_cache.precomputed("demo", settings) or background.heavy_result(key, demo.run_demo, *settings)
    if run is None:
        background.wait_for((key,), lambda s: st.info(T("working", what=T("running"), seconds=s), icon="⏳"))

if run is not None:
    st.header(T("steps_heading"))
    for number, (name, functions) in enumerate(demo.STEP_FUNCTIONS.items(), start=1):
        st.subheader(T(f"step.{name}.title", n=number))
        st.markdown(T(f"step.{name}.body", devices=devices, per_device=per_device,
                      batch=devices * per_device))
        st.code("\n\n".join(inspect.getsource(fn) for fn in functions), language="python")
        st.caption(T("captured_output"))
        st.code(format_values({k: v for k, v in run.steps[name].items() if k != "losses"}), language="text",
                wrap_lines=True)

    trained = run.steps["train"]
    a, b, c = st.columns(3)
    a.metric(T("metric.w"), f"{trained['w']:.4f}", f"{trained['w'] - 3.0:+.2e}", delta_color="off")
    b.metric(T("metric.b"), f"{trained['b']:.4f}", f"{trained['b'] - 1.0:+.2e}", delta_color="off")
    c.metric(T("metric.loss"), f"{trained['losses'][-1]:.3g}")
    losses = pd.DataFrame({"step": np.arange(1, len(trained["losses"]) + 1),
                           "loss": np.maximum(trained["losses"], 1e-16)})
    st.altair_chart(alt.Chart(losses).mark_line().encode(
        x=alt.X("step:Q", title=T("axis.step")),
        y=alt.Y("loss:Q", scale=alt.Scale(type="log"), title=T("axis.loss")),
    ).properties(height=260), width="stretch")
    if not np.isfinite(trained["losses"][-1]) or trained["losses"][-1] > trained["losses"][0]:
        st.warning(T("diverged", lr=learning_rate, limit=f"{trained['largest_stable_lr']:.3f}"), icon="💥")
    elif not (abs(trained["w"] - 3.0) <= 0.05 and abs(trained["b"] - 1.0) <= 0.05):
        st.warning(T("not_converged"), icon="🐢")

    st.header(T("broken_heading"))
    st.markdown(T("broken_intro"))
    for name, fn in demo.BROKEN.items():
        captured = run.broken[name]
        st.subheader(T(f"broken.{name}.title"))
        st.code(inspect.getsource(fn), language="python")
        st.caption(T("captured_error") if captured.raised else T("captured_ran"))
        st.code(captured.as_text(), language="text", wrap_lines=True)
        note, values = demo.broken_note(name, devices, captured)
        if captured.raised:
            st.markdown(T(note, **values))
        else:
            st.info(T(note, **values), icon="🍀")
        st.success(T(f"broken.{name}.fix"), icon="🔧")

show_code(T, demo.run_demo, demo.batch)
