"""The same training started three ways (`pmap-lab launch --via local|mpirun|srun`), a process killed under each,
and DEPLOY.md's Slurm and MPI sections run word for word.

Under mpirun and srun each process joins with `jax.distributed.initialize()` given nothing (`train --cluster
auto`): JAX's Open MPI and Slurm detectors read the coordinator, P and the process's id from the environment the
launcher set. Open MPI is Debian's `openmpi-bin`; Slurm a one-node cluster on 127.0.0.1 that this module starts
once and stops at its end (`harness.slurm`). Where one is missing its tests are skipped with the reason, and
fail instead under CI (`.ci/run` installs both), as the browser tests do with Chromium.
"""

import contextlib
import functools
import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import mlflow
import numpy as np
import psutil
import pytest
import yaml

from harness.browser import in_ci
from harness.processes import ROOT, free_port, last_json_line, new_tracking_store, start_python
from harness.slurm import slurm_cluster, slurm_missing_reason
from pmap_core.cli import entry, lost_group
from pmap_core.cli import training as cli_training
from pmap_core.train import launch, loop

PROCESSES, PER_PROCESS = 2, 2
SETTINGS = {"model": "linear", "global_batch": 64, "steps": 30, "chunk": 10, "learning_rate": 0.2, "seed": 11}
RTOL = 1e-6
HEARTBEAT_S = 20       # the killed runs' --heartbeat-timeout
KILL_AT_STEP = 30      # process 1 is killed once it has said this step
EXIT_BOUND_S = HEARTBEAT_S + 5  # the acceptance bound on the others' exit after the kill
HAND_HEARTBEAT_S = 10  # a group started by hand: when no collective fails, the heartbeat timeout is the bound
DEPLOY = ROOT / "docs" / "DEPLOY.md"
CHECKOUT = "~/pmap-lab"  # where DEPLOY.md's commands expect the checkout; the doc says to put yours there
MPI_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
MPI_OVERSUBSCRIBE_ENV = {"OMPI_MCA_rmaps_base_oversubscribe": "1"}


def missing(reason: str | None) -> None:
    """Skip with `reason`, or fail under CI, where a missing launcher is a broken image."""
    if reason:
        (pytest.fail if in_ci() else pytest.skip)(reason)


@pytest.fixture(scope="module")
def slurm():
    """A one-node Slurm cluster for every test of this module that needs one; stopped and removed at its end."""
    missing(slurm_missing_reason())
    with slurm_cluster() as cluster:
        yield cluster


@pytest.fixture
def via(request, monkeypatch):
    """The launcher under test, ready: mpirun on PATH; for srun, this module's cluster in SLURM_CONF."""
    name = request.param
    missing(launch.launcher_missing_reason(name))
    if name == launch.SRUN:
        cluster = request.getfixturevalue("slurm")
        for key in [k for k in os.environ if k.startswith("SLURM_")]:
            monkeypatch.delenv(key)
        monkeypatch.setenv("SLURM_CONF", cluster.env["SLURM_CONF"])
    return name


def train_command(steps: int = SETTINGS["steps"], *extra: str) -> list[str]:
    return ["train", "--json", *[f"--{k.replace('_', '-')}={v}" for k, v in {**SETTINGS, "steps": steps}.items()],
            *extra]


@functools.cache
def one_process(steps: int = SETTINGS["steps"], **settings: object) -> loop.TrainResult:
    """`train --devices P×N …` in this process (its 8 simulated devices): the reference every group must equal."""
    given = settings or {k: v for k, v in SETTINGS.items() if k != "steps"}
    args = cli_training.parse(["train", "--devices", str(PROCESSES * PER_PROCESS), "--steps", str(steps),
                               *[f"--{k.replace('_', '-')}={v}" for k, v in given.items()]])
    config, info = cli_training.join_and_configure(args)
    assert info.num_processes == 1
    return loop.train(config, measure_scaling=False)


def loss_history(uri: str, run_id: str) -> list[float]:
    history = mlflow.MlflowClient(uri).get_metric_history(run_id, "loss")
    return [m.value for m in sorted(history, key=lambda m: m.step)]


def only_run(uri: str):
    client = mlflow.MlflowClient(uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert len(runs) == 1, [r.info.run_id for r in runs]
    return runs[0]


def relative_gap(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)))


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
    return out


def wait_until_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


def pmap_core_processes(uri: str) -> list[int]:
    """The `pmap_core` processes on this machine that track into `uri`, a test's own store: those a test started,
    directly or through mpirun, srun or Slurm's step daemon, which all pass the store on in the environment."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.pid != os.getpid() and "pmap_core" in " ".join(process.cmdline()) \
                    and process.environ().get("MLFLOW_TRACKING_URI") == uri \
                    and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
    return found


@pytest.mark.parametrize("via", launch.VIAS, indirect=True)
def test_each_launcher_trains_as_one_process_of_the_same_devices(via, tmp_path, capfd, monkeypatch):
    """`pmap-lab launch --via X --processes 2 --devices-per-process 2 train …` ends where `train --devices 4`
    ends (losses and parameters within 1e-6 relative) and records one FINISHED MLflow run (process 0's)."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    status = entry.main(["launch", "--via", via, "--processes", str(PROCESSES), "--devices-per-process",
                         str(PER_PROCESS), *train_command(), "--tracking-uri", uri])
    seconds = time.monotonic() - started
    out, err = capfd.readouterr()
    assert status == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert (result["process_id"], result["num_processes"], result["devices"]) == (0, PROCESSES, 4)
    for i in range(PROCESSES):
        assert f"[process {i}] joined the group: process {i} of {PROCESSES}, {PER_PROCESS} of 4 devices" in err
    # Every line of a process that numbers it numbers it as the launcher does (from 0, as --process-id).
    numbered = re.findall(rf"^\[process (\d+)\] .*\bprocess (\d+) of {PROCESSES}\b", err, re.M)
    assert {prefix for prefix, _ in numbered} == {"0", "1"} and all(a == b for a, b in numbered), numbered
    single = one_process()
    run = only_run(uri)
    assert run.info.run_id == result["run_id"] and run.info.status == "FINISHED"
    assert run.data.params["processes"] == str(PROCESSES) and run.data.params["devices"] == "4"
    losses = loss_history(uri, run.info.run_id)
    assert len(losses) == SETTINGS["steps"]
    gaps = {"losses": relative_gap(losses, single.losses), "final_loss": relative_gap(result["final_loss"],
                                                                                      single.losses[-1]),
            **{name: relative_gap(result["params"][name], value) for name, value in single.params.items()}}
    assert max(gaps.values()) <= RTOL, gaps
    assert wait_until_gone(pmap_core_processes(uri)) == []
    print(f"{via}: {seconds:.1f} s; relative gaps to one process of 4 devices: "
          + ", ".join(f"{name} {gap:.2e}" for name, gap in gaps.items()))


@pytest.mark.parametrize("via", launch.VIAS, indirect=True)
def test_a_killed_process_stops_the_others_and_leaves_nothing(via, tmp_path):
    """Process 1 killed (SIGKILL) mid-run: process 0 ends well within the heartbeat timeout (the launcher, or a
    failed collective, stops it), its MLflow run reads back KILLED or FAILED with the losses logged so far (those
    of one process of 4 devices), and no process is left, on any launcher."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    command = train_command(5000, "--heartbeat-timeout", str(HEARTBEAT_S))
    group = (launch.ProcessGroup(command, PROCESSES, PER_PROCESS, timeout_s=240, cwd=str(tmp_path), tracking_uri=uri)
             if via == launch.LOCAL else
             launch.ClusterGroup(via, command, PROCESSES, PER_PROCESS, timeout_s=240, cwd=str(tmp_path),
                                 tracking_uri=uri))
    with group:
        texts, texts_of_0, killed = [], [], False
        for line in group.lines():
            if line is None:
                continue
            texts.append(line.text)
            if line.process == 0:
                texts_of_0.append(line.text)
            if not killed and line.process == 1 and line.text.startswith(f"step {KILL_AT_STEP}/"):
                group.kill(1)
                killed = True
        outcome, pids = group.outcome(), group.pids()
    assert killed, texts[-20:]
    assert outcome.dead == 1 and outcome.returncodes[1] == -9 and outcome.returncodes[0] not in (None, 0), texts[-20:]
    if via == launch.LOCAL:
        # "stopping process 0", or "stopping nothing else" when process 0's collective failed first (under load).
        assert any(re.match(r"process 1 died \(killed by SIGKILL\); stopping (process 0|nothing else)$", t)
                   for t in texts), texts[-20:]
    exit_s = outcome.ended_after_kill_s().get(0)
    assert exit_s is not None and exit_s < EXIT_BOUND_S, (exit_s, texts[-20:])
    said = [t for t in texts if t.startswith(("terminated (SIGTERM)", "error: process 0 lost contact"))]
    assert said, texts[-20:]
    run = only_run(uri)
    assert run.info.status in ("KILLED", "FAILED")
    losses = loss_history(uri, run.info.run_id)
    # Up to the last step process 0 said, not a bound counted from the kill: a launcher relays a process's lines
    # late under load (srun: process 1's "step 30" arrived when process 0 had logged 60 losses).
    last_said = max(int(m.group(1)) for t in texts_of_0 if (m := re.match(r"step (\d+)/", t)))
    assert KILL_AT_STEP - SETTINGS["chunk"] <= len(losses) <= last_said + SETTINGS["chunk"] < 5000, (
        len(losses), last_said)
    np.testing.assert_allclose(losses, one_process(len(losses)).losses, rtol=RTOL)
    assert wait_until_gone(pids) == []
    assert wait_until_gone(pmap_core_processes(uri)) == []
    print(f"{via}: process 0 ended {exit_s:.2f} s after process 1 was killed (heartbeat timeout {HEARTBEAT_S} s, "
          f"JAX's default 100 s): {said[0][:40]}…; run {run.info.status} with {len(losses)} losses")


def test_a_group_started_by_hand_leaves_at_once_when_one_process_dies(tmp_path):
    """No launcher to stop them: the survivor's collective fails (gloo: connection closed or reset by peer), or, when
    it waits on a connection the dead process never used, its watch hears no heartbeat from process 1 for the
    heartbeat timeout; either way the survivor says so, ends its run FAILED with the losses so far and exits 1 at
    once (JAX alone would abort it, its run left RUNNING)."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    address = f"127.0.0.1:{free_port()}"
    command = train_command(5000, "--heartbeat-timeout", str(HAND_HEARTBEAT_S))
    children = [start_python(["-u", "-m", "pmap_core", *command, "--coordinator-address", address,
                              "--num-processes", str(PROCESSES), "--process-id", str(rank)],
                             cwd=tmp_path, devices=PER_PROCESS, env={"MLFLOW_TRACKING_URI": uri},
                             stdout=subprocess.PIPE, start_new_session=True)
                 for rank in range(PROCESSES)]
    errors: list[list[str]] = [[] for _ in children]
    readers = [threading.Thread(target=lambda i=i: errors[i].extend(children[i].stderr), daemon=True)
               for i in range(PROCESSES)]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + 240
        while not any(line.startswith(f"step {KILL_AT_STEP}/") for line in list(errors[1])):
            assert time.monotonic() < deadline and children[1].poll() is None, "".join(errors[1])[-3000:]
            time.sleep(0.05)
        children[1].kill()
        killed = time.monotonic()
        children[0].wait(HAND_HEARTBEAT_S + 5)
        exit_s = time.monotonic() - killed
    finally:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    for reader in readers:
        reader.join(10)
    said = [line for line in errors[0] if line.startswith("error: process 0 lost contact with the group")]
    assert children[0].returncode == 1 and said, "".join(errors[0])[-3000:]
    assert "ended FAILED with the losses logged so far" in said[0]  # after gloo's or the coordinator's word
    answer = last_json_line(children[0].stdout.read())  # given --json: the one object says it too
    assert answer == {"error": said[0].strip().removeprefix("error: "), "code": lost_group.CODE, "status": 1}, answer
    assert exit_s < HAND_HEARTBEAT_S + 5, exit_s
    run = only_run(uri)
    losses = loss_history(uri, run.info.run_id)
    assert run.info.status == "FAILED" and KILL_AT_STEP - SETTINGS["chunk"] <= len(losses) < 5000
    np.testing.assert_allclose(losses, one_process(len(losses)).losses, rtol=RTOL)
    print(f"by hand: process 0 ended {exit_s:.2f} s after process 1 was killed (heartbeat timeout "
          f"{HAND_HEARTBEAT_S} s): {said[0][:110]}…; run FAILED with {len(losses)} losses")


def test_what_cannot_launch_is_refused_before_anything_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no mpirun, no srun
    group = ["--processes", "2", "--devices-per-process", "2", "train", "--steps", "3", "--no-tracking"]
    assert entry.main(["launch", "--via", "mpirun", *group]) == 2
    assert ("error: cannot launch through mpirun: mpirun is not installed here (apt-get install openmpi-bin); or use "
            "--via local") in capsys.readouterr().err
    assert entry.main(["launch", "--via", "srun", "--late", "5", *group]) == 2
    assert "--late delays one process of the local launcher; srun starts them all at once" in capsys.readouterr().err
    assert entry.main(["launch", *group, "--num-processes", "2"]) == 2
    assert "leave --num-processes out of the command" in capsys.readouterr().err
    for name in [k for k in os.environ if k.startswith(("SLURM_", "OMPI_"))]:
        monkeypatch.delenv(name)
    assert entry.main(["train", "--cluster", "auto", "--steps", "3", "--no-tracking"]) == 2
    assert ("error: no cluster launcher set this process's environment (looked for slurm, ompi, mpi4py, k8s): start "
            "it with srun or mpirun") in capsys.readouterr().err


# -- DEPLOY.md, run as written -------------------------------------------------------------------------------------


def deploy_section(title: str) -> str:
    """The text of DEPLOY.md's section `### title`, up to the next heading of its level or above."""
    text = DEPLOY.read_text()
    found = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^#{{2,3}} )", text, re.S | re.M)
    assert found, f"DEPLOY.md has no section ### {title}"
    return found.group(1)


def fenced_blocks(section: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w*)\n(.*?)^```", section, re.S | re.M)


def as_here(block: str) -> str:
    """A block of DEPLOY.md with the one thing it says to change: the checkout's path."""
    return block.replace(CHECKOUT, str(ROOT))


def run_block(block: str, cwd: pathlib.Path, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run(["bash", "-e", "-c", block], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def assert_doc_run(result: dict, uri: str, settings: dict) -> None:
    """The documented run: process 0's result equals one process of 4 devices; one FINISHED run."""
    assert (result["process_id"], result["num_processes"], result["devices"]) == (0, PROCESSES, 4)
    single = one_process(**settings)
    assert relative_gap(result["final_loss"], single.losses[-1]) <= RTOL
    for name, value in single.params.items():
        assert relative_gap(result["params"][name], value) <= RTOL
    run = only_run(uri)
    assert run.info.status == "FINISHED" and run.info.run_id == result["run_id"]
    np.testing.assert_allclose(loss_history(uri, run.info.run_id), single.losses, rtol=RTOL)


def documented_settings(command: str) -> dict:
    """The settings a documented `train` command gives (its flags, as the CLI reads them)."""
    flags = dict(re.findall(r"--(global-batch|steps) (\d+)", command))
    return {"global_batch": int(flags["global-batch"]), "steps": int(flags["steps"])}


def test_deploy_slurm_section_runs_as_written(slurm, tmp_path):
    section = deploy_section("On a Slurm cluster")
    (_, script), (_, submit) = fenced_blocks(section)[:2]
    assert script.startswith("#!/bin/bash\n") and "pmap-lab.sbatch" in section and CHECKOUT in script
    (tmp_path / "pmap-lab.sbatch").write_text(as_here(script))
    uri = new_tracking_store(tmp_path / "mlflow.db")
    env = {**slurm.client_env(), "MLFLOW_TRACKING_URI": uri}
    started = time.monotonic()
    out = run_block(as_here(submit), tmp_path, env)
    print(f"sbatch --wait: {time.monotonic() - started:.1f} s")
    result = json.loads(out.strip().splitlines()[-1])
    settings = documented_settings(script)
    assert_doc_run(result, uri, settings)
    assert slurm.jobs() == []


def test_deploy_mpi_section_runs_as_written(tmp_path):
    missing(launch.launcher_missing_reason(launch.MPIRUN))
    section = deploy_section("With MPI")
    (_, block), *_ = fenced_blocks(section)
    for name in (*MPI_ROOT_ENV, *MPI_OVERSUBSCRIBE_ENV):
        assert name in section  # what the doc tells a root user, or a host of fewer cores, to set
    uri = new_tracking_store(tmp_path / "mlflow.db")
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, **MPI_OVERSUBSCRIBE_ENV,
           **(MPI_ROOT_ENV if os.geteuid() == 0 else {})}
    out = run_block(as_here(block), tmp_path, env)
    result = json.loads(out.strip().splitlines()[-1])
    assert_doc_run(result, uri, documented_settings(block))
    assert wait_until_gone(pmap_core_processes(uri)) == []


def test_deploy_kubernetes_manifest_grants_what_jax_reads():
    """Not run here (no cluster): the manifest parses, its Job is Indexed with one pod per process, in the headless
    Service's subdomain, and its Role grants what JAX's Kubernetes detector asks the API server for."""
    section = deploy_section("On Kubernetes")
    assert "not run here" in section.lower()
    (_, manifest), *_ = [b for b in fenced_blocks(section) if b[0] == "yaml"]
    docs = {d["kind"]: d for d in yaml.safe_load_all(manifest)}
    assert set(docs) >= {"ServiceAccount", "Role", "RoleBinding", "Service", "Job"}
    granted = {(group, resource, verb) for rule in docs["Role"]["rules"] for group in rule["apiGroups"]
               for resource in rule["resources"] for verb in rule["verbs"]}
    # jax._src.clusters.k8s_cluster: list_namespaced_pod, read_namespaced_job, list_namespaced_service
    assert {("", "pods", "list"), ("batch", "jobs", "get"), ("", "services", "list")} <= granted
    job, service = docs["Job"]["spec"], docs["Service"]
    assert job["completionMode"] == "Indexed" and job["completions"] == job["parallelism"]
    pod = job["template"]["spec"]
    assert pod["subdomain"] == service["metadata"]["name"] and service["spec"]["clusterIP"] == "None"
    assert pod["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"]
    assert docs["RoleBinding"]["subjects"][0]["name"] == docs["ServiceAccount"]["metadata"]["name"]
    command = " ".join(pod["containers"][0]["command"])
    assert "-m pmap_core train" in command and "--cluster auto" in command
