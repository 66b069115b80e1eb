"""How pmap composes with jit, shard_map and grad, measured: the same compiled program, the
full-batch gradient from grad + pmean, the fused all-reduce, and side effects at trace time."""

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import background, shared_cache
from labs.ui.blocks import dataframe, folded, show_code, verbatim
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_devices, url_int
from labs.ui.visitor import guard
from pmap_core import hlo
from pmap_core.concepts import gradients
from pmap_core.concepts import jit_composition as composition
from pmap_core.train import models

T = texts("jit_composition")


def yes_no(flag: bool) -> str:
    return T("yes") if flag else T("no")


def show_hlo(comparison: composition.HloComparison) -> None:
    st.subheader(T("hlo.heading"))
    st.markdown(T("hlo.body"))
    left, middle, right = st.columns(3)
    left.metric(T("hlo.identical"), yes_no(comparison.identical))
    middle.metric(T("hlo.raw_lines"), comparison.raw_differing_lines)
    right.metric(T("hlo.normalized_lines"), comparison.normalized_differing_lines)
    if comparison.identical:
        st.success(T("hlo.same", devices=comparison.devices), icon="✅")
    else:
        st.warning(T("hlo.different", lines=comparison.normalized_differing_lines), icon="🔍")
        st.code(comparison.normalized_diff, language="diff")
    with folded(T("hlo.expander"), "jit_composition.hlo") as shown:
        if shown:
            st.caption(T("hlo.normalized_note"))
            plain, jitted = st.columns(2)
            plain.markdown("`pmap(f)`")
            plain.code(comparison.plain_hlo, language="text")
            jitted.markdown("`pmap(jit(f))`")
            jitted.code(comparison.jitted_hlo, language="text")


def show_speed(speed: composition.SpeedComparison, same_program: bool) -> None:
    st.subheader(T("speed.heading"))
    forms = [("pmap(f)", speed.plain), ("pmap(jit(f))", speed.jitted), ("jit(shard_map(f))", speed.shard_map)]
    frame = pd.DataFrame([
        {"form": name, "median_ms": t.median_s * 1e3, "min_ms": t.min_s * 1e3, "max_ms": t.max_s * 1e3,
         "first_call_ms": t.first_call_s * 1e3, "samples": len(t.samples_s)}
        for name, t in forms
    ])
    base = alt.Chart(frame).encode(y=alt.Y("form:N", sort=None, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("median_ms:Q", title=T("speed.axis")),
        tooltip=["form", alt.Tooltip("median_ms:Q", format=".3f"), alt.Tooltip("min_ms:Q", format=".3f"),
                 alt.Tooltip("max_ms:Q", format=".3f"), "samples"],
    )
    spread = base.mark_rule().encode(x="min_ms:Q", x2="max_ms:Q")
    st.altair_chart(bars + spread, width="stretch")
    dataframe(T, frame.round(3))
    left, right = st.columns(2)
    left.metric(T("speed.ratio"), f"{speed.jitted_over_plain:.2f}×")
    right.metric(T("speed.max_diff"), f"{speed.max_abs_diff_jitted:.1e}")
    overlap = speed.jitted.min_s <= speed.plain.max_s and speed.plain.min_s <= speed.jitted.max_s
    st.markdown(T("speed.method", rows=speed.rows, devices=speed.devices))
    verdict = "speed.overlap" if overlap else "speed.no_overlap" if same_program else "speed.differs"
    st.markdown(T(verdict, ratio=speed.jitted_over_plain))

    st.subheader(T("shard_map.heading"))
    st.markdown(T("shard_map.body"))
    with folded(T("shard_map.expander"), "jit_composition.shard_map_code") as shown:  # a code block costs its load
        if shown:
            st.code(T("shard_map.code"), language="python")
    st.metric(T("shard_map.max_diff"), f"{speed.max_abs_diff_shard_map:.1e}")


def show_grads(grads: gradients.GradCheck) -> None:
    st.subheader(T("grad.heading"))
    st.markdown(T("grad.body", devices=grads.devices, batch=grads.global_batch,
                  w=grads.params["w"], b=grads.params["b"]))
    st.latex(r"\bar g = \frac{1}{D}\sum_{d=1}^{D} g_d \;=\; \nabla_{w,b}\,"
             r"\frac{1}{B}\sum_{i=1}^{B}\big(w x_i + b - y_i\big)^2")
    rows = [{"source": T("grad.device", d=d), "dL/dw": grads.per_device["w"][d], "dL/db": grads.per_device["b"][d]}
            for d in range(grads.devices)]
    rows.append({"source": T("grad.averaged"), "dL/dw": grads.averaged["w"][0], "dL/db": grads.averaged["b"][0]})
    rows.append({"source": T("grad.full_batch"), "dL/dw": grads.full_batch["w"], "dL/db": grads.full_batch["b"]})
    frame = pd.DataFrame(rows)
    dataframe(T, frame)
    long = frame.melt(id_vars="source", var_name="gradient", value_name="value")
    chart = alt.Chart(long).mark_bar().encode(
        x=alt.X("source:N", sort=None, title=None), y=alt.Y("value:Q", title=T("grad.axis")),
        color=alt.Color("gradient:N", title=None), xOffset="gradient:N",
        tooltip=["source", "gradient", alt.Tooltip("value:Q", format=".5f")],
    )
    st.altair_chart(chart, width="stretch")
    identical = all(len(set(values)) == 1 for values in grads.averaged.values())
    left, right = st.columns(2)
    left.metric(T("grad.max_error"), f"{grads.max_abs_error:.1e}")
    right.metric(T("grad.same_everywhere"), yes_no(identical))


def show_all_reduces(counts: gradients.AllReduceCount) -> None:
    st.subheader(T("fusion.heading"))
    st.markdown(T("fusion.body", layers=counts.layers, arrays=counts.parameter_arrays))
    left, middle, right = st.columns(3)
    left.metric(T("fusion.arrays"), counts.parameter_arrays)
    middle.metric(T("fusion.traced"), counts.traced)
    right.metric(T("fusion.compiled"), counts.compiled)
    if counts.compiled < counts.traced:
        st.success(T("fusion.fused", traced=counts.traced, compiled=counts.compiled), icon="🔗")
    if counts.devices == 1:
        st.caption(T("fusion.one_device"))
    with folded(T("fusion.expander"), "jit_composition.fusion_lines") as shown:
        if shown:
            st.code("\n".join(counts.compiled_lines), language="text")


def show_purity(purity: composition.PurityDemo) -> None:
    st.subheader(T("purity.heading"))
    st.markdown(T("purity.body"))
    st.markdown(T("purity.captured", calls=purity.calls))
    verbatim(purity.printed or "∅")
    left, middle, right = st.columns(3)
    left.metric(T("purity.calls"), purity.calls)
    middle.metric(T("purity.trace_effects"), purity.trace_appends)
    right.metric(T("purity.runtime_effects"), purity.runtime_callbacks)
    st.markdown(T("purity.counts", calls=purity.calls, appends=purity.trace_appends,
                  callbacks=purity.runtime_callbacks, devices=purity.devices))
    frame = pd.DataFrame([
        {T("purity.col.case"): T("purity.case.stale"), T("purity.col.scale"): purity.scale_changed,
         T("purity.col.output"): purity.impure_after_change},
        {T("purity.col.case"): T("purity.case.retrace"), T("purity.col.scale"): purity.scale_changed,
         T("purity.col.output"): purity.impure_after_retrace},
        {T("purity.col.case"): T("purity.case.pure"), T("purity.col.scale"): purity.scale_changed,
         T("purity.col.output"): purity.pure_after_change},
    ])
    st.markdown(T("purity.global", traced=purity.scale_traced, changed=purity.scale_changed))
    st.dataframe(frame, hide_index=True, width="stretch")
    st.info(T("purity.rule"), icon="🧼")


st.title(T("title"))
st.markdown(T("intro"))

cols = st.columns(4)
with cols[0]:
    devices = url_devices(T, runtime_info().device_count)
with cols[1]:
    rows = url_int(T, "rows", 128, 8, composition.MAX_ROWS, step=8)
with cols[2]:
    repeats = url_int(T, "repeats", 10, 1, composition.MAX_REPEATS)
with cols[3]:
    layers = url_int(T, "layers", 3, 1, gradients.MAX_LAYERS)

with guard(T):  # the server's warm-up ran the default; other settings run in the background, the page saying so
    settings = (devices, rows, repeats, layers)
    key = ("jit_composition", settings)
    result = (shared_cache.precomputed("jit_composition", settings)
              or background.heavy_result(key, composition.composition_report, *settings))
    if result is None:
        background.wait_for((key,), lambda s: st.info(T("working", what=T("running"), seconds=s), icon="⏳"))
    else:
        show_hlo(result.hlo)
        show_speed(result.speed, result.hlo.identical)
        show_code(T, composition.mix, composition._pmapped_mix, composition._shard_mapped_mix,
                     hlo.normalize_hlo, composition.compare_compiled, composition.compare_speed)
        show_grads(result.grads)
        show_code(T, models.linear_loss, gradients._local_and_mean_grads, gradients.grad_in_pmap)
        show_all_reduces(result.all_reduces)
        show_code(T, gradients.mlp_loss, gradients.mean_grad_step, gradients.count_all_reduces, hlo.all_reduces)
        show_purity(result.purity)
        show_code(T, composition.purity_demo)
