"""The Multi-process page's two levels of a mesh: a group of 2 processes × 2 devices runs `bench two-level`
(`pmap_core.commbench.two_level`), the α-β fit within a process and across processes, each level's fit and how the
two compare said from their own figures."""

import logging

import pandas as pd
import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.blocks import dataframe
from labs.ui.i18n import texts
from labs.ui.multiprocess_group import GROUP_TIMEOUT_S, HEARTBEAT_TIMEOUT_S, stream_group, tail_text, ui_json
from pmap_core.costs import fit as costfit
from pmap_core.train import launch

T = texts("multiprocess")
log = logging.getLogger("pmap_lab")
TWO_LEVEL = "multiprocess.two_level_result"  # session state: the last benchmark's figures
BENCH_PROCESSES, BENCH_PER_PROCESS = 2, 2
BENCH_SIZES, BENCH_REPEATS = (4096, 65536, 2**20), 2
BENCH_TIMEOUT_S = 300


def bench_command() -> list[str]:
    """What each process of the benchmark group runs: `bench two-level` (process 0 prints both fits)."""
    return ["bench", "two-level", "--json", "--sizes", ",".join(map(str, BENCH_SIZES)), "--repeats",
            str(BENCH_REPEATS), "--heartbeat-timeout", str(HEARTBEAT_TIMEOUT_S)]


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
