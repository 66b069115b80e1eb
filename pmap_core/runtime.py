"""The device runtime: fixed once per process, before the first JAX operation.

JAX decides how many devices exist when its backend starts. Everything that
shapes that decision therefore lives here and runs before ``import jax`` does
any work: the simulated CPU device count and the size of XLA's CPU worker pool.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Mapping

DEVICE_COUNT_ENV = "PMAP_LAB_DEVICES"
JAX_DEVICE_COUNT_ENV = "JAX_NUM_CPU_DEVICES"  # jax_num_cpu_devices, read when JAX is imported
# The name every data-parallel program here gives its device axis: pmap's axis_name and the mesh axis.
DATA_AXIS = "data"
DEFAULT_CPU_DEVICES = 8
MAX_CPU_DEVICES = 64

# XLA's CPU worker pool has max(NPROC or cores, devices) threads. With 8
# simulated devices on 2 cores, back-to-back unblocked collectives can leave a
# device without a thread to reach the rendezvous, and after 40 s XLA aborts the
# process (jax-ml/jax#25861). A pool of at least twice the device count (and
# never under 16) removes the starvation; tests/system/test_runtime.py proves it.
MIN_WORKER_THREADS = 16

# XLA:CPU records each operation of a compiled program (its HLO name, its device) in a profiler trace only
# with this flag, read when the backend starts; without it a trace shows only thread-pool regions. With no
# trace running it changes no result (the same losses to the last bit) and no step time beyond noise, measured
# here (`pmap_core.profiling`).
OP_TRACING_FLAG = "--xla_cpu_enable_xprof_traceme=true"

_configured_count: int | None = None

# JAX's persistent compilation cache for the app server: a restarted server reads the programs its
# last run compiled instead of compiling them again. `off` turns it off; a folder puts it there.
COMPILATION_CACHE_ENV = "PMAP_LAB_COMPILATION_CACHE"
COMPILATION_CACHE_FOLDER = ".jax-cache"  # beside the sqlite store (else in the working directory)
# Bounded, so that JAX holds a file lock around each read and write: two app processes of one host
# share the folder. Every program is cached, however quickly it compiles: the first render after a
# restart compiles the labs' many small programs.
COMPILATION_CACHE_MAX_BYTES = 1 << 30
_NOT_YET = object()
_cache_lock = threading.Lock()
_cache_in_force: object = _NOT_YET
log = logging.getLogger("pmap_lab")


@dataclasses.dataclass(frozen=True)
class RuntimeInfo:
    jax_version: str
    backend: str
    device_kind: str
    device_count: int
    simulated: bool
    physical_cores: int

    def hardware_ceiling(self, devices: int) -> float:
        """Best possible speedup of `devices` devices over one on this runtime."""
        if self.simulated:
            return float(min(devices, self.physical_cores))
        return float(devices)


def requested_cpu_devices() -> int:
    raw = os.environ.get(DEVICE_COUNT_ENV, "").strip()
    if not raw:
        return DEFAULT_CPU_DEVICES
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f"{DEVICE_COUNT_ENV} must be a whole number, got {raw!r}") from None
    if not 1 <= count <= MAX_CPU_DEVICES:
        raise ValueError(f"{DEVICE_COUNT_ENV} must be between 1 and {MAX_CPU_DEVICES}, got {count}")
    return count


def configure_runtime() -> int:
    """Fix the simulated CPU device count and the worker pool. Idempotent.

    Real accelerators are used as they are: the CPU device count only shapes
    the CPU backend, which is the default backend only when nothing else exists.
    Returns the CPU device count in force.
    """
    global _configured_count
    if _configured_count is not None:
        return _configured_count
    count = requested_cpu_devices()
    threads = max(MIN_WORKER_THREADS, 2 * count)
    current = os.environ.get("NPROC", "")
    if not current.isdigit() or int(current) < threads:
        os.environ["NPROC"] = str(threads)
    # JAX reads its device count from the environment when it is imported: set so, a process that never
    # imports JAX (`python -m pmap_core --help`) never pays for importing it.
    os.environ[JAX_DEVICE_COUNT_ENV] = str(count)
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_enable_xprof_traceme" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {OP_TRACING_FLAG}".strip()
    if "jax" not in sys.modules:
        _configured_count = count
        return count

    import jax
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        if jax.config.jax_num_cpu_devices not in (count, -1) or len(jax.devices("cpu")) != count:
            raise RuntimeError(
                "JAX started before pmap_core could fix the device count; "
                "import pmap_core before any JAX operation"
            )
    else:
        jax.config.update("jax_num_cpu_devices", count)
    _configured_count = count
    return count


def compilation_cache_dir(tracking_uri: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """Where the app keeps JAX's compilation cache: `PMAP_LAB_COMPILATION_CACHE` (a folder, or `off`
    for none), else `.jax-cache` beside a `sqlite:///` store, else in the working directory."""
    raw = environ.get(COMPILATION_CACHE_ENV, "").strip()
    if raw.lower() == "off":
        return None
    if raw:
        return os.path.abspath(os.path.expanduser(raw))
    store = tracking_uri.removeprefix("sqlite:///").split("?", 1)[0] if tracking_uri.startswith("sqlite:///") else ""
    folder = os.path.dirname(os.path.abspath(store)) if store and store != ":memory:" else os.getcwd()
    return os.path.join(folder, COMPILATION_CACHE_FOLDER)


def configure_compilation_cache(tracking_uri: str) -> str | None:
    """Turn on JAX's persistent compilation cache for this process (`compilation_cache_dir`), once,
    before its first compile; returns the folder in force, or None.

    JAX's own `JAX_COMPILATION_CACHE_DIR`, when set, wins and is left as it is (the tests set it for
    every process they start). A folder that cannot be made, or a missing `filelock`, leaves the cache off,
    with one line in the log."""
    global _cache_in_force
    with _cache_lock:
        if _cache_in_force is not _NOT_YET:
            return _cache_in_force  # type: ignore[return-value]
        folder = os.environ.get("JAX_COMPILATION_CACHE_DIR") or None
        if folder is None:
            folder = compilation_cache_dir(tracking_uri)
            try:
                if folder is not None:
                    os.makedirs(folder, exist_ok=True)
            except OSError as error:
                log.warning("JAX's compilation cache is off: %s", error)
                folder = None
            if folder is not None and importlib.util.find_spec("filelock") is None:
                # JAX refuses a size-bounded cache without it, and says so only in a UserWarning per compile.
                log.error("JAX's compilation cache is off: the `filelock` package is missing, so a restarted "
                          "server compiles every program again (install requirements.txt: filelock)")
                folder = None
            if folder is not None:
                import jax

                jax.config.update("jax_compilation_cache_dir", folder)
                jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
                jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
                jax.config.update("jax_compilation_cache_max_size", COMPILATION_CACHE_MAX_BYTES)
        _cache_in_force = folder
        return folder


def device_ladder(max_devices: int) -> list[int]:
    """The device counts a sweep visits: 1, 2, 4, … below `max_devices`, then `max_devices` itself."""
    counts = [1]
    while counts[-1] * 2 < max_devices:
        counts.append(counts[-1] * 2)
    return sorted({*counts, max_devices})


def physical_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"


def usable_cpus(affinity: int, cpu_max: str | None) -> int:
    """How many CPUs a process can keep busy: the CPUs it may run on (`affinity`), capped by a
    cgroup v2 CPU quota. `cpu_max` is the text of `cpu.max`, "QUOTA PERIOD" ("150000 100000" is
    1.5 CPUs, counted as 2), "max PERIOD" for no quota, or None where there is no such file."""
    cpus = max(1, affinity)
    fields = (cpu_max or "").split()
    if len(fields) == 2 and fields[0] != "max":
        try:
            quota, period = int(fields[0]), int(fields[1])
        except ValueError:
            return cpus
        if quota > 0 and period > 0:
            cpus = min(cpus, max(1, -(-quota // period)))
    return cpus


def process_cpus() -> int:
    """`usable_cpus` of this process, read from the system (`os.cpu_count()` counts the host's CPUs)."""
    try:
        with open(CGROUP_CPU_MAX) as file:
            cpu_max = file.read()
    except OSError:
        cpu_max = None
    return usable_cpus(physical_cores(), cpu_max)


def describe_runtime() -> RuntimeInfo:
    import jax

    devices = jax.devices()
    backend = jax.default_backend()
    return RuntimeInfo(
        jax_version=jax.__version__,
        backend=backend,
        device_kind=devices[0].device_kind,
        device_count=len(devices),
        simulated=backend == "cpu",
        physical_cores=physical_cores(),
    )
