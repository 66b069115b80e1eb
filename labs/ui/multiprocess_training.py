"""The Multi-process page's training group: P processes train the linear model as one, each loading only its own
rows, with a fault injected (a late process, a killed one); what the group did (each process's rows, timings and
weights, the batch each step as a chart, the same training in one process beside it) or why it stopped."""

import logging
import re

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.blocks import dataframe
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.multiprocess_group import GROUP_TIMEOUT_S, HEARTBEAT_TIMEOUT_S, Tail, tail_text, ui_json
from pmap_core.tracking import redact_uri
from pmap_core.train import launch
from pmap_core.train import loading as data_loading
from pmap_core.train.config import TrainConfig

T = texts("multiprocess")
log = logging.getLogger("pmap_lab")
LAST_RUN = "multiprocess.last_run"  # session state: what the last group did (see `run_group`)
FAULTS = ("none", "late", "kill")
STEP_LINE = re.compile(r"^step (\d+)/(\d+)")


def command(impl: str, batch: int, steps: int, size: int, lr: float, init_timeout: int) -> list[str]:
    """What each process runs (its tracking URI comes through its environment: see launch.ProcessGroup)."""
    return ["train", "--json", "--model", "linear", "--impl", impl, "--global-batch", str(batch),
            "--steps", str(steps), "--dataset-size", str(size), "--learning-rate", str(lr),
            "--init-timeout", str(init_timeout), "--heartbeat-timeout", str(HEARTBEAT_TIMEOUT_S)]


def run_group(settings: dict, uri: str) -> None:
    """Start the processes, stream their lines into the page, inject the chosen fault; on every path
    (also a Stop or a rerun) the group is killed when the `with` block is left."""
    p, fault = settings["processes"], settings["fault"]
    delays = [0.0] * (p - 1) + [float(settings["late_s"]) if fault == "late" else 0.0]
    argv = command(settings["impl"], settings["batch"], settings["steps"], settings["size"], settings["lr"],
                   settings["init_timeout"])
    with heavy_jobs.heavy_job(T, slots=p), launch.ProcessGroup(
            argv, p, settings["per_process"], GROUP_TIMEOUT_S, delays, tracking_uri=uri,
            join_timeout_s=settings["init_timeout"]) as group:
        status = st.status(T("status.running", processes=p, address=group.address), expanded=True)
        bars = [status.progress(0.0, text=T("progress.process", process=i, done=0, total=settings["steps"]))
                for i in range(p)]
        timer, tail, shown = status.empty(), status.empty(), Tail()
        for line in group.lines():
            if line is not None:
                shown.add(line)
                step = STEP_LINE.match(line.text) if line.stream == "stderr" else None
                if step and line.process >= 0:
                    done = int(step.group(1))
                    bars[line.process].progress(done / settings["steps"], text=T(
                        "progress.process", process=line.process, done=done, total=settings["steps"]))
                    if fault == "kill" and line.process == p - 1 and done == settings["kill_step"]:
                        group.kill(p - 1)
                tail.code(tail_text(shown.entries), language=None)
            timer.caption(T("status.elapsed", elapsed=group.elapsed(), timeout=settings["init_timeout"],
                            limit=GROUP_TIMEOUT_S))
        outcome = group.outcome()
        status.update(label=T("status.done" if outcome.ok else "status.failed"), state=(
            "complete" if outcome.ok else "error"), expanded=not outcome.ok)
    if not outcome.ok:
        log.warning("multi-process run failed: %s; the processes' last %d lines:\n%s", launch.describe_failure(
            outcome), len(shown.everything), "\n".join(shown.everything))
    results = [ui_json(out) for out in outcome.stdout]
    st.session_state[LAST_RUN] = {"settings": settings, "ok": outcome.ok, "dead": outcome.dead,
                                  "timed_out": outcome.timed_out, "codes": outcome.returncodes,
                                  "join_timed_out": outcome.join_timed_out, "late": outcome.late,
                                  "results": results, "tail": shown.entries, "elapsed": outcome.elapsed_s,
                                  "uri": redact_uri(uri)}




@st.cache_data(show_spinner=False, max_entries=8)
def single_process(settings: dict) -> dict[str, float]:
    """The same training in this server's process on P × N of its devices: the reference."""
    config = TrainConfig(model="linear", devices=settings["processes"] * settings["per_process"],
                         global_batch=settings["batch"], steps=settings["steps"], learning_rate=settings["lr"],
                         impl=settings["impl"], seed=TrainConfig().seed)
    with heavy_jobs.heavy_job(T):
        result = data_loading.train_per_host(config, settings["size"])
    return {k: float(v) for k, v in result.params.items()}


def batch_chart(results: list[dict], batch: int) -> alt.Chart:
    """Every step's global batch, each row coloured by the process (and device) that loaded it."""
    per_device = batch // sum(len(r["local_devices"]) for r in results)
    rows = [{"step": step + 1, "row": position * per_device + j, "sample": sample,
             "process": str(r["process_index"]), "device": r["local_devices"][k]}
            for r in results for step, blocks in enumerate(r["rows"])
            for k, (position, block) in enumerate(zip(r["device_positions"], blocks, strict=True))
            for j, sample in enumerate(block)]
    return alt.Chart(pd.DataFrame(rows)).mark_rect(stroke="white", strokeWidth=0.3).encode(
        x=alt.X("row:O", title=T("axis.row"), axis=alt.Axis(labels=batch <= 64)),
        y=alt.Y("step:O", title=T("axis.step")),
        color=alt.Color("process:N", title=T("axis.process")),
        opacity=alt.Opacity("device:N", legend=None, scale=alt.Scale(range=[1.0, 0.55])),
        tooltip=["step", "row", "sample", "process", "device"]).properties(height=min(40 * len(results[0]["rows"]),
                                                                                       360))


def show_failure(run: dict) -> None:
    """Why the group stopped, said from the outside (a join timeout by its timeout and the late process),
    and its last lines as plain text."""
    s = run["settings"]
    if run["join_timed_out"]:
        late = " ".join(T("fault.join_timeout.late", process=i, late=s["late_s"]) for i in run["late"])
        st.error(T("fault.join_timeout", timeout=s["init_timeout"], late=late or T("fault.join_timeout.none")),
                 icon="🐢")
    elif run["dead"] is not None:
        st.error(T("fault.dead", process=run["dead"], code=launch.describe_exit(run["codes"][run["dead"]])),
                 icon="💀")
    else:
        st.error(T("fault.timeout", limit=GROUP_TIMEOUT_S) if run["timed_out"] else T("fault.other"), icon="⏱️")
    st.caption(T("fault.left", elapsed=run["elapsed"], processes=s["processes"]))
    st.code(tail_text(run["tail"]), language=None)


def positions_text(results: list[dict]) -> str:
    """Which mesh positions each process's devices took in this run, and their ids."""
    held = T("result.positions.sep").join(
        T("result.positions.process", process=r["process_index"], devices=", ".join(r["local_devices"]),
          positions=", ".join(map(str, r["device_positions"]))) for r in results)
    return T("result.positions", held=held)


def show_run(run: dict) -> None:
    s, results = run["settings"], [r for r in run["results"] if r]
    if not run["ok"]:
        show_failure(run)
        return
    st.subheader(T("result.heading", processes=s["processes"], per=s["per_process"],
                   devices=s["processes"] * s["per_process"], impl=s["impl"]))
    table = pd.DataFrame([{
        T("col.process"): r["process_index"], T("col.devices"): ", ".join(r["local_devices"]),
        T("col.blocks"): ", ".join(map(str, r["device_positions"])),
        T("col.step_ms"): 1e3 * float(np.median(r["step_times_s"])),
        T("col.load_ms"): 1e3 * float(np.median(r["load_times_s"])),
        "w": r["params"]["w"], "b": r["params"]["b"]} for r in results])
    dataframe(T, table)
    st.markdown(positions_text(results))
    st.altair_chart(batch_chart(results, s["batch"]), width="stretch")
    st.caption(T("chart.note", processes=s["processes"], per=s["per_process"], batch=s["batch"],
                 block=s["batch"] // (s["processes"] * s["per_process"])))
    spread = max(abs(r["params"][k] - results[0]["params"][k]) for r in results for k in ("w", "b"))
    st.markdown(T("result.equal_processes", diff=spread))
    if s["processes"] * s["per_process"] <= runtime_info().device_count:
        reference = single_process(s)
        diff = max(abs(results[0]["params"][k] - v) / max(abs(v), 1e-12) for k, v in reference.items())
        st.markdown(T("result.equal_single", devices=s["processes"] * s["per_process"], diff=diff))
    else:
        st.caption(T("result.no_single", devices=s["processes"] * s["per_process"],
                     available=runtime_info().device_count))
    if results[0].get("run_id"):
        st.caption(T("tracking.where", processes=s["processes"]))
        st.code(f"{results[0]['run_id']}\n{run['uri']}", language=None)
