"""Start, watch and always clean up a group of local `jax.distributed` processes.

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
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

from pmap_core.runtime import DEVICE_COUNT_ENV
from pmap_core.validation import LabInputError, check_int

PARENT_ENV = "PMAP_LAB_PARENT_PID"
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"  # where a process reads its tracking URI when no option gives one
JOINED = "joined the group:"  # how the line begins that a process writes on stderr once the group has formed
# The lines of the lab's own (progress, results, errors) among a process's output; the rest is what native
# libraries print (XLA's logs and crash reports with stack addresses, gloo's connection notes) or a traceback.
_LAB_LINE = re.compile(r"^(?:process \d+ |step \d+/\d+ |training |tracking: |error: |interrupted: )")
MAX_PROCESSES = 4
MAX_DEVICES_PER_PROCESS = 8
STOP_GRACE_S = 5.0       # after SIGTERM, how long a process may take to end before SIGKILL
ERROR_GRACE_S = 5.0      # after one process exits with an error status, how long the others may take to end alone
PARENT_POLL_S = 1.0
PARENT_GONE_STATUS = 3  # the exit status of a process whose launcher disappeared

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
_live: set[ProcessGroup] = set()  # groups to kill if this interpreter exits first
_live_lock = threading.Lock()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_argv(command: Sequence[str], address: str, processes: int, process_id: int) -> list[str]:
    return [sys.executable, "-u", "-m", "pmap_core", *command, "--coordinator-address", address,
            "--num-processes", str(processes), "--process-id", str(process_id)]


def check_group(processes: int, devices_per_process: int, global_batch: int, devices: int | None = None,
                dataset_size: int = 0) -> None:
    """Refuse before starting anything a run whose global batch the group's devices cannot share."""
    check_int("processes", processes, 1, MAX_PROCESSES)
    check_int("devices per process", devices_per_process, 1, MAX_DEVICES_PER_PROCESS)
    total = processes * devices_per_process
    if devices is not None and devices != total:
        raise LabInputError("devices_not_group", "the group has {total} devices ({processes} processes × "
                            "{per} devices); --devices {value} would leave some of them idle",
                            total=total, processes=processes, per=devices_per_process, value=devices)
    if global_batch % total:
        raise LabInputError("group_batch_mismatch", "the global batch {value} does not split over {total} devices "
                            "({processes} processes × {per}): the processes would load blocks of different sizes",
                            value=global_batch, total=total, processes=processes, per=devices_per_process)
    if dataset_size:
        from pmap_core.train.loading import check_sizes

        check_sizes(dataset_size, global_batch, total)


@dataclasses.dataclass(frozen=True)
class Line:
    process: int   # process index, or -1 for the launcher's own messages
    text: str
    stream: str    # "stdout" | "stderr" | "launcher"

    @property
    def from_lab(self) -> bool:
        """The launcher's line, or a process's own progress or error line; not a native library's log."""
        return self.process < 0 or self.text.startswith(JOINED) or bool(_LAB_LINE.match(self.text))


@dataclasses.dataclass(frozen=True)
class Outcome:
    returncodes: tuple[int | None, ...]
    stdout: tuple[str, ...]            # each process's whole stdout
    dead: int | None                   # the first process that failed, when one did
    timed_out: bool
    elapsed_s: float
    joined: tuple[bool, ...] = ()      # whether each process had joined the group (it wrote JOINED)
    delays_s: tuple[float, ...] = ()   # how late each process was to start
    join_timeout_s: float | None = None

    @property
    def ok(self) -> bool:
        return not self.timed_out and all(code == 0 for code in self.returncodes)

    @property
    def join_timed_out(self) -> bool:
        """The group never formed: a process was aborted (SIGABRT, JAX's DEADLINE_EXCEEDED) before every
        process had joined."""
        return (self.dead is not None and not all(self.joined)
                and self.returncodes[self.dead] == -signal.SIGABRT)

    @property
    def late(self) -> tuple[int, ...]:
        """The processes that were to start after the others."""
        return tuple(i for i, delay in enumerate(self.delays_s) if delay > 0)


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def describe_join_timeout(outcome: Outcome) -> str:
    """Why a group never formed, said from the outside: the join timeout and the processes that were late."""
    timeout = outcome.join_timeout_s
    within = f"within the join timeout of {timeout:g} s" if timeout else "within the join timeout"
    missing = "; ".join(f"process {i} was to start {outcome.delays_s[i]:g} s after the others"
                        for i in outcome.late) or "the processes had not all joined by then"
    return (f"the group did not form {within}: {missing}; JAX aborts every process still waiting at that "
            "deadline (DEADLINE_EXCEEDED, seen as SIGABRT)")


def describe_failure(outcome: Outcome) -> str:
    """What stopped a group that did not finish, in one line."""
    if outcome.timed_out:
        return "time limit reached"
    if outcome.join_timed_out:
        return describe_join_timeout(outcome)
    if outcome.dead is not None:
        return f"process {outcome.dead} failed ({describe_exit(outcome.returncodes[outcome.dead])})"
    return "a process failed"


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
        self._lines: queue.Queue[Line] = queue.Queue()
        self._started = 0.0
        self.dead: int | None = None
        self._killed: int | None = None
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
            _signal_group(proc, signal.SIGKILL)

    def outcome(self) -> Outcome:
        codes = tuple(p.poll() if p is not None else None for p in self._procs)
        return Outcome(codes, tuple("\n".join(out) for out in self._stdout), self.dead, self.timed_out,
                       self.elapsed(), tuple(self._joined), tuple(self.delays), self.join_timeout_s)

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


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    if proc.returncode is not None and sig == signal.SIGTERM:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # the child leads its own group (start_new_session)


@atexit.register
def _close_live_groups() -> None:
    with _live_lock:
        groups = list(_live)
    for group in groups:
        group.close()


def exit_with_parent() -> None:
    """In a launched process: exit as soon as the launcher is gone (its pid in PARENT_ENV), so a
    launcher killed without cleanup leaves nothing behind."""
    parent = os.environ.get(PARENT_ENV, "")
    if not parent.isdigit():
        return

    def watch() -> None:
        while os.getppid() == int(parent):
            time.sleep(PARENT_POLL_S)
        # No message first: the launcher held the read end of this process's stdout and stderr, so a
        # write now raises BrokenPipeError (or blocks on a full pipe) and this thread would die or hang
        # before the exit; nobody is left to read it anyway.
        os._exit(PARENT_GONE_STATUS)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
