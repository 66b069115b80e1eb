"""Multi-process runs with `jax.distributed`: several processes (or hosts) train as one.

Each process owns its local devices; together they form the global device list
that `jax.devices()` returns. A pmap over all of them runs one program, and each
process feeds only its own devices' shards of the global batch — so the result
equals the single-process run on the same global batch (tests/system/test_distributed.py).

`initialize` must run before any JAX computation, because it decides which
devices the backend will see.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import NoReturn

import jax

from pmap_core.train import launch
from pmap_core.validation import LabInputError, check_int

MAX_PROCESSES = 1024
AUTO = "auto"
# JAX's cluster detectors (jax._src.clusters) that `--cluster` may name: what each reads from the environment
# its launcher sets. slurm: SLURM_JOB_ID, SLURM_STEP_NODELIST, SLURM_NTASKS, SLURM_PROCID, SLURM_LOCALID (the
# coordinator is the step's first node, on port 61440 + job id mod 4096). ompi: Open MPI 4's mpirun
# (OMPI_MCA_orte_hnp_uri, OMPI_COMM_WORLD_SIZE, _RANK, _LOCAL_RANK; the coordinator is mpirun's host);
# Open MPI 5 goes through mpi4py. mpi4py: only when named (a COMM_WORLD broadcast of the address).
# k8s: KUBERNETES_SERVICE_HOST and the `kubernetes` package, which asks the API server for its pod and Job.
# JAX_COORDINATOR_PORT, when set, is the coordinator's port under any of them.
CLUSTERS = ("slurm", "ompi", "mpi4py", "k8s")
WATCH_S = 0.5  # how often a process of a group beats and reads the others' beats
BEATS = "pmap-lab/beats"  # the coordinator's key-value directory of each process's beat count
DONE = "done"  # a process's last beat: it exits normally and waits in JAX's shutdown barrier, no longer beating
SILENT = "sent no heartbeat for"  # how the watch words a silent process (the Multi-process page looks for it)
MIN_HEARTBEAT_S = 2
MAX_HEARTBEAT_S = 86_400


def jax_heartbeat_s(heartbeat_timeout_s: int) -> int:
    """JAX's own heartbeat timeout, well past the lab's: once JAX's coordinator counts a process as gone, every
    other one is aborted the moment its error polling answers (SIGABRT, a native crash report, no MLflow run
    ended), a race the lab's watch (`watch_group`) lost now and then. It counts from the last heartbeat it got,
    some seconds before the death (8.4-9.8 s after a kill with a 10 s timeout, on these machines)."""
    return 2 * heartbeat_timeout_s + 10


@dataclasses.dataclass(frozen=True)
class ProcessInfo:
    process_id: int
    num_processes: int
    local_devices: int
    global_devices: int

    @property
    def is_leader(self) -> bool:
        """Process 0 speaks for the group: it alone writes to MLflow and prints the result."""
        return self.process_id == 0


def _configure() -> None:
    """What every process sets before it joins. CPU devices of different processes talk through gloo (TCP); GPUs
    and TPUs use their own links. No preemption service: its native SIGTERM handler would replace Python's and
    only take note of the signal, so a SIGTERM from a launcher (mpirun's or srun's when another process died,
    the local launcher's, `timeout`'s) would no longer end the command, nor its MLflow run as KILLED (the lab
    uses no preemption sync points)."""
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_enable_preemption_service", False)


def initialize(coordinator_address: str, num_processes: int, process_id: int,
               timeout_s: int = 120, heartbeat_timeout_s: int = 100) -> ProcessInfo:
    """Join the group coordinated at `coordinator_address` ("host:port"; process 0 serves it).

    Joining waits up to `timeout_s` for every process; a process that sends no heartbeat for
    `heartbeat_timeout_s` counts as dead (`watch_group`)."""
    heartbeat_timeout_s = check_int("heartbeat_timeout_s", heartbeat_timeout_s, MIN_HEARTBEAT_S, MAX_HEARTBEAT_S)
    num_processes = check_int("num_processes", num_processes, 1, MAX_PROCESSES)
    process_id = check_int("process_id", process_id, 0, num_processes - 1)
    if not coordinator_address or ":" not in coordinator_address:
        raise LabInputError("bad_coordinator", "coordinator address must look like host:port, got {value!r}",
                            value=coordinator_address)
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        raise RuntimeError("jax.distributed must be initialized before any JAX computation")
    _configure()
    jax.distributed.initialize(coordinator_address=coordinator_address, num_processes=num_processes,
                               process_id=process_id, initialization_timeout=timeout_s,
                               heartbeat_timeout_seconds=jax_heartbeat_s(heartbeat_timeout_s))
    return process_info()


def initialize_from_cluster(cluster: str = AUTO, timeout_s: int = 120, heartbeat_timeout_s: int = 100) -> ProcessInfo:
    """Join the group a cluster's launcher started (`srun`, `mpirun`, a Kubernetes Job): `jax.distributed.initialize()`
    given no address, number of processes or id, which JAX reads from the launcher's environment (`CLUSTERS`).
    `cluster` names one detector, or `auto` for the first whose environment is present."""
    heartbeat_timeout_s = check_int("heartbeat_timeout_s", heartbeat_timeout_s, MIN_HEARTBEAT_S, MAX_HEARTBEAT_S)
    if cluster != AUTO and cluster not in CLUSTERS:
        raise LabInputError("bad_cluster", "unknown cluster {value!r}; choose auto or one of {options}",
                            value=cluster, options=", ".join(CLUSTERS))
    from jax._src import clusters, xla_bridge

    detectors = [env for env in clusters.ClusterEnv._cluster_types
                 if (env.name == cluster if cluster != AUTO else not env.opt_in_only_method)]
    if cluster != "mpi4py" and not any(env.is_env_present() for env in detectors):  # mpi4py asks MPI itself
        raise LabInputError("no_cluster", "no cluster launcher set this process's environment (looked for {wanted}): "
                            "start it with srun or mpirun, or give --coordinator-address, --num-processes and "
                            "--process-id", wanted=", ".join(CLUSTERS) if cluster == AUTO else cluster)
    if xla_bridge.backends_are_initialized():
        raise RuntimeError("jax.distributed must be initialized before any JAX computation")
    _configure()
    jax.distributed.initialize(cluster_detection_method=None if cluster == AUTO else cluster,
                               initialization_timeout=timeout_s,
                               heartbeat_timeout_seconds=jax_heartbeat_s(heartbeat_timeout_s))
    return process_info()


def join_group(coordinator_address: str | None, num_processes: int, process_id: int,
               timeout_s: int = 120, heartbeat_timeout_s: int = 100, cluster: str | None = None,
               on_lost: Callable[[str], None] | None = None) -> ProcessInfo:
    """Join the group when there is one (an address, more than one process, or a cluster's launcher named
    by `cluster`), exiting with the launcher that started this process; where this process stands, in a
    group or alone. Once the group has formed, one line on stderr says so (`launch.JOINED`: the launcher
    reads it, with the process's host and pid), and `on_lost` is called if the group breaks (`watch_group`)."""
    if cluster:
        if coordinator_address or num_processes > 1 or process_id:
            raise LabInputError("cluster_and_address", "--cluster {value} reads the coordinator, the number of "
                                "processes and this process's id from the launcher; leave out --coordinator-address, "
                                "--num-processes and --process-id", value=cluster)
        launch.exit_with_parent()
        info = initialize_from_cluster(cluster, timeout_s, heartbeat_timeout_s)
    elif not coordinator_address and num_processes <= 1:
        return process_info()
    else:
        launch.exit_with_parent()
        info = initialize(coordinator_address or "", num_processes, process_id, timeout_s, heartbeat_timeout_s)
    if on_lost is not None:
        watch_group(on_lost, heartbeat_timeout_s)
    print(f"{launch.JOINED} process {info.process_id} of {info.num_processes}, {info.local_devices} of "
          f"{info.global_devices} devices, pid {os.getpid()} on {socket.gethostname()}", file=sys.stderr, flush=True)
    return info


def watch_group(on_lost: Callable[[str], None], heartbeat_timeout_s: float,
                every_s: float = WATCH_S) -> threading.Thread:
    """Beat every `every_s` in the coordinator's key-value store and read the others' beats, in a thread of its own;
    call `on_lost(reason)` once a process has not beaten for `heartbeat_timeout_s` (it died, hung or lost its
    connection) or the coordinator cannot be reached (process 0 is gone). A collective waiting for a dead process
    does not always fail (gloo may wait on a connection the dead process never used), and JAX's own answer, at its
    longer timeout (`jax_heartbeat_s`), is to abort this process: `on_lost` leaves first. At a normal exit the
    watch stops and the last beat says DONE (before JAX's own shutdown, whose barrier waits for every process
    without beating here: the others must not count a finished process as silent)."""
    from jax._src import distributed as jax_distributed

    client, count, me = jax_distributed.global_state.client, jax.process_count(), jax.process_index()
    stop, beating = threading.Event(), threading.Lock()  # no beat after the last one

    def leaving() -> None:
        with beating:
            stop.set()
        with contextlib.suppress(Exception):
            client.key_value_set(f"{BEATS}/{me}", DONE, allow_overwrite=True)

    atexit.register(leaving)  # after JAX's registration: runs before its shutdown

    def beat_and_listen() -> dict[str, str]:
        with beating:
            if not stop.is_set():
                client.key_value_increment(f"{BEATS}/{me}", 1)
        return dict(client.key_value_dir_get(BEATS))

    def watch() -> None:
        heard = dict.fromkeys(range(count), (None, time.monotonic()))  # each process's last beat, and when it came
        while not stop.wait(every_s):
            try:
                beats = beat_and_listen()
            except Exception as error:  # noqa: BLE001 - any failure to reach the coordinator means the group is broken
                reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                reason = f"the coordinator could not be reached: {reason}"
            else:
                now = time.monotonic()
                for rank, (beat, _) in heard.items():
                    latest = beats.get(f"{BEATS}/{rank}", beat)
                    if latest != beat:
                        heard[rank] = (latest, now)
                silent = [rank for rank, (beat, since) in heard.items()
                          if beat != DONE and now - since > heartbeat_timeout_s]
                if not silent:
                    continue
                reason = f"process {', '.join(map(str, silent))} {SILENT} {heartbeat_timeout_s:g} s"
            if not stop.is_set():
                on_lost(reason)
            return

    thread = threading.Thread(target=watch, name="group-watch", daemon=True)
    thread.start()
    return thread


def in_group() -> bool:
    """Whether this process has joined a `jax.distributed` group (without starting a JAX backend)."""
    from jax._src import distributed as jax_distributed

    return getattr(jax_distributed.global_state, "client", None) is not None


def leave_now(status: int) -> NoReturn:
    """End this process of a group at once, with `status`. A process that leaves normally waits at exit in JAX's
    shutdown barrier for every other one; with one of them gone, it waits there for the heartbeat timeout and
    is then aborted (SIGABRT, with a native crash report). Whatever must be written is written first."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def process_info() -> ProcessInfo:
    """Where this process stands (one process when `initialize` was never called)."""
    return ProcessInfo(jax.process_index(), jax.process_count(), jax.local_device_count(), jax.device_count())
