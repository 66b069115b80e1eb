"""`ClusterGroup`: P processes of one `jax.distributed` run started by a cluster's launcher (`mpirun -np P`, `srun
--ntasks P`, `launch --via`), with the surface of the local `ProcessGroup` (`train.launch`). Each joins with
`jax.distributed.initialize()` given nothing (`train --cluster auto`), the launcher stops the others when one dies,
and its tagged output is split back into each process's lines (`split_tagged`). What every group shares (lines,
outcome, limits) is `train.group`'s.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

from pmap_core.runtime import DEVICE_COUNT_ENV
from pmap_core.train.group import (
    _ROOT,
    JOINED,
    LOCAL,
    MPIRUN,
    PARENT_ANY,
    PARENT_ENV,
    SRUN,
    STOP_GRACE_S,
    TRACKING_URI_ENV,
    Line,
    Outcome,
    _live,
    _live_lock,
    _signal_group,
    free_port,
)

# mpirun --tag-output writes each chunk a process wrote behind "[job,rank]<stream>:"; a physical line ends where
# the process's line ended, so every chunk before the last one of a physical line was cut short (by the pipe, or
# by another process's chunk) and continues with the next chunk of the same process and stream.
_MPI_TAG = re.compile(r"\[\d+,(\d+)\]<(stdout|stderr|stddiag)>:")
# srun --label writes "rank: text" (the rank padded to the width of the largest), and cuts a line into pieces of
# SRUN_PIECE bytes, each labelled: a piece of exactly that length continues on the next line of its process.
_SRUN_LABEL = re.compile(r"^ *(\d+): (.*)$", re.S)
SRUN_PIECE = 1024
_JOINED_AT = re.compile(r", pid (\d+) on (\S+)$")
COORDINATOR_PORT_ENV = "JAX_COORDINATOR_PORT"  # the coordinator's port under a cluster's launcher (JAX reads it)
CLUSTER_OPTION = ["--cluster", "auto"]  # what a process started by mpirun or srun adds to its command
INSTALL = {MPIRUN: "apt-get install openmpi-bin", SRUN: "apt-get install slurm-client, and a Slurm cluster"}
EXIT_POLL_S = 0.05
MPIRUN_SIGNAL_WAIT_S = 2.0  # mpirun's odls_base_sigkill_timeout: a death, then SIGTERM to the others, then SIGKILL


def launcher_missing_reason(via: str) -> str | None:
    """Why `via` cannot start processes here (its program is not on PATH), or None."""
    if via == LOCAL or shutil.which(via):
        return None
    return f"{via} is not installed here ({INSTALL[via]})"


def cluster_argv(via: str, processes: int, worker: Sequence[str], env_names: Sequence[str],
                 as_root: bool = False) -> list[str]:
    """The command line that has `via` start `processes` copies of `worker`.

    mpirun: each process's lines tagged with its rank; more processes than cores allowed (a laptop, a CI
    machine); the environment variables named passed on (mpirun passes only those to other hosts); once a
    process has died, the others get SIGCONT at once, SIGTERM MPIRUN_SIGNAL_WAIT_S later and SIGKILL as much
    again after it (Open MPI waits 1 s: too short for a run's last write to a tracking server);
    `--allow-run-as-root` when this is root (Open MPI refuses root otherwise). srun: lines labelled with the
    rank, and one process ending with an error or a signal ends the step (`--kill-on-bad-exit`); srun passes
    its whole environment on."""
    if via == MPIRUN:
        argv = ["mpirun", "-np", str(processes), "--tag-output", "--oversubscribe",
                "--mca", "odls_base_sigkill_timeout", f"{MPIRUN_SIGNAL_WAIT_S:.0f}"]
        if as_root:
            argv.append("--allow-run-as-root")
        for name in env_names:
            argv += ["-x", name]
    elif via == SRUN:
        argv = ["srun", "--ntasks", str(processes), "--label", "--kill-on-bad-exit=1", "--job-name=pmap-lab"]
    else:
        raise ValueError(f"no cluster launcher {via!r}")
    return [*argv, *worker]


def split_tagged(via: str, line: str) -> tuple[str, list[tuple[int, str, str]]]:
    """One line of mpirun's or srun's output: its own text (not a process's: "" when none), and the
    chunks of the processes' output in it, as (rank, stream, text)."""
    if via == MPIRUN:
        parts = _MPI_TAG.split(line)
        chunks = [(int(parts[i]), "stdout" if parts[i + 1] == "stdout" else "stderr", parts[i + 2])
                  for i in range(1, len(parts), 3)]
        return parts[0], chunks
    found = _SRUN_LABEL.match(line)
    return ("", [(int(found.group(1)), "", found.group(2))]) if found else (line, [])


def _pid_alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError, IndexError):
        return False
    except PermissionError:
        return True


def dies_with_this_process(argv: list[str]) -> list[str]:
    """`argv`, started so that the kernel sends it SIGTERM when the thread that started it ends (util-linux's
    `setpriv --pdeathsig`, which execs it): mpirun then stops its processes and srun cancels its step, even when
    this launcher is killed with no cleanup. `argv` as it is where setpriv is missing."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else list(argv)


class ClusterGroup:
    """P processes of one `jax.distributed` run started by a cluster's launcher, `mpirun -np P` or `srun
    --ntasks P`: each runs the command with `--cluster auto`, so `jax.distributed.initialize()` reads the
    coordinator, P and the process's id from the environment the launcher set. Same surface as ProcessGroup.

    The launcher is this object's one child, in a session of its own, told by the kernel to stop when this
    process ends (SIGTERM: mpirun stops its processes, srun cancels its step). When one process dies the
    launcher stops the others (mpirun: SIGTERM after MPIRUN_SIGNAL_WAIT_S, SIGKILL as much later; srun
    --kill-on-bad-exit: SIGTERM at once, SIGKILL after Slurm's KillWait). The
    processes' lines come from the launcher's tagged output, and each process's pid and host from its JOINED
    line: to kill one, to see when each ended, and on close to kill any left on this host."""

    def __init__(self, via: str, command: Sequence[str], processes: int, devices_per_process: int,
                 timeout_s: float, cwd: str | None = None, env: dict[str, str] | None = None,
                 tracking_uri: str | None = None, join_timeout_s: float | None = None):
        self.via, self.processes, self.timeout_s, self.join_timeout_s = via, processes, timeout_s, join_timeout_s
        base = dict(env or os.environ)
        port = base.get(COORDINATOR_PORT_ENV) or str(free_port())
        self.address = f"found by jax.distributed.initialize() under {via} (port {port})"
        passed = {DEVICE_COUNT_ENV: str(devices_per_process), PARENT_ENV: PARENT_ANY, COORDINATOR_PORT_ENV: port,
                  "PYTHONPATH": os.pathsep.join(p for p in (_ROOT, base.get("PYTHONPATH")) if p),
                  **({TRACKING_URI_ENV: tracking_uri} if tracking_uri else {})}
        if TRACKING_URI_ENV in base:
            passed.setdefault(TRACKING_URI_ENV, base[TRACKING_URI_ENV])
        self._env = {**base, **passed}
        worker = [sys.executable, "-u", "-m", "pmap_core", *command, *CLUSTER_OPTION]
        self._argv = cluster_argv(via, processes, worker, sorted(passed), os.geteuid() == 0)
        self._cwd = cwd
        self._proc: subprocess.Popen | None = None
        self._stdout: list[list[str]] = [[] for _ in range(processes)]
        self._joined = [False] * processes
        self._pids: dict[int, int] = {}  # rank -> pid, for the processes on this host
        self._ended: list[float | None] = [None] * processes
        self._lines: queue.Queue[Line] = queue.Queue()
        self._pumps: list[threading.Thread] = []
        self._started = 0.0
        self._closed = threading.Event()
        self.dead: int | None = None
        self._killed: int | None = None
        self._killed_s: float | None = None
        self.timed_out = False

    @property
    def argv(self) -> list[str]:
        return list(self._argv)

    def __enter__(self) -> ClusterGroup:
        with _live_lock:
            _live.add(self)
        self._started = time.monotonic()
        self._proc = subprocess.Popen(
            dies_with_this_process(self._argv), cwd=self._cwd, env=self._env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1, start_new_session=True)
        for stream, name in ((self._proc.stdout, "stdout"), (self._proc.stderr, "stderr")):
            pump = threading.Thread(target=self._pump, args=(stream, name), daemon=True)
            pump.start()
            self._pumps.append(pump)
        threading.Thread(target=self._note_ends, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _say(self, text: str) -> None:
        self._lines.put(Line(-1, text, "launcher"))

    def _pump(self, stream: object, name: str) -> None:
        partial: dict[tuple[int, str], str] = {}
        for raw in stream:  # type: ignore[attr-defined]
            own, chunks = split_tagged(self.via, raw.rstrip("\n"))
            if own:
                self._say(own if own.startswith(f"{self.via}:") else f"{self.via}: {own}")
            for position, (rank, stream_name, text) in enumerate(chunks):
                key = (rank, stream_name or name)
                cut = (position < len(chunks) - 1 if self.via == MPIRUN else len(text) == SRUN_PIECE)
                if cut:
                    partial[key] = partial.get(key, "") + text
                else:
                    self._add(rank, key[1], partial.pop(key, "") + text)
        for (rank, stream_name), text in partial.items():
            self._add(rank, stream_name, text)

    def _add(self, rank: int, stream: str, text: str) -> None:
        if not 0 <= rank < self.processes:
            self._say(text)
            return
        if stream == "stdout":
            self._stdout[rank].append(text)
        elif text.startswith(JOINED):
            self._joined[rank] = True
            found = _JOINED_AT.search(text)
            if found and found.group(2) == socket.gethostname():
                self._pids[rank] = int(found.group(1))
        self._lines.put(Line(rank, text, stream))

    def _note_ends(self) -> None:
        """When each process of this host ended, seen every EXIT_POLL_S (they are the launcher's children,
        not this process's)."""
        while not self._closed.is_set():
            for rank, pid in list(self._pids.items()):
                if self._ended[rank] is None and not _pid_alive(pid):
                    self._ended[rank] = self.elapsed()
            if self._proc is not None and self._proc.poll() is not None and all(
                    self._ended[rank] is not None for rank in self._pids):
                return
            time.sleep(EXIT_POLL_S)

    def lines(self, poll_s: float = 0.2) -> Iterator[Line | None]:
        """Output lines as they come, and None every `poll_s` without one; ends when the launcher has ended
        and its output is read, after stopping it when time ran out."""
        checked = time.monotonic()
        while True:
            try:
                yield self._lines.get(timeout=poll_s)
                if time.monotonic() - checked < poll_s:
                    continue
            except queue.Empty:
                pass
            checked = time.monotonic()
            if self._check():
                break
            yield None
        for pump in self._pumps:
            pump.join(STOP_GRACE_S)
        while not self._lines.empty():
            yield self._lines.get()

    def _check(self) -> bool:
        assert self._proc is not None
        if self._proc.poll() is not None:
            return True
        if not self.timed_out and self.elapsed() > self.timeout_s:
            self.timed_out = True
            self._say(f"time limit of {self.timeout_s:g} s reached; stopping every process")
            self._stop()
        return False

    def _stop(self) -> None:
        """SIGTERM the launcher (it stops its processes); SIGKILL what is left after its own grace and ours,
        and any process of this host it left behind."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(2 * STOP_GRACE_S)
            _signal_group(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(STOP_GRACE_S)
        for rank, pid in self._pids.items():
            if self._ended[rank] is None and _pid_alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def kill(self, index: int) -> None:
        """Kill one process at once (SIGKILL), as a crash or a lost machine would; it must be on this host
        and have joined (its JOINED line names its pid)."""
        pid = self._pids.get(index)
        if pid is None:
            raise RuntimeError(f"process {index} has not joined on this host yet; its pid is unknown")
        self._say(f"killing process {index} (SIGKILL, pid {pid})")
        self._killed, self.dead, self._killed_s = index, index, self.elapsed()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def outcome(self) -> Outcome:
        code = self._proc.poll() if self._proc is not None else None
        codes = tuple(-signal.SIGKILL if i == self._killed else code for i in range(self.processes))
        return Outcome(codes, tuple("\n".join(out) for out in self._stdout), self.dead, self.timed_out,
                       self.elapsed(), tuple(self._joined), (0.0,) * self.processes, self.join_timeout_s,
                       tuple(self._ended), self._killed_s, self.via, code)

    def pids(self) -> list[int]:
        """The launcher's pid, then those of the processes of this host that have joined."""
        return [*([self._proc.pid] if self._proc else []), *self._pids.values()]

    def close(self) -> None:
        """Stop the launcher and every process of this host still there. Safe to call twice."""
        self._stop()
        self._closed.set()
        with _live_lock:
            _live.discard(self)
