"""Where data parallelism is used, and a cost calculator: communication, compute and memory per device
for a model on D accelerators."""

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui.blocks import show_code
from labs.ui.i18n import texts
from labs.ui.links import url_bool, url_choice, url_float, url_int
from labs.ui.visitor import guard
from pmap_core.costs import analytic as cm

T = texts("applications")
CUSTOM = "custom"

st.title(T("title"))
st.markdown(T("intro"))
for use in ("training", "finetuning", "inference", "search"):
    with st.expander(T(f"use.{use}.title"), expanded=use == "training"):
        st.markdown(T(f"use.{use}.body"))

st.header(T("calc_heading"))
st.markdown(T("calc_intro"))
st.latex(r"t_\text{comm} = 2(D-1)\,\alpha + \frac{2(D-1)}{D}\cdot\frac{S}{\beta}, \qquad "
         r"t_\text{compute} = \frac{6 \cdot N \cdot \text{tokens}}{\text{peak} \times u}, \qquad "
         r"E(D) = \frac{\text{throughput}(D)}{D \cdot \text{throughput}(1)}")

model_col, device_col, link_col = st.columns(3)
with model_col:
    model_id = url_choice(T, "model", [*cm.MODELS, CUSTOM], "gpt2_xl")
    if model_id == CUSTOM:
        params = url_float(T, "params_m", 100.0, 0.0, 1e7) * 1e6
        flops_per_sample = url_float(T, "gflops", 600.0, 0.0, 1e9) * 1e9
    else:
        model = cm.MODELS[model_id]
        params, flops_per_sample = model.params, model.flops_per_sample
        st.caption(T("model_values", params=params / 1e6, gflops=flops_per_sample / 1e9))
    precision = url_choice(T, "precision", ["bf16", "fp32"], "bf16", radio=True)
    optimizer = url_choice(T, "optimizer", list(cm.OPTIMIZER_FP32_COPIES), "adam", radio=True)
with device_col:
    accelerator = cm.ACCELERATORS[url_choice(T, "device", list(cm.ACCELERATORS), "a100")]
    utilisation = url_float(T, "util", 0.4, 0.01, 1.0, step=0.05, fmt="%.2f")
    global_batch = url_int(T, "batch", 512, 1, 1_000_000, slider=False)
    mode = url_choice(T, "mode", [cm.STRONG, cm.WEAK], cm.STRONG, radio=True)
with link_col:
    link_id = url_choice(T, "link", [*cm.LINKS, CUSTOM], "ib_ndr")
    if link_id == CUSTOM:
        bandwidth_gbps = url_float(T, "bw", 25.0, 0.0, 10_000.0)
        latency_us = url_float(T, "alpha_us", 5.0, 0.0, 10_000.0)
    else:
        bandwidth_gbps, latency_us = cm.LINKS[link_id].bandwidth_gbps, cm.LINKS[link_id].latency_us
        st.caption(T("link_values", bw=bandwidth_gbps, alpha=latency_us))
    max_devices = url_int(T, "max_devices", 1024, 1, 4096, slider=False)
    overlap = url_bool(T, "overlap", False)
    zero = url_choice(T, "zero", list(cm.ZERO_SHARDED), "dp", radio=True)

bytes_per_value = 2 if precision == "bf16" else 4
plan = memory = None
with guard(T):
    plan = cm.scaling(params, bytes_per_value, flops_per_sample, global_batch, accelerator.peak_tflops,
                      utilisation, bandwidth_gbps, latency_us, max_devices, mode, overlap)
    replicated = cm.memory_per_device(params, bytes_per_value, optimizer, mixed_precision=precision == "bf16")
    # ZeRO counts the fp32 master weights with the optimizer state (its K): both are sharded from stage 1 on.
    state_bytes = (replicated.optimizer + replicated.master_weights) / params
    memory = cm.zero_memory_per_device(params, max_devices, zero, bytes_per_value, bytes_per_value, state_bytes)

if plan is not None and memory is not None:
    last = plan.rows[-1]
    a, b, c, d = st.columns(4)
    a.metric(T("m.gradient"), f"{plan.gradient_bytes / 1e9:.3g} GB")
    b.metric(T("m.comm", d=last.devices), f"{last.comm_s * 1e3:.3g} ms")
    c.metric(T("m.compute", d=last.devices), f"{last.compute_s * 1e3:.3g} ms")
    d.metric(T("m.efficiency", d=last.devices), f"{last.efficiency:.0%}")
    if plan.comm_dominates_from is None:
        st.success(T("never_dominates", d=last.devices), icon="✅")
    else:
        st.warning(T("dominates", d=plan.comm_dominates_from), icon="📡")
    st.markdown(T("best", d=plan.best_devices))

    rows = pd.DataFrame([{"D": r.devices, "compute": r.compute_s, "communication": r.exposed_comm_s,
                          "efficiency": r.efficiency} for r in plan.rows])
    parts = rows.melt(id_vars="D", value_vars=["compute", "communication"], var_name="part", value_name="s")
    parts["part"] = parts["part"].map({"compute": T("part.compute"), "communication": T("part.comm")})
    left, right = st.columns(2)
    left.altair_chart(alt.Chart(parts).mark_bar().encode(
        x=alt.X("D:O", title=T("axis.devices")),
        y=alt.Y("s:Q", stack="zero", title=T("axis.step_time")),
        color=alt.Color("part:N", title=None),
        tooltip=["D", "part", alt.Tooltip("s:Q", format=".4g")],
    ).properties(title=T("chart.step_time"), height=300), width="stretch")
    right.altair_chart(alt.Chart(rows).mark_line(point=True).encode(
        x=alt.X("D:O", title=T("axis.devices")),
        y=alt.Y("efficiency:Q", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]),
                title=T("axis.efficiency")),
        tooltip=["D", alt.Tooltip("efficiency:Q", format=".1%")],
    ).properties(title=T("chart.efficiency"), height=300), width="stretch")
    st.caption(T("model_note"))

    st.subheader(T("memory_heading", zero=T(f"w.zero.{zero}"), d=max_devices))
    st.latex(r"M = \Psi\left(\frac{p}{D_p} + \frac{g}{D_g} + \frac{k}{D_k}\right)")
    master_share = replicated.master_weights / (replicated.optimizer + replicated.master_weights or 1.0)
    parts = {T("mem.weights"): memory.params, T("mem.gradients"): memory.grads,
             T("mem.optimizer"): memory.optimizer * (1 - master_share),
             T("mem.master"): memory.optimizer * master_share}
    st.altair_chart(alt.Chart(pd.DataFrame({"part": list(parts), "GB": [v / 1e9 for v in parts.values()]}))
                    .mark_bar().encode(x=alt.X("GB:Q", title="GB"), y=alt.Y("part:N", title=None, sort=None),
                                       tooltip=["part", alt.Tooltip("GB:Q", format=".3g")])
                    .properties(height=180), width="stretch")
    fits = memory.total <= accelerator.memory_gb * 1e9
    verdict = "fits" if fits else "does_not_fit" if zero == "dp" else "does_not_fit_sharded"
    message = T(verdict, total=memory.total / 1e9, bytes=memory.total / params, device=accelerator.name,
                capacity=accelerator.memory_gb, zero=T(f"w.zero.{zero}"), d=max_devices)
    (st.info if fits else st.warning)(message, icon="💾")

    st.subheader(T("sources_heading"))
    presets = {**cm.MODELS, **cm.LINKS, **cm.ACCELERATORS}
    sources = [(preset.name, T(f"source.{key}")) for key, preset in presets.items()]
    st.dataframe(pd.DataFrame(sources, columns=[T("col.item"), T("col.source")]), hide_index=True)
    st.caption(T("latency_note"))

show_code(T, cm.ring_allreduce_seconds, cm.compute_seconds, cm.scaling, cm.memory_per_device,
             cm.zero_memory_per_device)
