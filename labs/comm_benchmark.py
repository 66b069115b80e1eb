"""Communication benchmark: collectives timed over message sizes and D, with the α-β ring model fitted."""

import math

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import heavy_jobs, shared_cache
from labs.ui.blocks import show_code
from labs.ui.hardware import hardware_note, runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_bool, url_choice, url_int
from labs.ui.tracking import usable_tracking_uri
from labs.ui.visitor import guard, literal
from pmap_core import commbench
from pmap_core.concepts import comm_benchmark as comm_share
from pmap_core.concepts.manual_parallelism import DEFAULT_BATCH, DEFAULT_FEATURES, DEFAULT_HIDDEN
from pmap_core.costs import fit as costfit

T = texts("comm_benchmark")
PREFIX = "comm_benchmark."
SIZE_CHOICES = {"64K": 2**16, "256K": 2**18, "1M": 2**20, "4M": 2**22, "16M": 2**24, "64M": 2**26}
OP_CHOICES = (*commbench.OPS, "all")
# A sweep runs on request only: opening the page shows the sweep last measured on this
# server for the same settings, whoever measured it (labs.shared_cache).
RUN_REQUESTED = PREFIX + "run_requested"


def measured(ops: tuple, devices: tuple, sizes: tuple, repeats: int) -> commbench.SweepResult:
    """Run a sweep and share it with every visitor of this server; the progress bar is cleared when it is done."""
    plan = commbench.plan_sweep(ops, devices, sizes, repeats)
    with heavy_jobs.heavy_job(T):
        bar = st.progress(0.0, text=T("progress", done=0, total=plan.steps, label=""))

        def report(done: int, total: int, label: str) -> None:
            bar.progress(done / total, text=T("progress", done=done, total=total, label=label))

        result = commbench.run_sweep(plan, on_progress=report)
        bar.empty()
    shared_cache.shared_results("comm_benchmark").put((ops, devices, sizes, repeats), result)
    return result


@st.cache_data(show_spinner=False, max_entries=32)
def measured_training_share(psum_fits: dict, devices: tuple) -> tuple:
    with heavy_jobs.heavy_job(T), st.spinner(T("train.measuring")):
        # The manual-parallelism lab's default step, so both labs measure the same thing.
        return comm_share.training_share(psum_fits, devices, DEFAULT_BATCH, DEFAULT_FEATURES, DEFAULT_HIDDEN)


def request_full_sweep() -> None:
    st.session_state[PREFIX + "op"] = "all"
    st.session_state[PREFIX + "max_size"] = "64M"
    st.session_state[PREFIX + "max_devices"] = min(8, runtime_info().device_count)
    st.session_state[RUN_REQUESTED] = True


def size_label(size: int) -> str:
    return f"{size // 2**20} MiB" if size >= 2**20 else f"{size // 1024} KiB"


def op_label(op: str) -> str:
    return T(f"w.op.{op}")


def measurement_frame(result: commbench.SweepResult, fits: dict, view: str) -> pd.DataFrame:
    """One row per op × D × size: the timing shown (median, min, max), busbw and the model."""
    rows = []
    for m in result.measurements:
        median, low, high = ((m.seconds, m.seconds_min, m.seconds_max) if view == "chained"
                             else (m.call_seconds, m.call_seconds_min, m.call_seconds_max))
        if low <= 0:  # a repeat pair whose slope is <= 0 was swamped by the machine's noise: no band there
            low = float("nan")
        factor = commbench.busbw_factor(m.op, m.devices)
        fit = fits.get((m.op, m.devices))
        model = fit.predict(m.devices, m.bytes) if fit else float("nan")
        rows.append({"op": m.op, "D": str(m.devices), "bytes": m.bytes, "us": median * 1e6,
                     "us_min": low * 1e6, "us_max": high * 1e6,
                     "busbw": m.bytes / median * factor / 1e9, "busbw_low": m.bytes / high * factor / 1e9,
                     "busbw_high": m.bytes / low * factor / 1e9,
                     "model_us": model * 1e6, "model_busbw": m.bytes / model * factor / 1e9})
    return pd.DataFrame(rows)


def latency_chart(frame: pd.DataFrame, crossovers: pd.DataFrame, show_model: bool) -> alt.Chart:
    x = alt.X("bytes:Q", scale=alt.Scale(type="log", base=2), title=T("axis.bytes"))
    color = alt.Color("D:N", title=T("axis.devices"))
    tooltip = ["D", "bytes", alt.Tooltip("us:Q", format=".1f"), alt.Tooltip("us_min:Q", format=".1f"),
               alt.Tooltip("us_max:Q", format=".1f"), alt.Tooltip("model_us:Q", format=".1f")]
    base = alt.Chart(frame).encode(x=x, color=color)
    layers = [
        base.mark_area(opacity=0.15).encode(y=alt.Y("us_min:Q", scale=alt.Scale(type="log")), y2="us_max:Q"),
        base.mark_line(point=True).encode(
            y=alt.Y("us:Q", scale=alt.Scale(type="log"), title=T("axis.latency")), tooltip=tooltip),
    ]
    if show_model:
        layers.append(base.mark_line(strokeDash=[6, 4]).encode(y=alt.Y("model_us:Q", scale=alt.Scale(type="log"))))
        layers.append(alt.Chart(crossovers).mark_rule(strokeDash=[2, 2]).encode(
            x="bytes:Q", color=color, tooltip=["D", alt.Tooltip("bytes:Q", format=",.0f")]))
    return alt.layer(*layers).properties(height=300, title=T("chart.latency"))


def busbw_chart(frame: pd.DataFrame, copies: pd.DataFrame, show_model: bool) -> alt.Chart:
    x = alt.X("bytes:Q", scale=alt.Scale(type="log", base=2), title=T("axis.bytes"))
    color = alt.Color("D:N", title=T("axis.devices"))
    base = alt.Chart(frame).encode(x=x, color=color)
    layers = [
        base.mark_errorbar().encode(y=alt.Y("busbw_low:Q", scale=alt.Scale(type="log"), title=T("axis.busbw")),
                                    y2="busbw_high:Q"),
        base.mark_line(point=True).encode(
            y=alt.Y("busbw:Q", scale=alt.Scale(type="log")),
            tooltip=["D", "bytes", alt.Tooltip("busbw:Q", format=".3f"), alt.Tooltip("model_busbw:Q", format=".3f")]),
        alt.Chart(copies).mark_line(color="gray", strokeDash=[1, 3]).encode(
            x="bytes:Q", y=alt.Y("busbw:Q", scale=alt.Scale(type="log")),
            tooltip=[alt.Tooltip("busbw:Q", format=".2f", title=T("copy_label"))]),
    ]
    if show_model:
        layers.append(base.mark_line(strokeDash=[6, 4]).encode(y=alt.Y("model_busbw:Q", scale=alt.Scale(type="log"))))
    return alt.layer(*layers).properties(height=300, title=T("chart.busbw"))


def fit_table(fits: dict) -> pd.DataFrame:
    rows = []
    for (op, devices), fit in sorted(fits.items(), key=lambda kv: (commbench.OPS.index(kv[0][0]), kv[0][1] or 1 << 20)):
        rows.append({
            T("col.op"): op_label(op), T("col.devices"): str(devices) if devices else T("all_d"),
            T("col.alpha"): fit.alpha_s * 1e6, T("col.beta"): fit.beta_bytes_per_s / 1e9,
            T("col.crossover"): fit.crossover_bytes(devices) / 1024 if devices else float("nan"),
            T("col.r2"): fit.r2, T("col.r2_log"): fit.r2_log, T("col.worst"): fit.worst_ratio,
        })
    return pd.DataFrame(rows)


def training_panel(fits: dict, devices: tuple) -> None:
    st.subheader(T("train.title"))
    psum_fits = {d: fit for (op, d), fit in fits.items() if op == "psum"}
    if not psum_fits:
        st.info(T("train.need_psum"))
        return
    params, size = comm_share.training_model_size(DEFAULT_FEATURES, DEFAULT_HIDDEN)
    st.markdown(T("train.body", params=params, bytes=size, batch=DEFAULT_BATCH, features=DEFAULT_FEATURES,
                  hidden=DEFAULT_HIDDEN))
    if not url_bool(T, "training", False):
        return
    shares = measured_training_share(psum_fits, devices)
    frame = pd.DataFrame([{
        T("col.devices"): str(s.devices), T("train.col.predicted_comm"): s.predicted_comm_s * 1e6,
        T("train.col.measured_comm"): s.measured_comm_s * 1e6, T("train.col.rest"): s.measured_rest_s * 1e6,
        T("train.col.predicted_share"): 100 * s.predicted_share, T("train.col.measured_share"): 100 * s.measured_share,
    } for s in shares])
    st.dataframe(frame, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.1f") for c in frame.columns[1:]})
    bars = frame.melt(id_vars=[T("col.devices")], value_vars=[T("train.col.predicted_share"),
                                                               T("train.col.measured_share")],
                      var_name="kind", value_name="share")
    st.altair_chart(alt.Chart(bars).mark_bar().encode(
        x=alt.X(f"{T('col.devices')}:N", title=T("axis.devices")), xOffset="kind:N",
        y=alt.Y("share:Q", title=T("train.axis.share")), color=alt.Color("kind:N", title=None),
        tooltip=["kind", alt.Tooltip("share:Q", format=".1f")],
    ).properties(height=260), width="stretch")
    st.markdown(T("train.reading"))


def log_button(result: commbench.SweepResult, fits: dict) -> None:
    """Log the sweep on screen as one MLflow run, so machines can be compared on the experiments page."""
    if not st.button(T("log.button"), key=PREFIX + "log"):
        return
    from pmap_core.tracking import redact_uri, runtime_tags
    from pmap_core.tracking.mlflow_backend import Tracker  # MLflow loads only when a run is logged

    uri = usable_tracking_uri(T)
    if uri is None:  # a store no run could be written to: said why, nothing logged
        return
    tracker = Tracker(uri)
    run_id = commbench.log_sweep(tracker, result, fits, runtime_tags("comm_benchmark"))
    # The run id and the stores come from the store and the environment: literal text, never markdown.
    st.success(T("log.done", run_id=literal(tracker.store_run_id(run_id)), uri=literal(redact_uri(tracker.active_uri))))
    if tracker.fell_back_to:
        st.warning(T("log.fell_back", uri=literal(redact_uri(tracker.uri)), fallback=literal(tracker.fell_back_to)))


def show_results(result: commbench.SweepResult, view: str) -> None:
    fits = costfit.fit_measurements(result.measurements)
    st.caption(T("ran", wall=result.wall_s, ceiling=result.copy_ceiling / 1e9))
    frame = measurement_frame(result, fits, view)
    copies = pd.DataFrame({"bytes": [m.bytes for m in result.copies],
                           "busbw": [m.algbw / 1e9 for m in result.copies]})
    ops = list(result.plan.ops)
    for tab, op in zip(st.tabs([op_label(op) for op in ops]), ops, strict=True):
        with tab:
            crossovers = pd.DataFrame([{"D": str(d), "bytes": fits[(op, d)].crossover_bytes(d)}
                                       for d in result.plan.devices if (op, d) in fits])
            show_model = view == "chained"  # the model is fitted to the collective itself
            left, right = st.columns(2)
            left.altair_chart(latency_chart(frame[frame.op == op], crossovers, show_model), width="stretch")
            right.altair_chart(busbw_chart(frame[frame.op == op], copies, show_model), width="stretch")
            st.markdown(T("legend"))
    st.subheader(T("fit.title"))
    st.markdown(T("fit.body"))
    st.latex(r"t_{\mathrm{all\text{-}reduce}} \approx 2(D-1)\,\alpha + \frac{2(D-1)}{D}\,\frac{S}{\beta}"
             r"\qquad t_{\mathrm{all\text{-}gather}},\,t_{\mathrm{reduce\text{-}scatter}} \approx (D-1)\,\alpha"
             r" + \frac{D-1}{D}\,\frac{S}{\beta}\qquad S^{*} = D\,\alpha\,\beta")
    st.dataframe(fit_table(fits), hide_index=True, width="stretch", column_config={
        T("col.alpha"): st.column_config.NumberColumn(format="%.2f"),
        T("col.beta"): st.column_config.NumberColumn(format="%.3f"),
        T("col.crossover"): st.column_config.NumberColumn(format="%.0f"),
        T("col.r2"): st.column_config.NumberColumn(format="%.3f"),
        T("col.r2_log"): st.column_config.NumberColumn(format="%.3f"),
        T("col.worst"): st.column_config.NumberColumn(format="%.2f"),
    })
    per_d = [fit.worst_ratio for (_, d), fit in fits.items() if d is not None and math.isfinite(fit.worst_ratio)]
    if per_d:
        worst = max(per_d)
        if worst <= 2:
            st.success(T("fit.worst", worst=worst))
        else:
            st.warning(T("fit.worst", worst=worst) + " " + T("fit.worst.why"))
    if runtime_info().simulated:
        st.caption(T("fit.simulated"))
    log_button(result, fits)
    training_panel(fits, result.plan.devices)


st.title(T("title"))
st.markdown(T("intro"))
with st.expander(T("method.title")):
    st.markdown(T("method.body"))

available = runtime_info().device_count
if available < 2:
    st.warning(T("need_two", devices=available))
    st.stop()

left, right = st.columns(2)
with left:
    op = url_choice(T, "op", OP_CHOICES, "psum")
    max_size = url_choice(T, "max_size", list(SIZE_CHOICES), "1M")
    view = url_choice(T, "view", ["chained", "per_call"], "chained", radio=True)
with right:
    max_devices = url_int(T, "max_devices", min(8, available), 2, available)
    repeats = url_int(T, "repeats", 5, 1, commbench.MAX_REPEATS)
    st.button(T("full"), on_click=request_full_sweep, help=T("full.help"))

hardware_note(T)
if runtime_info().simulated:  # real accelerators have links: the note is about simulated devices only
    st.caption(T("links_note"))

with guard(T):
    ops = commbench.OPS if op == "all" else (op,)
    sizes = tuple(s for s in commbench.FULL_SIZES if s <= SIZE_CHOICES[max_size])
    plan = commbench.plan_sweep(ops, commbench.sweep_devices(max_devices), sizes, repeats)  # refuses before running
    settings = (plan.ops, plan.devices, plan.sizes, plan.repeats)
    st.caption(T("plan", ops=", ".join(op_label(o) for o in plan.ops), devices=list(plan.devices),
                 low=size_label(sizes[0]), high=size_label(sizes[-1]), repeats=repeats, estimate=plan.estimated_s))
    requested = st.session_state.pop(RUN_REQUESTED, False)
    pressed = st.button(T("run"), type="primary", key=PREFIX + "run")
    shared = None if requested or pressed else shared_cache.shared_results("comm_benchmark").get(settings)
    if shared is not None:
        st.caption(T("shared", minutes=shared_cache.age_minutes(shared)))
        show_results(shared.value, view)
    elif requested or pressed:
        show_results(measured(*settings), view)
    else:
        st.info(T("press_run", estimate=plan.estimated_s))

show_code(T, commbench.plan_sweep, commbench.chained_program, commbench.measure_collective,
             commbench.run_sweep, costfit.fit_ring, comm_share.training_share)
