"""A profiler trace on a page: the pages that run a step call `trace_panel` (one line) and get, inside an
expander, behind a button, K steps of their program traced with JAX's profiler (`pmap_core.profiling`), an Altair
timeline of one step (one lane per device, coloured by category, zoomable), each device's time per step beside
it, the trace's collectives beside the HLO's, the trace file to download, and how to open it in Perfetto and XProf.

Nothing is traced before the visitor asks. A trace takes the heavy-job slot (`heavy_jobs`) and JAX's profiler,
one per server (a second one asked for meanwhile is refused in one line); it is written to a temporary folder,
logged to the page's MLflow run where there is one, and the folder is removed when the trace has been read.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import charts, heavy_jobs
from labs.ui.i18n import texts
from labs.ui.visitor import guard
from pmap_core import profiling
from pmap_core.profiling import experiments, reading, record

T = texts("profiling")
MAX_TIMELINE_EVENTS = 4000  # bars on one timeline (a pipeline's step on 4 stages is about 1,500)
COLOURS = {"compute": "#4c78a8", "all-reduce": "#e45756", "all-gather": "#f58518", "reduce-scatter": "#b279a2",
           "collective-permute": "#72b7b2", "all-to-all": "#9d755d", "waiting": "#bab0ac", "host": "#54a24b"}


def timeline_frame(trace: profiling.Trace, step: int = 0) -> pd.DataFrame:
    """One row per bar of `step`: a device's operations (each collective whole, its waiting drawn over it) and
    the host's dispatch; a loop or a conditional is drawn only through the operations inside it."""
    rows = []
    for event in trace.events:
        if event.step != step:
            continue
        container = event.category == reading.COMPUTE and event.duration_us < 0.5 * event.span_us
        if container:
            continue
        lane = T("lane.host") if event.device is None else T("lane.device", device=event.device)
        rows.append({"lane": lane, "start_us": event.start_us, "end_us": event.start_us + max(event.span_us, 0.01),
                     "category": event.category, "operation": event.name, "hlo_op": event.hlo_op,
                     "duration_us": event.duration_us, "waiting": event.category == reading.WAITING})
    frame = pd.DataFrame(rows, columns=["lane", "start_us", "end_us", "category", "operation", "hlo_op",
                                        "duration_us", "waiting"])
    return frame.sort_values("waiting", kind="stable").head(MAX_TIMELINE_EVENTS).drop(columns="waiting")


def category_labels() -> dict[str, str]:
    """Each category (`reading.CATEGORIES`) as the page's language names it."""
    return {"compute": T("category.compute"), "all-reduce": T("category.all-reduce"),
            "all-gather": T("category.all-gather"), "reduce-scatter": T("category.reduce-scatter"),
            "collective-permute": T("category.collective-permute"), "all-to-all": T("category.all-to-all"),
            "waiting": T("category.waiting"), "host": T("category.host")}


def timeline_chart(trace: profiling.Trace, step: int = 0) -> alt.Chart:
    frame = timeline_frame(trace, step)
    labels = category_labels()
    frame["category"] = frame["category"].map(labels)
    lanes = [T("lane.device", device=d) for d in trace.devices] + [T("lane.host")]
    used = [c for c in reading.CATEGORIES if labels[c] in set(frame["category"])]
    colour = alt.Color("category:N", title=T("axis.category"),
                       scale=alt.Scale(domain=[labels[c] for c in used], range=[COLOURS[c] for c in used]))
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("start_us:Q", title=T("axis.time")), x2=alt.X2("end_us"),
        y=alt.Y("lane:N", title=None, sort=lanes, axis=alt.Axis(labelOverlap=False)), color=colour,
        tooltip=charts.tooltips(frame),
    ).properties(height=40 + 30 * len(lanes)).interactive(bind_y=False)


def totals_frame(trace: profiling.Trace) -> pd.DataFrame:
    """Each device's microseconds per step (the mean over the traced steps)."""
    return pd.DataFrame([{T("col.device"): row["device"], T("col.compute"): row["compute_s"] * 1e6,
                          T("col.collective"): row["collective_s"] * 1e6, T("col.waiting"): row["waiting_s"] * 1e6,
                          T("col.idle"): row["idle_s"] * 1e6} for row in trace.per_device()])


def hlo_frame(matches: tuple[profiling.HloMatch, ...]) -> pd.DataFrame:
    return pd.DataFrame([{T("col.kind"): m.kind, T("col.hlo"): m.hlo_instructions,
                          T("col.per_step"): ", ".join(str(n) for n in sorted({c for s in m.per_step for c in s})),
                          T("col.matches"): "✅" if m.matches else "—"} for m in matches])


def capture(config: Any, steps: int, run: tuple[str, str] | None) -> dict[str, Any]:
    """Trace `steps` steps of `config` in a temporary folder (removed on every path), log it to `run` (tracking
    URI, run id) where given; what the page shows of it."""
    with tempfile.TemporaryDirectory(prefix="pmap-lab-trace-") as folder:
        profile = profiling.profile_run(config, steps, folder)
        with open(reading.trace_file(profile.folder), "rb") as file:
            perfetto = file.read()
        logged, error = None, None
        if run is not None:
            try:
                logged = record.log_trace(run[0], run[1], profile.folder)
            except Exception as failure:  # noqa: BLE001 - the trace is still shown and downloadable
                error = str(failure)
    return {"profile": profile, "perfetto": perfetto, "logged": logged, "log_error": error,
            "name": os.path.basename(profile.folder)}


def show(shown: dict[str, Any], key: str) -> None:
    profile: profiling.Profile = shown["profile"]
    trace = profile.trace
    st.caption(T("cpu_note", devices=len(trace.devices)))
    step = st.radio(T("step"), list(range(len(trace.steps))), horizontal=True, key=f"{key}.step") \
        if len(trace.steps) > 1 else 0
    left, right = st.columns([3, 2])
    left.altair_chart(timeline_chart(trace, step), width="stretch")
    right.dataframe(totals_frame(trace), hide_index=True, width="stretch")
    right.caption(T("totals_note"))
    st.dataframe(hlo_frame(profile.hlo_match), hide_index=True, width="stretch")
    st.caption(T("hlo_note"))
    if shown["logged"]:
        st.text(T("logged", where=shown["logged"]))
    if shown["log_error"]:
        st.warning(T("log_failed"), icon="⚠️")
        st.text(shown["log_error"])
    st.download_button(T("download"), shown["perfetto"], file_name=f"{shown['name']}-{reading.PERFETTO_FILE}",
                       mime="application/gzip", key=f"{key}.download")
    st.markdown(T("open_in_tools"))


def run_of(tracked: Any, config: Any) -> tuple[str, str] | None:
    """The MLflow run (tracking URI, run id) a page's last training logged for `config`, where that is the run
    the page shows now (not one kept in the fallback store)."""
    if tracked is None or tracked.result.config != config or not tracked.run_id or tracked.fell_back_to:
        return None
    return tracked.tracking_uri, tracked.run_id


def trace_panel(page: str, config: Any, run: tuple[str, str] | None = None) -> None:
    """The page's trace, behind its expander and button: `config` is the validated run a step of which is
    traced; `run`, the MLflow run (tracking URI, run id) it is logged to, where the page has one."""
    key = f"{page}.trace"
    with st.expander(T("heading")):
        st.markdown(T("intro"))
        steps = st.number_input(T("w.steps"), 1, profiling.MAX_PROFILE_STEPS, profiling.DEFAULT_PROFILE_STEPS,
                                key=f"{key}.steps")
        if st.button(T("button"), key=f"{key}.button"):
            st.session_state.pop(key, None)
            with guard(T), heavy_jobs.heavy_job(T), st.spinner(T("running")):
                st.session_state[key] = capture(config, int(steps), run)
        if key in st.session_state:
            show(st.session_state[key], key)


STRAGGLER_WORK = (0, 200, 800)  # extra products of its batch with a 64 × 64 matrix the straggler runs


def straggler_panel(page: str, devices: int) -> None:
    """The straggler experiment on `devices` devices, behind its expander and button."""
    key = f"{page}.straggler"
    with st.expander(T("straggler.heading")):
        st.markdown(T("straggler.intro", device=experiments.STRAGGLER))
        if devices < 2:
            st.info(T("straggler.one_device"), icon="ℹ️")
            return
        if st.button(T("straggler.button"), key=f"{key}.button"):
            st.session_state.pop(key, None)
            with guard(T), heavy_jobs.heavy_job(T), st.spinner(T("running")), \
                    tempfile.TemporaryDirectory(prefix="pmap-lab-trace-") as folder:
                st.session_state[key] = experiments.straggler(devices, STRAGGLER_WORK, folder)
        if key in st.session_state:
            frame = pd.DataFrame([{T("col.work"): p.work, T("col.straggler_compute"): p.straggler_compute_s * 1e6,
                                   T("col.others_waiting"): p.others_waiting_s * 1e6,
                                   T("col.straggler_waiting"): p.straggler_waiting_s * 1e6}
                                  for p in st.session_state[key]])
            st.dataframe(frame, hide_index=True, width="stretch")
            st.caption(T("straggler.note"))


def bubble_panel(page: str, stages: int, microbatches: int, schedule: str) -> None:
    """A pipeline's bubble read from one traced step, beside the schedule's, behind its expander and button."""
    key = f"{page}.bubble"
    with st.expander(T("bubble.heading")):
        st.markdown(T("bubble.intro"))
        if st.button(T("bubble.button"), key=f"{key}.button"):
            st.session_state.pop(key, None)
            with guard(T), heavy_jobs.heavy_job(T), st.spinner(T("running")), \
                    tempfile.TemporaryDirectory(prefix="pmap-lab-trace-") as folder:
                st.session_state[key] = experiments.pipeline_bubble(stages, microbatches, schedule, folder)
        if key in st.session_state:
            read: experiments.BubbleRead = st.session_state[key]
            st.text(T("bubble.setting", stages=read.stages, micro=read.microbatches, schedule=read.schedule,
                      bubble=read.schedule_bubble))
            frame = pd.DataFrame([{T("col.stage"): s.stage, T("col.slots"): s.slots, T("col.idle_slots"): s.idle_slots,
                                   T("col.idle_share"): s.idle_share, T("col.schedule_bubble"): read.schedule_bubble,
                                   T("col.idle_time_share"): s.idle_time_share} for s in read.per_stage])
            st.dataframe(frame, hide_index=True, width="stretch")
            st.caption(T("bubble.note"))
