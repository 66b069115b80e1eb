"""Local process groups (`launch`) with per-host data loading: the same result as one process,
every sample read once per epoch, faults that end every process, one MLflow run."""

import contextlib
import functools
import json
import re
import threading
import time
from collections.abc import Iterator

import mlflow
import numpy as np
import psutil
import pytest
from conftest import SESSION_TRACKING_URI, assert_clean, open_lab

from harness.processes import new_tracking_store
from labs.ui import heavy_jobs
from pmap_core.cli import lost_group
from pmap_core.cli.commands import main as cli_main
from pmap_core.cli.launch import without_tracking_uri
from pmap_core.cli.training import parse
from pmap_core.tracking import experiments
from pmap_core.train import launch
from pmap_core.train import loading as data_loading
from pmap_core.train.config import TrainConfig
from tests.apptest_support import heavy_slots

SETTINGS = dict(model="linear", global_batch=16, steps=4, learning_rate=0.3, seed=5)
DATASET = 32  # two steps per epoch: the second epoch is shuffled anew


def train_args(impl: str, steps: int = SETTINGS["steps"]) -> list[str]:
    return ["train", "--json", "--impl", impl, "--dataset-size", str(DATASET), "--heartbeat-timeout", "20",
            *[f"--{k.replace('_', '-')}={v}" for k, v in {**SETTINGS, "steps": steps}.items()]]


def run_group(command: list[str], processes: int, per_process: int, cwd: str) -> list[dict]:
    with launch.ProcessGroup(command, processes, per_process, timeout_s=240, cwd=cwd) as group:
        lines = [line for line in group.lines() if line is not None]
        outcome = group.outcome()
    assert outcome.ok, "\n".join(line.text for line in lines)[-3000:]
    return [json.loads(out) for out in outcome.stdout]


def numpy_reference(steps: int) -> tuple[float, float]:
    """Plain SGD on the same batches, written in NumPy: w, b after `steps` steps."""
    spec = data_loading.DataSpec("linear", 1, DATASET, SETTINGS["seed"])
    w, b = 0.0, 0.0
    for step in range(steps):
        batch = data_loading.read_samples(spec, data_loading.step_rows(spec, SETTINGS["global_batch"], step, 1))
        x, y = batch.x[:, 0].astype(np.float64), batch.y.astype(np.float64)
        residual = w * x + b - y
        w, b = w - SETTINGS["learning_rate"] * np.mean(2 * residual * x), b - SETTINGS["learning_rate"] * np.mean(
            2 * residual)
    return w, b


@functools.cache
def single_process(impl: str) -> data_loading.HostResult:
    """One process with 8 devices, checked against plain SGD written in NumPy."""
    single = data_loading.train_per_host(TrainConfig(**SETTINGS, devices=8, impl=impl), DATASET)
    np.testing.assert_allclose([single.params["w"], single.params["b"]], numpy_reference(SETTINGS["steps"]),
                               rtol=1e-5)
    return single


def assert_same_as_one_process(results: list[dict], impl: str, processes: int, per_process: int) -> None:
    single = single_process(impl)
    for rank, result in enumerate(results):
        assert (result["process_index"], result["num_processes"], result["devices"]) == (rank, processes, 8)
        assert len(result["local_devices"]) == per_process
        assert result["device_positions"] == list(range(rank * per_process, (rank + 1) * per_process))
        assert result["replicas_identical"]
        for name, value in single.params.items():
            np.testing.assert_allclose(result["params"][name], value, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(result["losses"], single.losses, rtol=1e-5)


# pmap with 2 × 4 runs through the `launch` command, in the MLflow test below.
@pytest.mark.parametrize(("impl", "processes", "per_process"), [("pmap", 4, 2), ("jit", 2, 4)])
def test_groups_of_processes_equal_one_process_of_eight_devices(impl, processes, per_process, tmp_path):
    results = run_group(train_args(impl), processes, per_process, str(tmp_path))
    assert_same_as_one_process(results, impl, processes, per_process)
    # Over one epoch (DATASET / global batch steps) the processes read every sample once.
    per_epoch = DATASET // SETTINGS["global_batch"]
    for epoch in range(SETTINGS["steps"] // per_epoch):
        read = [i for r in results for step in r["rows"][epoch * per_epoch:(epoch + 1) * per_epoch]
                for block in step for i in block]
        assert sorted(read) == list(range(DATASET))
    assert results[0]["rows"][0] != results[0]["rows"][per_epoch]  # a new order each epoch


def test_every_sample_is_read_once_per_epoch_for_any_split():
    spec = data_loading.DataSpec("mlp", 3, 96, seed=2)
    for batch, devices in ((96, 4), (24, 8), (12, 3)):
        for epoch in range(2):
            steps = range(epoch * spec.size // batch, (epoch + 1) * spec.size // batch)
            blocks = [data_loading.step_rows(spec, batch, s, devices) for s in steps]
            assert sorted(np.concatenate(blocks, axis=None)) == list(range(spec.size))
    a = data_loading.read_samples(spec, np.array([7, 3]))
    b = data_loading.read_samples(spec, np.array([3]))
    np.testing.assert_array_equal(a.x[1], b.x[0])  # a sample is the same whoever reads it, with whatever else


# A process killed mid-run, under this launcher, mpirun and srun: tests/system/test_launchers.py.


def test_a_group_whose_loss_diverges_stops_together_with_the_message(tmp_path):
    """η = 10 on the linear model overflows within 40 steps: every process ends with the one-process
    run's message, at the same step, and none waits for another in a collective."""
    command = [*train_args("jit", steps=40), "--learning-rate=10"]  # the last flag wins
    uri = new_tracking_store(tmp_path / "mlflow.db")
    with launch.ProcessGroup(command, 2, 2, timeout_s=240, cwd=str(tmp_path), tracking_uri=uri) as group:
        texts = [line.text for line in group.lines() if line is not None]
        outcome = group.outcome()
    # Each ends alone with the error (the launcher waits launch.ERROR_GRACE_S before it stops the others).
    assert not outcome.timed_out and outcome.returncodes == (2, 2), texts[-20:]
    assert not any("stopping process" in text for text in texts), texts[-20:]
    said = [re.search(r"training diverged at step (\d+) of 40", text) for text in texts]
    steps = {int(found.group(1)) for found in said if found}
    assert len(steps) == 1 and min(steps) > 1, texts[-20:]
    assert all("reduce learning_rate (10 now)" in text for text in texts if "training diverged" in text)
    # Process 0's run: FAILED, with the step and the finite losses before it.
    client = mlflow.MlflowClient(uri)
    (run,) = client.search_runs(client.search_experiments()[0].experiment_id)
    (step,) = steps
    assert run.info.status == "FAILED" and run.data.metrics["diverged_at_step"] == step
    assert len(client.get_metric_history(run.info.run_id, "loss")) == step - 1


def test_a_batch_the_group_cannot_share_is_refused_before_start(capsys):
    status = cli_main(["launch", "--processes", "2", "--devices-per-process", "4", "train", "--global-batch", "12"])
    assert status == 2
    assert "the global batch 12 does not split over 8 devices (2 processes × 4)" in capsys.readouterr().err
    assert pmap_core_children() == []


def test_launch_command_records_one_run_with_every_process_timings(tmp_path, capfd, monkeypatch):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    with started_children() as children:
        status = cli_main(["launch", "--processes", "2", "--devices-per-process", "4", *train_args("pmap"),
                           "--tracking-uri", uri])
    out, err = capfd.readouterr()
    assert status == 0, err[-3000:]
    assert_uri_in_environment_only(children, uri)
    result = json.loads(out.strip().splitlines()[-1])
    assert_same_as_one_process([result], "pmap", 2, 4)  # process 0's result
    assert "[process 1] step 4/4" in err
    runs = mlflow.MlflowClient(uri).search_runs(mlflow.MlflowClient(uri).search_experiments()[0].experiment_id)
    assert [r.info.run_id for r in runs] == [result["run_id"]]
    run = runs[0]
    assert run.data.params["num_processes"] == "2" and run.data.tags["lab"] == "multiprocess"
    for i in (0, 1):
        key = f"step_time_s.process_{i}"
        assert run.data.metrics[key] == pytest.approx(result["timings"][key])
    shown = experiments.load_runs(uri)  # what the experiments page lists, beside single-process runs
    assert list(shown["num_processes"]) == [2] and list(shown["devices"]) == [8]
    history = mlflow.MlflowClient(uri).get_metric_history(run.info.run_id, "loss")
    np.testing.assert_allclose([m.value for m in sorted(history, key=lambda m: m.step)], result["losses"], rtol=1e-6)


def pmap_core_children(recursive: bool = True) -> list[psutil.Process]:
    children = []
    for child in psutil.Process().children(recursive=recursive):
        with contextlib.suppress(psutil.Error):
            if "pmap_core" in " ".join(child.cmdline()):
                children.append(child)
    return children


@contextlib.contextmanager
def started_children() -> Iterator[dict[int, tuple[list[str], dict[str, str]]]]:
    """The pmap_core processes this process starts inside the block: pid -> (command line, environment).
    Only its own children: theirs (a `git` that MLflow runs) carry their command line until they exec."""
    seen: dict[int, tuple[list[str], dict[str, str]]] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for child in pmap_core_children(recursive=False):
                with contextlib.suppress(psutil.Error):
                    seen.setdefault(child.pid, (child.cmdline(), child.environ()))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        stop.set()
        watcher.join()


def assert_uri_in_environment_only(children: dict, uri: str) -> None:
    """A tracking URI may hold credentials, and `ps` shows every command line to every user."""
    assert len(children) == 2
    for argv, env in children.values():
        assert uri not in " ".join(argv) and "--tracking-uri" not in argv, argv
        assert env.get("MLFLOW_TRACKING_URI") == uri


two_slots = heavy_slots(2)  # a server with two heavy-job slots, whatever this machine's CPUs


def slots_in_use_at_each_start(monkeypatch) -> list[int]:
    """The heavy-job slots in use as each process of a group starts (filled in as they start)."""
    seen, start = [], launch.ProcessGroup._start

    def counted(group, index):
        seen.append(heavy_jobs._heavy_slots().position(object())[1])
        start(group, index)

    monkeypatch.setattr(launch.ProcessGroup, "_start", counted)
    return seen


def test_page_runs_two_processes_and_leaves_none_behind(two_slots, monkeypatch):
    at = open_lab("multiprocess", processes=2, per_process=2, batch=8, size=16, steps=3)
    assert_clean(at)
    slots_in_use = slots_in_use_at_each_start(monkeypatch)
    with started_children() as children:
        at.button(key="multiprocess.run").click().run()
    assert_clean(at)
    assert pmap_core_children() == []
    assert_uri_in_environment_only(children, SESSION_TRACKING_URI)
    assert slots_in_use == [2, 2]  # one heavy-job slot for each interpreter started
    table = at.dataframe[0].value
    assert list(table["process_index"]) == [0, 1]
    texts = " ".join(m.value for m in at.markdown)
    # What the page says of mesh positions comes from the run: process 1's ids are not 2 and 3.
    ids = [row.split(", ") for row in table["local devices"]]
    assert ids[1] != ["cpu:2", "cpu:3"]
    assert (f"process 0 held {', '.join(ids[0])} at mesh position(s) 0, 1; "
            f"process 1 held {', '.join(ids[1])} at mesh position(s) 2, 3") in texts
    assert "largest difference between two processes is 0." in texts
    relative = float(re.search(r"within (\S+) \(relative\)", texts).group(1))
    assert relative < 1e-5
    run_ids = [c.value.split("\n")[0] for c in at.code if re.fullmatch(r"[0-9a-f]{32}", c.value.split("\n")[0])]
    run = mlflow.MlflowClient().get_run(run_ids[0])  # conftest's store: MLFLOW_TRACKING_URI
    assert run.data.params["num_processes"] == "2" and run.data.params["devices"] == "4"


def test_chinese_page_refuses_a_batch_the_processes_cannot_share():
    at = open_lab("multiprocess", lang="zh", processes=2, per_process=2, batch=6)
    assert not at.exception
    assert "全局批次 6 无法平均分到 4 台设备" in at.error[0].value
    assert at.button(key="multiprocess.run").disabled


@pytest.mark.parametrize("given", [["--tracking-uri", "http://u:p@h"], ["--tracking-uri=http://u:p@h"],
                                   ["--tracking", "http://u:p@h"], ["--tracking-uri", "x", "--tracking-uri=http://u:p@h"]])
def test_launch_takes_every_form_of_the_tracking_option_out_of_the_command(given):
    command = ["train", "--steps", "3", *given, "--json"]
    assert parse(command).tracking_uri == "http://u:p@h"
    assert without_tracking_uri(command) == ["train", "--steps", "3", "--json"]


def test_a_run_needs_a_heavy_job_slot_for_each_process(two_slots):
    at = open_lab("multiprocess", processes=3, per_process=2, batch=12, size=24)
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This run starts 3 processes, and each takes one of the server's heavy-job slots; this server has 2 "
        "(PMAP_LAB_HEAVY_JOBS). Choose at most 2 processes."]
    assert at.button(key="multiprocess.run").disabled


def test_the_default_group_fits_a_server_of_one_slot(one_slot):
    at = open_lab("multiprocess")
    assert_clean(at)
    assert not at.button(key="multiprocess.run").disabled
    assert at.slider(key="multiprocess.processes").value == 1


def test_a_group_that_never_forms_is_reported_by_its_join_timeout(capfd):
    """The late process misses the join deadline: JAX aborts the waiting process (SIGABRT); the launcher
    says it from the outside, by the timeout and the late process, not as a death by SIGABRT."""
    status = cli_main(["launch", "--processes", "2", "--devices-per-process", "2", "--late", "40",
                       *train_args("jit"), "--init-timeout", "5", "--no-tracking"])
    err = capfd.readouterr().err
    assert status == 1
    last = err.strip().splitlines()[-1]
    assert last == ("error: the run did not finish: the group did not form within the join timeout of 5 s: process 1 "
                    "was to start 40 s after the others; JAX aborts every process still waiting at that deadline "
                    "(DEADLINE_EXCEEDED, seen as SIGABRT); every process has ended"), err[-3000:]
    assert pmap_core_children() == []


def test_the_page_reports_a_late_process_by_its_join_timeout_with_no_native_dump(two_slots):
    at = open_lab("multiprocess", processes=2, per_process=2, batch=8, size=16, steps=3, fault="late", late_s=40,
                  init_timeout=5)
    at.button(key="multiprocess.run").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "The group did not form within the join timeout of 5 s. Process 1 was to start 40 s after the others. JAX "
        "aborts every process still waiting at that deadline (DEADLINE_EXCEEDED; the launcher sees SIGABRT), so "
        "nothing waits forever."]
    shown = "\n".join(c.value for c in at.code)
    assert "line(s) of the JAX runtime's own output: in the server log" in shown
    assert not re.search(r"0x[0-9a-f]{8}|Check failure|\.cc:\d+", shown), shown
    assert pmap_core_children() == []


def page_text(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_page_measures_both_levels_and_says_what_the_fits_say(two_slots):
    """The two-level button: a group of 2 × 2 runs `bench two-level`; the page states each level's α and β (or that
    the noise left it unfitted) and their ratios, as the benchmark's own JSON gives them; nothing is left running."""
    from labs.multiprocess import TWO_LEVEL

    at = open_lab("multiprocess")
    at.button(key="multiprocess.two_level").click().run()
    assert_clean(at)
    assert pmap_core_children() == []
    assert heavy_jobs._heavy_slots().position(object())[1] == 0  # every slot given back
    result = at.session_state[TWO_LEVEL]["result"]
    assert [level["level"] for level in result["levels"]] == ["process", "network"]
    shown = page_text(at)
    for level in result["levels"]:
        alpha, beta = level["alpha_s"], level["beta_bytes_per_s"]
        assert (f"α = {alpha * 1e6:.1f} µs per hop" if alpha else "α = 0 (no latency term") in shown, shown
        assert (f"β = {beta / 1e9:.3g} GB/s per link" if beta else "β not fitted") in shown, shown
        if any(t is None or t <= 0 for t in level["seconds"]):
            assert "Not fitted:" in shown
    ratio = result["alpha_network_over_process"]
    assert (f"one hop costs {ratio:.2f}×" if ratio else "No latency ratio") in shown, shown
    per_byte = result["beta_process_over_network"]
    assert (f"Each byte takes {per_byte:.2f}×" if per_byte else "No bandwidth ratio") in shown, shown
    print(f"two levels: α process {result['levels'][0]['alpha_s'] * 1e6:.1f} µs, network "
          f"{result['levels'][1]['alpha_s'] * 1e6:.1f} µs; ratios α {ratio}, 1/β {per_byte}")


def test_chinese_page_kills_a_process_and_shows_how_the_other_left(two_slots):
    """The lost-process button (中文): process 1 killed after its step 30; process 0 leaves within the heartbeat
    timeout; its MLflow run (read back here) is KILLED or FAILED with the losses the page counts; none is left."""
    from labs.multiprocess import HEARTBEAT_TIMEOUT_S, LOST

    at = open_lab("multiprocess", lang="zh")
    at.button(key="multiprocess.lost").click().run()
    assert_clean(at)
    assert pmap_core_children() == []
    assert heavy_jobs._heavy_slots().position(object())[1] == 0
    lost = at.session_state[LOST]
    assert lost["killed"] and lost["left"] == [] and len(lost["pids"]) == 2
    shown = page_text(at)
    exit_s = lost["exit_s"]
    assert exit_s is not None and exit_s < HEARTBEAT_TIMEOUT_S
    assert f"进程 0 在杀死后 {exit_s:.2f} 秒退出" in shown and f"是 {HEARTBEAT_TIMEOUT_S} 秒心跳超时的" in shown
    # Whichever came first, both shown as said: the launcher's SIGTERM, or the next collective failing as the
    # killed peer's socket closed (gloo: "Connection reset by peer").
    said = lost["said"][0]
    assert said.startswith(launch.TERMINATED) or lost_group.LOST_CONTACT in said, lost["said"]
    assert "启动器或一次失败的集合通信先让它停了下来" in shown and "进程 0 退出时的说明：" in shown
    run_id = next(c.value.split("\n")[0] for c in at.code if re.fullmatch(r"[0-9a-f]{32}", c.value.split("\n")[0]))
    client = mlflow.MlflowClient()
    run = client.get_run(run_id)
    assert run.info.status in ("KILLED", "FAILED")
    losses = [m.value for m in sorted(client.get_metric_history(run_id, "loss"), key=lambda m: m.step)]
    assert losses and losses == pytest.approx(lost["losses"])
    assert f"以 **{run.info.status}** 结束" in shown and f"保留了杀死之前记录的 {len(losses)} 个损失值" in shown
    assert "2 个进程（pid " in shown and "都已不再运行" in shown
    print(f"lost process: process 0 left {exit_s:.2f} s after the kill (heartbeat {HEARTBEAT_TIMEOUT_S} s); run "
          f"{run.info.status} with {len(losses)} losses")


def test_a_server_of_one_slot_says_in_one_line_that_the_experiments_cannot_run(one_slot):
    at = open_lab("multiprocess", lang="zh")
    assert_clean(at)
    assert at.button(key="multiprocess.two_level").disabled and at.button(key="multiprocess.lost").disabled
    assert sum("无法运行" in c.value for c in at.caption) == 2
