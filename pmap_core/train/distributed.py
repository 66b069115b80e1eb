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
WATCH_S = 0.5  # how often a process of a group asks the coordinator which processes are alive


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
    `heartbeat_timeout_s` counts as dead, and the coordinator then stops every other one."""
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
                               heartbeat_timeout_seconds=heartbeat_timeout_s)
    return process_info()


def initialize_from_cluster(cluster: str = AUTO, timeout_s: int = 120, heartbeat_timeout_s: int = 100) -> ProcessInfo:
    """Join the group a cluster's launcher started (`srun`, `mpirun`, a Kubernetes Job): `jax.distributed.initialize()`
    given no address, number of processes or id, which JAX reads from the launcher's environment (`CLUSTERS`).
    `cluster` names one detector, or `auto` for the first whose environment is present."""
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
                               initialization_timeout=timeout_s, heartbeat_timeout_seconds=heartbeat_timeout_s)
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
        watch_group(on_lost)
    print(f"{launch.JOINED} process {info.process_id} of {info.num_processes}, {info.local_devices} of "
          f"{info.global_devices} devices, pid {os.getpid()} on {socket.gethostname()}", file=sys.stderr, flush=True)
    return info


def watch_group(on_lost: Callable[[str], None], every_s: float = WATCH_S) -> threading.Thread:
    """Ask the coordinator every `every_s` which processes of the group are alive, in a thread of its own; call
    `on_lost(reason)` once one is not (it died and its connection closed, or it sent no heartbeat for the heartbeat
    timeout) or the coordinator cannot be asked (process 0 is gone). A collective waiting for a dead process does
    not always fail (gloo may wait on a connection the dead process never used), and JAX's own answer, once the
    coordinator reports it, is to abort this process (SIGABRT, a native crash report, no MLflow run ended):
    `on_lost` leaves first. The watch stops when the interpreter starts to exit (before JAX's own shutdown, where
    the processes leave the group one by one)."""
    from jax._src import distributed as jax_distributed

    client, count = jax_distributed.global_state.client, jax.process_count()
    stop = threading.Event()
    atexit.register(stop.set)  # after JAX's registration: runs before its shutdown

    def watch() -> None:
        while not stop.wait(every_s):
            try:
                live = client.get_live_nodes(list(range(count)))
            except Exception as error:  # noqa: BLE001 - any failure to ask means the group is broken
                reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                reason = f"the coordinator could not be asked which processes are alive: {reason}"
            else:
                if len(live) >= count:
                    continue
                gone = sorted(set(range(count)) - set(live))
                reason = (f"the coordinator counts process {', '.join(map(str, gone))} as gone (its connection closed, "
                          "or no heartbeat within the heartbeat timeout)")
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
