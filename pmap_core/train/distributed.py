"""Multi-process runs with `jax.distributed`: several processes (or hosts) train as one.

Each process owns its local devices; together they form the global device list
that `jax.devices()` returns. A pmap over all of them runs one program, and each
process feeds only its own devices' shards of the global batch — so the result
equals the single-process run on the same global batch (tests/system/test_distributed.py).

`initialize` must run before any JAX computation, because it decides which
devices the backend will see.
"""

from __future__ import annotations

import dataclasses
import sys

import jax

from pmap_core.train import launch
from pmap_core.validation import LabInputError, check_int

MAX_PROCESSES = 1024


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
    # CPU devices of different processes talk through gloo (TCP); GPUs and TPUs use their own links.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator_address, num_processes=num_processes,
                               process_id=process_id, initialization_timeout=timeout_s,
                               heartbeat_timeout_seconds=heartbeat_timeout_s)
    return process_info()


def join_group(coordinator_address: str | None, num_processes: int, process_id: int,
               timeout_s: int = 120, heartbeat_timeout_s: int = 100) -> ProcessInfo:
    """Join the group when there is one (an address, or more than one process), exiting with the
    launcher that started this process; where this process stands, in a group or alone. Once the group
    has formed, one line on stderr says so (`launch.JOINED`: the launcher reads it)."""
    if not coordinator_address and num_processes <= 1:
        return process_info()
    launch.exit_with_parent()
    info = initialize(coordinator_address or "", num_processes, process_id, timeout_s, heartbeat_timeout_s)
    print(f"{launch.JOINED} process {info.process_id} of {info.num_processes}, {info.local_devices} of "
          f"{info.global_devices} devices", file=sys.stderr, flush=True)
    return info


def process_info() -> ProcessInfo:
    """Where this process stands (one process when `initialize` was never called)."""
    return ProcessInfo(jax.process_index(), jax.process_count(), jax.local_device_count(), jax.device_count())
