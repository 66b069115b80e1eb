"""Multi-process lab: P real `jax.distributed` processes on this machine train as one, each loading
only its own rows of the global batch; faults (a late process, a killed process) shown live.

Each process is a Python with JAX of its own: a run takes one heavy-job slot per process. The visitor
sees the lab's own lines; what native libraries print (XLA's logs, crash reports with stack addresses)
goes to the server log, and a group that never formed is reported by its join timeout."""

import json
import logging
import re
import secrets
import time

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
from pmap_core.costs import fit as costfit
from pmap_core.tracking import experiments, redact_uri
from pmap_core.tracking.per_host import run_per_host
from pmap_core.train import distributed, launch
from pmap_core.train import loading as data_loading
from pmap_core.train.config import TrainConfig
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import MAX_SEED, LabInputError

T = texts("multiprocess")
log = logging.getLogger("pmap_lab")
LAST_RUN = "multiprocess.last_run"  # session state: what the last group did (see `run_group`)
FAULTS = ("none", "late", "kill")
GROUP_TIMEOUT_S = 240
HEARTBEAT_TIMEOUT_S = 15
STEP_LINE = re.compile(r"^step (\d+)/(\d+)")
TAIL = 14
LOGGED_LINES = 400  # of a failed run's output, the last lines the server log keeps
# The two-level benchmark: a group of 2 processes × 2 devices runs `bench two-level` (pmap_core.commbench.two_level).
TWO_LEVEL = "multiprocess.two_level_result"  # session state: the last benchmark's figures
BENCH_PROCESSES, BENCH_PER_PROCESS = 2, 2
BENCH_SIZES, BENCH_REPEATS = (4096, 65536, 2**20), 2
BENCH_TIMEOUT_S = 300
# The lost process: a group of 2 trains, process 1 is killed (SIGKILL) once it has said step LOST_KILL_STEP.
LOST = "multiprocess.lost_result"  # session state: what the last experiment showed
LOST_PROCESSES, LOST_PER_PROCESS = 2, 2
LOST_STEPS, LOST_CHUNK, LOST_KILL_STEP, LOST_BATCH = 2000, 10, 30, 64


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


# --- two levels: α-β within a process and across processes --------------------------------------

def bench_command() -> list[str]:
    """What each process of the benchmark group runs: `bench two-level` (process 0 prints both fits)."""
    return ["bench", "two-level", "--json", "--sizes", ",".join(map(str, BENCH_SIZES)), "--repeats",
            str(BENCH_REPEATS), "--heartbeat-timeout", str(HEARTBEAT_TIMEOUT_S)]


def stream_group(group: launch.ProcessGroup, status: object, on_line: object = None) -> Tail:
    """Show a group's lines in `status` as they come (and how many processes have joined, with the time); call
    `on_line(line)` for each line; return what was shown."""
    bar, timer, tail, shown = status.progress(0.0), status.empty(), status.empty(), Tail()
    joined = 0
    for line in group.lines():
        if line is not None:
            shown.add(line)
            if line.process >= 0 and line.text.startswith(launch.JOINED):
                joined += 1
            if on_line is not None:
                on_line(line)
            tail.code(tail_text(shown.entries), language=None)
        bar.progress(joined / (group.processes + 1), text=T("progress.joined", joined=joined,
                                                             processes=group.processes))
        timer.caption(T("status.elapsed.bench", elapsed=group.elapsed(), limit=group.timeout_s))
    return shown


def run_two_level() -> None:
    """The benchmark in a group of BENCH_PROCESSES × BENCH_PER_PROCESS: one heavy-job slot per process, the group
    killed when the `with` block is left on any path (a Stop or a rerun included)."""
    with heavy_jobs.heavy_job(T, slots=BENCH_PROCESSES), launch.ProcessGroup(
            bench_command(), BENCH_PROCESSES, BENCH_PER_PROCESS, BENCH_TIMEOUT_S,
            join_timeout_s=GROUP_TIMEOUT_S) as group:
        status = st.status(T("bench.running", processes=BENCH_PROCESSES, per=BENCH_PER_PROCESS,
                             sizes=len(BENCH_SIZES)), expanded=True)
        shown = stream_group(group, status)
        outcome = group.outcome()
        status.update(label=T("status.done" if outcome.ok else "status.failed"),
                      state="complete" if outcome.ok else "error", expanded=False)
    if not outcome.ok:
        log.warning("two-level benchmark failed: %s; last lines:\n%s", launch.describe_failure(outcome),
                    "\n".join(shown.everything))
    st.session_state[TWO_LEVEL] = {"ok": outcome.ok, "result": ui_json(outcome.stdout[0]) if outcome.ok else None,
                                   "failure": launch.describe_failure(outcome), "tail": shown.entries,
                                   "elapsed": outcome.elapsed_s}


def level_sentence(level: dict) -> str:
    """What one level's fit says, from its figures: α and β, or which term the noise left unresolved, and the sizes
    whose slope stayed ≤ 0 (listed, not fitted)."""
    sizes = level["sizes"]
    unfitted = [size for size, t in zip(sizes, level["seconds"], strict=True) if not t or t <= 0]
    alpha, beta = level["alpha_s"], level["beta_bytes_per_s"]
    within = level["level"] == "process"
    parts = [T("bench.level.process" if within else "bench.level.network", devices=level["devices"],
               fitted=len(sizes) - len(unfitted), sizes=len(sizes))]
    parts.append(T("bench.alpha", alpha=alpha * 1e6) if alpha and alpha > 0 else T("bench.alpha.none"))
    parts.append(T("bench.beta", beta=beta / 1e9) if beta else T("bench.beta.none"))
    if level.get("worst_ratio"):
        parts.append(T("bench.worst", worst=level["worst_ratio"], from_size=size_text(costfit.RATIO_FROM_BYTES)))
    if unfitted:
        parts.append(T("bench.unfitted", sizes=", ".join(size_text(s) for s in unfitted)))
    return " ".join(parts)


def size_text(size: int) -> str:
    return f"{size // 2**20} MiB" if size >= 2**20 else f"{size // 1024} KiB"


def ratio_sentence(result: dict) -> str:
    """How the two levels compare, each comparison worded from its own ratio (or said to be missing)."""
    alpha, per_byte = result.get("alpha_network_over_process"), result.get("beta_process_over_network")
    parts = []
    if alpha and alpha > 0:
        parts.append(T("bench.ratio.alpha", ratio=alpha, word=T("bench.more" if alpha > 1 else "bench.less")))
    else:
        parts.append(T("bench.ratio.alpha.none"))
    if per_byte and per_byte > 0:
        parts.append(T("bench.ratio.beta", ratio=per_byte, word=T("bench.more" if per_byte > 1 else "bench.less")))
    else:
        parts.append(T("bench.ratio.beta.none"))
    return " ".join(parts)


def show_two_level(run: dict) -> None:
    if not run["ok"] or not run["result"]:
        st.error(T("bench.failed", reason=run["failure"], elapsed=run["elapsed"]), icon="⏱️")
        st.code(tail_text(run["tail"]), language=None)
        return
    result = run["result"]
    st.markdown(T("bench.heading", processes=result["processes"], per=result["devices_per_process"],
                  elapsed=run["elapsed"]))
    for level in result["levels"]:
        st.markdown("- " + level_sentence(level))
    st.markdown(ratio_sentence(result))
    rows = [{"level": T("bench.name.process" if level["level"] == "process" else "bench.name.network"),
             "size": size_text(size), "us": t * 1e6 if t else float("nan")}
            for level in result["levels"] for size, t in zip(level["sizes"], level["seconds"], strict=True)]
    dataframe(T, pd.DataFrame(rows))


# --- a lost process ------------------------------------------------------------------------------

def lost_command(seed: int) -> list[str]:
    """Training long enough to be killed mid-run; a seed of this experiment's own finds its MLflow run afterwards."""
    return ["train", "--json", "--model", "linear", "--global-batch", str(LOST_BATCH), "--steps", str(LOST_STEPS),
            "--chunk", str(LOST_CHUNK), "--learning-rate", "0.2", "--seed", str(seed), "--heartbeat-timeout",
            str(HEARTBEAT_TIMEOUT_S)]


def running_pids(pids: list[int]) -> list[int]:
    """Those of `pids` still running (not gone, not a zombie)."""
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except (FileNotFoundError, IndexError, ProcessLookupError):
            continue
    return alive


def run_lost(uri: str) -> None:
    """Train in a group of LOST_PROCESSES, SIGKILL the last once it has said step LOST_KILL_STEP, and read back what
    the survivor did; the group is killed when the `with` block is left on any path (a Stop or a rerun included)."""
    seed, since = secrets.randbelow(MAX_SEED + 1), time.time() - 1.0
    victim = LOST_PROCESSES - 1
    with heavy_jobs.heavy_job(T, slots=LOST_PROCESSES), launch.ProcessGroup(
            lost_command(seed), LOST_PROCESSES, LOST_PER_PROCESS, GROUP_TIMEOUT_S, tracking_uri=uri,
            join_timeout_s=GROUP_TIMEOUT_S) as group:
        status = st.status(T("lost.running", processes=LOST_PROCESSES, process=victim, step=LOST_KILL_STEP),
                           expanded=True)

        def kill_at_step(line: launch.Line) -> None:
            if (line.process == victim and group.outcome().killed_s is None
                    and line.text.startswith(f"step {LOST_KILL_STEP}/")):
                group.kill(victim)

        shown = stream_group(group, status, kill_at_step)
        outcome = group.outcome()
        status.update(label=T("status.failed"), state="complete", expanded=False)
    pids = group.pids()
    found = experiments.run_with_seed(seed, since, uri)
    losses = ([] if found is None else
              [float(v) for v in experiments.loss_histories([found[0]], uri)["loss"]])
    said = [text for _, text, _ in shown.entries if text and text.startswith(
        (launch.TERMINATED, "error: process 0", "interrupted"))]
    st.session_state[LOST] = {
        "killed": outcome.killed_s is not None, "exit_s": outcome.ended_after_kill_s().get(0),
        "code": launch.describe_exit(outcome.returncodes[0]), "ok": outcome.ok,
        "failure": launch.describe_failure(outcome), "run": found, "losses": losses, "said": said[:1],
        "pids": pids, "left": running_pids(pids), "tail": shown.entries, "uri": redact_uri(uri)}


def lost_verdict(said: list[str]) -> str:
    """Which text says why the survivor left, read from what it said: its watch's word for a process that sent no
    heartbeat for the whole timeout, or another (the launcher's SIGTERM, a collective's error), or nothing."""
    if not said:
        return "lost.unsaid"
    return "lost.after" if any(distributed.SILENT in line for line in said) else "lost.before"


def show_lost(run: dict) -> None:
    if not run["killed"]:
        st.error(T("lost.not_killed", step=LOST_KILL_STEP, reason=run["failure"] if not run["ok"] else
                   T("lost.finished")), icon="⏱️")
        st.code(tail_text(run["tail"]), language=None)
    else:
        exit_s = run["exit_s"]
        if exit_s is None:
            st.markdown(T("lost.exit.unknown", code=run["code"], survivor=0))
        else:
            st.markdown(T("lost.exit", exit=exit_s, code=run["code"], heartbeat=HEARTBEAT_TIMEOUT_S,
                          share=exit_s / HEARTBEAT_TIMEOUT_S,
                          survivor=0, when=T(lost_verdict(run["said"]), process=LOST_PROCESSES - 1)))
        if run["said"]:
            st.caption(T("lost.said", survivor=0))
            st.code(run["said"][0], language=None, wrap_lines=True)
    if run["run"] is None:
        st.markdown(T("lost.no_run"))
    else:
        run_id, state = run["run"]
        losses = run["losses"]
        if losses:
            st.markdown(T("lost.run", status=state, count=len(losses), first=losses[0], last=losses[-1],
                          steps=LOST_STEPS))
            st.line_chart(pd.DataFrame({T("axis.loss"): losses}), height=200)
        else:
            st.markdown(T("lost.run.empty", status=state))
        st.code(f"{run_id}\n{run['uri']}", language=None)
    if run["left"]:
        st.error(T("lost.left", count=len(run["left"]), pids=", ".join(map(str, run["left"]))), icon="🧟")
    else:
        st.markdown(T("lost.none_left", count=len(run["pids"]), pids=", ".join(map(str, run["pids"]))))


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

# Two levels of the mesh, and a lost process: each a group of its own, one heavy-job slot per process.
slots, available = heavy_jobs.server_slots(), runtime_info().device_count
st.subheader(T("bench.title"))
st.markdown(T("bench.intro", processes=BENCH_PROCESSES, per=BENCH_PER_PROCESS))
if available < BENCH_PROCESSES * BENCH_PER_PROCESS:
    st.caption(T("bench.few_devices", devices=available, processes=BENCH_PROCESSES, per=BENCH_PER_PROCESS,
                 total=BENCH_PROCESSES * BENCH_PER_PROCESS))
if slots < BENCH_PROCESSES:
    st.caption(T("group.too_few_slots", need=BENCH_PROCESSES, slots=slots, env=heavy_jobs.HEAVY_JOBS_ENV))
if st.button(T("button.two_level"), key="multiprocess.two_level", disabled=slots < BENCH_PROCESSES):
    with guard(T):
        run_two_level()
if TWO_LEVEL in st.session_state:
    with guard(T):
        show_two_level(st.session_state[TWO_LEVEL])

st.subheader(T("lost.title"))
st.markdown(T("lost.intro", processes=LOST_PROCESSES, per=LOST_PER_PROCESS, process=LOST_PROCESSES - 1,
              step=LOST_KILL_STEP, steps=LOST_STEPS, heartbeat=HEARTBEAT_TIMEOUT_S))
if slots < LOST_PROCESSES:
    st.caption(T("group.too_few_slots", need=LOST_PROCESSES, slots=slots, env=heavy_jobs.HEAVY_JOBS_ENV))
if st.button(T("button.lost"), key="multiprocess.lost", disabled=slots < LOST_PROCESSES):
    with guard(T):
        lost_uri = usable_tracking_uri(T)
        if lost_uri is not None:
            run_lost(lost_uri)
if LOST in st.session_state:
    with guard(T):
        show_lost(st.session_state[LOST])

st.markdown(T("cluster"))
st.code("python -m pmap_core launch --processes 2 --devices-per-process 4 train --dataset-size 256\n"
        "# " + T("cluster.code") + "\n"
        "python -m pmap_core train --dataset-size 256 --coordinator-address 10.0.0.1:1234 --num-processes 2 "
        "--process-id 0\n"
        "python -m pmap_core train --dataset-size 256 --coordinator-address 10.0.0.1:1234 --num-processes 2 "
        "--process-id 1", language="bash")
show_code(T, data_loading.step_rows, data_loading.load_local, data_loading.global_inputs, run_per_host)
