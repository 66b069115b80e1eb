"""What every group of `jax.distributed` processes shares, whoever starts them (`train.launch`'s local
`ProcessGroup`, `train.cluster`'s `ClusterGroup`): the names and limits of a group, its processes' lines
(`Line`: the lab's own, or a native library's) and how it ended (`Outcome`, said in one line by `describe_failure`;
a process still waiting for the group when its join timeout runs out is aborted by JAX, and said from the
outside by name and timeout), the refusal of a group whose devices cannot share the global batch
(`check_group`), the groups still running, killed when this interpreter exits, and a launched process's watch
on its launcher (`exit_with_parent`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import re
import signal
import socket
import subprocess
import threading
import time

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
_live: set = set()  # the groups (ProcessGroup, ClusterGroup) to kill if this interpreter exits first
_live_lock = threading.Lock()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
