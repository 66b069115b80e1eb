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

`ClusterGroup` has the same surface for P processes a cluster's launcher starts (`mpirun -np P`, `srun
--ntasks P`, `launch --via`): each joins with `jax.distributed.initialize()` given nothing (`train --cluster
auto`), the launcher stops the others when one dies, and its tagged output is split back into each process's
lines. Both record when each process was seen to end (`Outcome.ended_s`, `Outcome.ended_after_kill_s`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
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
from pmap_core.validation import LabInputError, check_int

PARENT_ENV = "PMAP_LAB_PARENT_PID"
PARENT_ANY = "parent"  # PARENT_ENV's value for a process that exits with whichever process started it
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"  # where a process reads its tracking URI when no option gives one
JOINED = "joined the group:"  # how the line begins that a process writes on stderr once the group has formed
TERMINATED = "terminated (SIGTERM):"  # how the line begins that a process writes as a SIGTERM ends its command
# The lines of the lab's own (progress, results, errors) among a process's output; the rest is what native
# libraries print (XLA's logs and crash reports with stack addresses, gloo's connection notes) or a traceback.
_LAB_LINE = re.compile(r"^(?:process \d+ |step \d+/\d+ |training |tracking: |error: |interrupted: "
                       r"|terminated \(SIGTERM\):)")  # the last: TERMINATED
LOCAL, MPIRUN, SRUN = "local", "mpirun", "srun"
VIAS = (LOCAL, MPIRUN, SRUN)  # what starts the processes of `launch --via`
MAX_PROCESSES = 4
MAX_DEVICES_PER_PROCESS = 8
STOP_GRACE_S = 5.0       # after SIGTERM, how long a process may take to end before SIGKILL
ERROR_GRACE_S = 5.0      # after one process exits with an error status, how long the others may take to end alone
PARENT_POLL_S = 1.0
PARENT_GONE_STATUS = 3  # the exit status of a process whose launcher disappeared

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
_live: set[ProcessGroup | ClusterGroup] = set()  # groups to kill if this interpreter exits first
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
    ended_s: tuple[float | None, ...] = ()  # when each process was seen to end, in seconds from the start
    killed_s: float | None = None      # when `kill` sent its SIGKILL
    via: str = LOCAL                   # what started the processes: this launcher, or mpirun, srun
    launcher_returncode: int | None = None  # mpirun's or srun's own exit status

    def ended_after_kill_s(self) -> dict[int, float]:
        """For each process that was not killed, how long after the SIGKILL it was seen to end."""
        if self.killed_s is None:
            return {}
        return {i: end - self.killed_s for i, end in enumerate(self.ended_s) if end is not None and i != self.dead}

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
    if outcome.via != LOCAL:
        return f"{outcome.via} ended with {describe_exit(outcome.launcher_returncode)}"
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
    """In a launched process: exit as soon as the launcher is gone (its pid in PARENT_ENV, or PARENT_ANY: whatever
    process started this one, such as mpirun or Slurm's step daemon), so a launcher killed without cleanup leaves
    nothing behind."""
    parent = os.environ.get(PARENT_ENV, "")
    if parent == PARENT_ANY:
        parent = str(os.getppid())
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
