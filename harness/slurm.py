"""A Slurm cluster of one node on 127.0.0.1, for the tests of `launch --via srun` and of DEPLOY.md's sbatch script.

Debian's `slurm-wlm` (22.05: slurmctld, slurmd, srun, sbatch) and `munge`: a munge daemon with a key of its own,
then Slurm's controller and node daemon, all in a temporary folder with a generated `slurm.conf` (free ports, no
accounting, no cgroups: `proctrack/linuxproc`, `task/none`). The node is named `localhost`, so the coordinator
address JAX's Slurm detector makes from `SLURM_STEP_NODELIST` resolves on any host. Clients reach the cluster
through `SLURM_CONF` (`Cluster.env`), which `slurm.conf`'s `AuthInfo` then points at this munge socket.

`slurm_cluster()` is a context manager: on every path out it cancels the cluster's jobs, stops the daemons, kills
whatever still runs with this cluster's `SLURM_CONF` in its environment (a step daemon, a task), and removes the
folder. Where the programs are missing, `slurm_missing_reason()` says which.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator

from harness.processes import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("srun", "sbatch", "sinfo", "squeue", "scancel")
SBIN = ("/usr/sbin", "/sbin")
NODE = "localhost"
CPUS = 8           # what the node offers (SlurmdParameters=config_overrides: more than this host's cores)
KILL_WAIT_S = 5    # Slurm's KillWait: a cancelled step's SIGTERM, then SIGKILL this much later
READY_S = 90.0


def program(name: str) -> str | None:
    """Where `name` is: on PATH, or in /usr/sbin (a daemon, outside a normal user's PATH)."""
    found = shutil.which(name)
    if found:
        return found
    return next((str(pathlib.Path(folder) / name) for folder in SBIN
                 if os.access(pathlib.Path(folder) / name, os.X_OK)), None)


def slurm_missing_reason() -> str | None:
    """Why a Slurm cluster cannot be started here, or None when it can."""
    missing = [name for name in (*DAEMONS, *CLIENTS) if program(name) is None]
    if missing:
        return f"{', '.join(missing)} not found (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "slurmd must run as root to start tasks"
    return None


SLURM_CONF = """\
ClusterName=pmaplab
SlurmctldHost={node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={folder}/munge.socket
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
TmpFS={folder}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
KillWait={kill_wait}
FirstJobId={first_job}
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=lab Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


class Cluster:
    """The running cluster: its folder, `slurm.conf`, and the environment clients need (`env`)."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.conf = folder / "slurm.conf"
        self.env = {"SLURM_CONF": str(self.conf)}
        self._daemons: dict[str, subprocess.Popen] = {}

    def client_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (this process's environment by default) with this cluster's SLURM_CONF, and none of the
        SLURM_* variables a job that started this process would have left (they would name another job)."""
        env = {k: v for k, v in (base or os.environ).items() if not k.startswith("SLURM_")}
        return {**env, **self.env}

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([program(argv[0]) or argv[0], *argv[1:]], env=self.client_env(), capture_output=True,
                              text=True, timeout=timeout)

    def log_tail(self, chars: int = 2000) -> str:
        parts = []
        for name in ("munged.out", "slurmctld.out", "slurmd.out", "slurmctld.log", "slurmd.log"):
            with contextlib.suppress(OSError):
                parts.append(f"--- {name}\n" + (self.folder / name).read_text(errors="replace")[-chars:])
        return "\n".join(parts)

    def start(self) -> None:
        folder = self.folder
        for name in ("state", "spool"):
            (folder / name).mkdir()
        key = folder / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.conf.write_text(SLURM_CONF.format(
            node=NODE, folder=folder, ctld_port=free_port(), slurmd_port=free_port(), cpus=CPUS,
            kill_wait=KILL_WAIT_S, first_job=random.randint(1, 50_000)))
        self._daemon("munged", "-F", "--force", f"--socket={folder}/munge.socket", f"--key-file={key}",
                     f"--pid-file={folder}/munged.pid", f"--seed-file={folder}/munged.seed",
                     f"--log-file={folder}/munged.log")
        self._wait_for(lambda: (folder / "munge.socket").exists(), "munged's socket")
        self._daemon("slurmctld", "-D", "-i", "-f", str(self.conf))
        self._daemon("slurmd", "-D", "-N", NODE, "-f", str(self.conf))
        self._wait_for(self._node_idle, f"node {NODE} idle in sinfo")

    def _daemon(self, name: str, *args: str) -> None:
        with open(self.folder / f"{name}.out", "wb") as out:
            self._daemons[name] = subprocess.Popen(
                [program(name) or name, *args], env=self.client_env(), stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True, cwd=self.folder)

    def _node_idle(self) -> bool:
        done = self.run("sinfo", "--noheader", "--Node", "--format=%t", timeout=20)
        return done.returncode == 0 and done.stdout.strip() == "idle"

    def _wait_for(self, ready, what: str) -> None:
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            for name, daemon in self._daemons.items():
                if daemon.poll() is not None:
                    raise RuntimeError(f"{name} exited ({daemon.returncode}) before {what}:\n{self.log_tail()}")
            with contextlib.suppress(subprocess.TimeoutExpired):
                if ready():
                    return
            time.sleep(0.3)
        raise TimeoutError(f"no {what} within {READY_S:g} s:\n{self.log_tail()}")

    def jobs(self) -> list[str]:
        """The ids of the jobs the controller still knows (pending, running or completing)."""
        done = self.run("squeue", "--noheader", "--format=%i", timeout=20)
        return done.stdout.split() if done.returncode == 0 else []

    def stop(self) -> None:
        """Cancel every job, stop the daemons, kill what is left of this cluster's processes. Never raises."""
        with contextlib.suppress(Exception):
            if self._daemons.get("slurmctld") and self._daemons["slurmctld"].poll() is None:
                self.run("scancel", "--user=root", timeout=20)
                deadline = time.monotonic() + 2 * KILL_WAIT_S + 5
                while self.jobs() and time.monotonic() < deadline:
                    time.sleep(0.3)
        for name in reversed(DAEMONS):
            daemon = self._daemons.get(name)
            if daemon is None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(daemon.pid, signal.SIGTERM)
            try:
                daemon.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
        for pid in self.leftovers():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def leftovers(self) -> list[int]:
        """Processes still running with this cluster's SLURM_CONF in their environment (step daemons, tasks)."""
        import psutil

        found = []
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if process.pid != os.getpid() and process.environ().get("SLURM_CONF") == str(self.conf) \
                        and process.status() != psutil.STATUS_ZOMBIE:
                    found.append(process.pid)
        return found


@contextlib.contextmanager
def slurm_cluster() -> Iterator[Cluster]:
    """A one-node Slurm cluster on 127.0.0.1 for the block's duration; stopped and removed on every path."""
    # In /tmp: the socket's path must stay short (108 bytes), and the daemons, which run as root, reach it.
    cluster = Cluster(pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-slurm-", dir="/tmp")))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)
