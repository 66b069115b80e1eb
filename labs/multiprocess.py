"""Multi-process lab: P real `jax.distributed` processes on this machine train as one, each loading
only its own rows of the global batch; faults (a late process, a killed process) shown live.

Each process is a Python with JAX of its own: a run takes one heavy-job slot per process. The visitor
sees the lab's own lines; what native libraries print (XLA's logs, crash reports with stack addresses)
goes to the server log, and a group that never formed is reported by its join timeout. Each group the page
runs draws through its own module: `ui.multiprocess_training`, `ui.multiprocess_two_level`, `ui.multiprocess_lost`
(their lines streamed by `ui.multiprocess_group`)."""

import streamlit as st

from labs.ui import heavy_jobs
from labs.ui.blocks import export_button, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_int
from labs.ui.multiprocess_group import HEARTBEAT_TIMEOUT_S
from labs.ui.multiprocess_lost import (
    LOST,
    LOST_KILL_STEP,
    LOST_PER_PROCESS,
    LOST_PROCESSES,
    LOST_STEPS,
    run_lost,
    show_lost,
)
from labs.ui.multiprocess_training import FAULTS, LAST_RUN, run_group, show_run
from labs.ui.multiprocess_two_level import BENCH_PER_PROCESS, BENCH_PROCESSES, TWO_LEVEL, run_two_level, show_two_level
from labs.ui.tracking import usable_tracking_uri
from labs.ui.visitor import guard
from pmap_core import export
from pmap_core.tracking.per_host import run_per_host
from pmap_core.train import launch
from pmap_core.train import loading as data_loading
from pmap_core.train.programs import IMPLEMENTATIONS
from pmap_core.validation import LabInputError

T = texts("multiprocess")


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
