"""Start, watch and always clean up a group of local `jax.distributed` processes (`ProcessGroup`).

`ProcessGroup` starts P copies of `python -m pmap_core <command> …` on 127.0.0.1 (process 0 serves
the coordinator on a free port), each with its own simulated CPU devices, and streams their output
lines as they come. Every path ends with no process left: each child runs in a process group of its
own, which `close` kills (also from `atexit` when the parent exits); a deadline bounds the whole
run; when one process dies the others are stopped with a message naming it; and a child whose parent
disappears exits by itself (`exit_with_parent`, started by the child).

A process that is still waiting for the group to form when its join timeout runs out is *aborted* by
JAX (DEADLINE_EXCEEDED, SIGABRT, a native crash report), not given an exception: the group knows
which processes wrote `JOINED` and which started late, and says it from the outside, by name and
timeout (`Outcome.join_timed_out`, `describe_failure`).

`ClusterGroup` (`train.cluster`) has the same surface for P processes a cluster's launcher starts (`mpirun -np P`,
`srun --ntasks P`, `launch --via`). What both share (the lines, the outcome, the limits, the groups killed at exit,
`exit_with_parent`) is `train.group`'s. Both record when each process was seen to end (`Outcome.ended_s`,
`Outcome.ended_after_kill_s`). The names of both modules are importable from here too.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

from pmap_core.runtime import DEVICE_COUNT_ENV
from pmap_core.train.cluster import (  # noqa: F401 (re-exported: the CLI, the pages and the tests read them from here)
    CLUSTER_OPTION,
    COORDINATOR_PORT_ENV,
    SRUN_PIECE,
    ClusterGroup,
    cluster_argv,
    dies_with_this_process,
    launcher_missing_reason,
    split_tagged,
)
from pmap_core.train.group import (  # noqa: F401 (re-exported: the CLI, the pages and the tests read them from here)
    _ROOT,
    ERROR_GRACE_S,
    JOINED,
    LOCAL,
    MAX_DEVICES_PER_PROCESS,
    MAX_PROCESSES,
    MPIRUN,
    PARENT_ANY,
    PARENT_ENV,
    SRUN,
    STOP_GRACE_S,
    TERMINATED,
    TRACKING_URI_ENV,
    VIAS,
    Line,
    Outcome,
    _live,
    _live_lock,
    _signal_group,
    check_group,
    describe_exit,
    describe_failure,
    describe_join_timeout,
    exit_with_parent,
    free_port,
)


def worker_argv(command: Sequence[str], address: str, processes: int, process_id: int) -> list[str]:
    return [sys.executable, "-u", "-m", "pmap_core", *command, "--coordinator-address", address,
            "--num-processes", str(processes), "--process-id", str(process_id)]


class ProcessGroup:
    """P processes of one `jax.distributed` run. Use as a context manager: leaving it kills them all.

    `tracking_uri` reaches every process through its environment, never its command line: `ps` shows
    command lines to every user of the machine, and a URI may hold a password or a token."""

    def __init__(self, command: Sequence[str], processes: int, devices_per_process: int, timeout_s: float,
                 delays_s: Sequence[float] = (), cwd: str | None = None, env: dict[str, str] | None = None,
                 tracking_uri: str | None = None, join_timeout_s: float | None = None):
        self.address = f"127.0.0.1:{free_port()}"
        self.processes, self.timeout_s, self.join_timeout_s = processes, timeout_s, join_timeout_s
        self.delays = [*delays_s, *[0.0] * processes][:processes]
        base = {**(env or os.environ), DEVICE_COUNT_ENV: str(devices_per_process), PARENT_ENV: str(os.getpid()),
                "PYTHONPATH": os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p),
                **({TRACKING_URI_ENV: tracking_uri} if tracking_uri else {})}
        self._argv = [worker_argv(command, self.address, processes, i) for i in range(processes)]
        self._env, self._cwd = base, cwd
        self._procs: list[subprocess.Popen | None] = [None] * processes
        self._stdout: list[list[str]] = [[] for _ in range(processes)]
        self._joined = [False] * processes
        self._ended: list[float | None] = [None] * processes
        self._lines: queue.Queue[Line] = queue.Queue()
        self._started = 0.0
        self.dead: int | None = None
        self._killed: int | None = None
        self._killed_s: float | None = None
        self._error_seen: float | None = None  # when a process first exited with an error status
        self.timed_out = False

    def __enter__(self) -> ProcessGroup:
        with _live_lock:
            _live.add(self)
        self._started = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self, index: int) -> None:
        proc = subprocess.Popen(self._argv[index], cwd=self._cwd, env=self._env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                                start_new_session=True)  # its own process group: killpg reaches all it starts
        self._procs[index] = proc
        for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            threading.Thread(target=self._pump, args=(index, stream, name), daemon=True).start()
        threading.Thread(target=self._note_end, args=(index, proc), daemon=True).start()

    def _note_end(self, index: int, proc: subprocess.Popen) -> None:
        proc.wait()
        self._ended[index] = self.elapsed()

    def _pump(self, index: int, stream: object, name: str) -> None:
        for text in stream:  # type: ignore[attr-defined]
            text = text.rstrip("\n")
            if name == "stdout":
                self._stdout[index].append(text)
            elif text.startswith(JOINED):
                self._joined[index] = True
            self._lines.put(Line(index, text, name))

    def _say(self, text: str) -> None:
        self._lines.put(Line(-1, text, "launcher"))

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def lines(self, poll_s: float = 0.2) -> Iterator[Line | None]:
        """Output lines as they come, and None every `poll_s` without one (a chance to react);
        ends when every process has ended, after stopping the others when one failed or time ran out."""
        while True:
            self._start_due()
            try:
                yield self._lines.get(timeout=poll_s)
                continue
            except queue.Empty:
                pass
            if self._check():
                break
            yield None
        while not self._lines.empty():
            yield self._lines.get()

    def _start_due(self) -> None:
        for index, proc in enumerate(self._procs):
            if proc is None and self.elapsed() >= self.delays[index] and self.dead is None and not self.timed_out:
                if self.delays[index]:
                    self._say(f"starting process {index} late, {self.delays[index]:g} s after the others")
                self._start(index)

    def _check(self) -> bool:
        """True once every process has ended (or will never start); stops the others on a fault."""
        codes = [p.poll() if p is not None else None for p in self._procs]
        if self.dead is None and not self.timed_out:
            # The root cause first: the process killed on purpose, then deaths by a signal.
            failed = sorted((i for i, c in enumerate(codes) if c not in (None, 0)),
                            key=lambda i: (i != self._killed, codes[i] > 0))
            if failed and self._others_may_end_alone(codes, failed):
                return False
            if failed:
                self.dead = failed[0]
                others = [i for i, c in enumerate(codes) if c is None and i != self.dead]
                running = [i for i in others if self._procs[i] is not None]
                stopping = "; stopping " + (", ".join(f"process {i}" for i in running) or "nothing else") + "".join(
                    f"; process {i} will not start" for i in others if i not in running)
                outcome = self.outcome()
                if outcome.join_timed_out:
                    self._say(describe_join_timeout(outcome) + stopping)
                else:
                    self._say(f"process {self.dead} died ({describe_exit(codes[self.dead])})" + stopping)
                self._stop(others)
            elif self.elapsed() > self.timeout_s:
                self.timed_out = True
                self._say(f"time limit of {self.timeout_s:g} s reached; stopping every process")
                self._stop(range(self.processes))
        unstarted = any(p is None for p in self._procs)
        if unstarted and (self.dead is not None or self.timed_out):
            unstarted = False
        return not unstarted and all(c is not None or p is None for p, c in zip(self._procs, codes, strict=True))

    def _others_may_end_alone(self, codes: list[int | None], failed: list[int]) -> bool:
        """Whether to give the other processes ERROR_GRACE_S to end by themselves: the failed ones exited
        with a status (an error they reported, such as a loss that stopped being finite, which every
        process reaches together), none died by a signal, and the grace has not run out."""
        running = [i for i, code in enumerate(codes) if code is None and self._procs[i] is not None]
        if not running or self._killed is not None or any(codes[i] < 0 for i in failed):
            return False
        if self._error_seen is None:
            self._error_seen = time.monotonic()
        return time.monotonic() - self._error_seen < ERROR_GRACE_S

    def _stop(self, indices: Sequence[int] | range) -> None:
        """SIGTERM the processes' groups; whatever has not ended after STOP_GRACE_S gets SIGKILL."""
        procs = [self._procs[i] for i in indices if self._procs[i] is not None]
        for proc in procs:
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.0, deadline - time.monotonic()))
            _signal_group(proc, signal.SIGKILL)

    def kill(self, index: int) -> None:
        """Kill one process at once (SIGKILL), as a crash or a lost machine would."""
        proc = self._procs[index]
        if proc is not None and proc.poll() is None:
            self._say(f"killing process {index} (SIGKILL)")
            self._killed = index
            self._killed_s = self.elapsed()
            _signal_group(proc, signal.SIGKILL)

    def outcome(self) -> Outcome:
        codes = tuple(p.poll() if p is not None else None for p in self._procs)
        return Outcome(codes, tuple("\n".join(out) for out in self._stdout), self.dead, self.timed_out,
                       self.elapsed(), tuple(self._joined), tuple(self.delays), self.join_timeout_s,
                       tuple(self._ended), self._killed_s)

    def pids(self) -> list[int]:
        return [p.pid for p in self._procs if p is not None]

    def close(self) -> None:
        """Kill every process of the group that is still there and reap it. Safe to call twice."""
        for proc in self._procs:
            if proc is not None:
                _signal_group(proc, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(STOP_GRACE_S)
        with _live_lock:
            _live.discard(self)
