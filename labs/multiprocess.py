"""Multi-process lab: P real `jax.distributed` processes on this machine train as one, each loading
only its own rows of the global batch; faults (a late process, a killed process) shown live.

Each process is a Python with JAX of its own: a run takes one heavy-job slot per process. The visitor
sees the lab's own lines; what native libraries print (XLA's logs, crash reports with stack addresses)
goes to the server log, and a group that never formed is reported by its join timeout."""

import json
import logging
import re

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.blocks import dataframe, export_button, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_int
from labs.ui.tracking import usable_tracking_uri
from labs.ui.visitor import guard
from pmap_core import export
from pmap_core.tracking import redact_uri
from pmap_core.tracking.per_host import run_per_host
from pmap_core.train import launch
from pmap_core.train import loading as data_loading
from pmap_core.train.config import TrainConfig
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError

T = texts("multiprocess")
log = logging.getLogger("pmap_lab")
LAST_RUN = "multiprocess.last_run"  # session state: what the last group did (see `run_group`)
FAULTS = ("none", "late", "kill")
GROUP_TIMEOUT_S = 240
HEARTBEAT_TIMEOUT_S = 15
STEP_LINE = re.compile(r"^step (\d+)/(\d+)")
TAIL = 14
LOGGED_LINES = 400  # of a failed run's output, the last lines the server log keeps


def command(impl: str, batch: int, steps: int, size: int, lr: float, init_timeout: int) -> list[str]:
    """What each process runs (its tracking URI comes through its environment: see launch.ProcessGroup)."""
    return ["train", "--json", "--model", "linear", "--impl", impl, "--global-batch", str(batch),
            "--steps", str(steps), "--dataset-size", str(size), "--learning-rate", str(lr),
            "--init-timeout", str(init_timeout), "--heartbeat-timeout", str(HEARTBEAT_TIMEOUT_S)]


class Tail:
    """The last lines a visitor sees: the lab's own lines as they come, and each run of a process's
    other lines (native logs, crash reports with stack addresses) as one line that counts them; the
    whole output is kept for the server log."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str | None, int]] = []  # (who, the lab's line or None, lines held back)
        self.everything: list[str] = []

    def add(self, line: launch.Line) -> None:
        who = "launcher" if line.process < 0 else str(line.process)
        self.everything = [*self.everything[-LOGGED_LINES:], f"[{who}] {line.text}"]
        last = self.entries[-1] if self.entries else None
        if line.from_lab:
            self.entries.append((who, line.text, 0))
        elif last is not None and last[0] == who and last[1] is None:
            self.entries[-1] = (who, None, last[2] + 1)
        else:
            self.entries.append((who, None, 1))
        self.entries = self.entries[-TAIL:]


def tail_text(entries: list[tuple[str, str | None, int]]) -> str:
    return "\n".join(f"[{who}] {text if text is not None else T('tail.held_back', count=count)}"
                     for who, text, count in entries)


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


def ui_json(text: str) -> dict | None:
    lines = text.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


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


# --- the page ------------------------------------------------------------------------

st.title(T("title"))
st.markdown(T("intro"))
st.latex(r"\text{rows}(p) = \bigcup_{k=pN}^{pN+N-1} \left[\,k\tfrac{B}{PN},\ (k+1)\tfrac{B}{PN}\right)")
st.markdown(T("formula"))

cols = st.columns(3)
with cols[0]:
    # Each process takes a heavy-job slot: by default no more processes than the server has slots.
    processes = url_int(T, "processes", min(2, heavy_jobs.server_slots()), 1, launch.MAX_PROCESSES)
    per_process = url_int(T, "per_process", 2, 1, 4)
    impl = url_choice(T, "impl", IMPLEMENTATIONS, "jit", radio=True)
with cols[1]:
    batch = url_int(T, "batch", 16, 1, 1024, slider=False)
    size = url_int(T, "size", 64, 1, data_loading.MAX_DATASET_SIZE, slider=False)
    steps = url_int(T, "steps", 8, 1, 200, slider=False)
with cols[2]:
    fault = url_choice(T, "fault", FAULTS, "none", radio=True, horizontal=False)
    init_timeout = url_int(T, "init_timeout", 20, 5, 120, slider=False)
    late_s = url_int(T, "late_s", 30, 1, 120, slider=False)
    kill_step = url_int(T, "kill_step", 3, 1, 200, slider=False)
lr = 0.3

settings = {"processes": processes, "per_process": per_process, "impl": impl, "batch": batch, "size": size,
            "steps": steps, "fault": fault, "init_timeout": init_timeout, "late_s": late_s, "kill_step": kill_step,
            "lr": lr}
valid = False
with guard(T):
    launch.check_group(processes, per_process, batch, None, size)
    heavy_jobs.check_slots(processes)
    if fault == "kill" and kill_step >= steps:
        raise LabInputError("kill_after_end", "kill_step must be below steps", step=kill_step, steps=steps)
    valid = True
    st.caption(T("per_process", processes=processes, per=per_process, devices=processes * per_process, batch=batch,
                 rows=batch // processes, steps_per_epoch=size // batch))
    if fault == "late":
        st.info(T("fault.late.note", process=processes - 1, late=late_s, timeout=init_timeout), icon="🐢")
    if fault == "kill":
        st.info(T("fault.kill.note", process=processes - 1, step=kill_step, heartbeat=HEARTBEAT_TIMEOUT_S), icon="💀")

run_clicked = st.button(T("button.run"), key="multiprocess.run", type="primary", disabled=not valid)
if valid:  # the group as a launch script (without a fault): jax and numpy only
    export_button(T, lambda: export.multiprocess_export(processes, per_process, impl, batch, size, steps, lr))
if run_clicked:
    with guard(T):
        uri = usable_tracking_uri(T)
        if uri is not None:
            run_group(settings, uri)
if LAST_RUN in st.session_state:
    with guard(T):
        show_run(st.session_state[LAST_RUN])
else:
    st.info(T("nothing_yet"), icon="👆")
st.markdown(T("cluster"))
st.code("python -m pmap_core launch --processes 2 --devices-per-process 4 train --dataset-size 256\n"
        "# " + T("cluster.code") + "\n"
        "python -m pmap_core train --dataset-size 256 --coordinator-address 10.0.0.1:1234 --num-processes 2 "
        "--process-id 0\n"
        "python -m pmap_core train --dataset-size 256 --coordinator-address 10.0.0.1:1234 --num-processes 2 "
        "--process-id 1", language="bash")
show_code(T, data_loading.step_rows, data_loading.load_local, data_loading.global_inputs, run_per_host)
