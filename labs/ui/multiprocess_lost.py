"""The Multi-process page's lost process: a group of 2 trains, process 1 is killed (SIGKILL) once it has said step
LOST_KILL_STEP; when and why the survivor left, what its MLflow run kept, and whether any process was left behind."""

import secrets
import time

import pandas as pd
import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.i18n import texts
from labs.ui.multiprocess_group import GROUP_TIMEOUT_S, HEARTBEAT_TIMEOUT_S, stream_group, tail_text
from pmap_core.tracking import experiments, redact_uri
from pmap_core.train import distributed, launch
from pmap_core.validation import MAX_SEED

T = texts("multiprocess")
LOST = "multiprocess.lost_result"  # session state: what the last experiment showed
LOST_PROCESSES, LOST_PER_PROCESS = 2, 2
LOST_STEPS, LOST_CHUNK, LOST_KILL_STEP, LOST_BATCH = 2000, 10, 30, 64


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
