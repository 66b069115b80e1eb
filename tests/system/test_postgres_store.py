"""The class store on a real PostgreSQL server (a temporary cluster, tests/postgres_support.py): the CLI's
training and sweep, the Class page's read-back, eight sessions training at once and two app servers at
once leave every run FINISHED with every loss in the database, and no password in what the lab shows.

The URIs name no driver (`postgresql://user:password@host:port/db`), as a deployment writes them:
SQLAlchemy 2.1 opens those with psycopg 3, the lab pins psycopg2 (`tracking.store_uri`)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import numpy as np
import pytest
import sqlalchemy
from mlflow.tracking import MlflowClient

from harness.processes import MlflowServer, free_port, new_tracking_store, run_coroutine, run_python, start_python
from pmap_core.tracking import EXPERIMENT, FINISHED, classroom, mlflow_backend, redact_uri, store_uri, ui_command
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import loop
from pmap_core.train.config import TrainConfig

TRAINERS = 8


def database(uri: str) -> str:
    return uri.rsplit("/", 1)[1]


def losses_of(client: MlflowClient, run_id: str) -> list[float]:
    history = sorted(client.get_metric_history(run_id, "loss"), key=lambda metric: metric.step)
    assert [metric.step for metric in history] == list(range(len(history)))
    return [metric.value for metric in history]


def runs_of(client: MlflowClient, experiment: str = EXPERIMENT) -> list:
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id], max_results=1000) if found else []


def test_training_and_a_sweep_on_postgresql_finish_with_every_loss_read_back(postgres, postgres_store, tmp_path):
    env = {"MLFLOW_TRACKING_URI": postgres_store}  # the password in the environment, never on a command line
    common = ["--model", "linear", "--global-batch", "64", "--chunk", "10", "--json"]
    train = start_python(["-m", "pmap_core", "train", "--devices", "4", "--steps", "40", *common],
                         cwd=tmp_path, env=env)
    sweep = start_python(["-m", "pmap_core", "sweep", "--device-counts", "1,2,4", "--steps", "30", *common],
                         cwd=tmp_path, env=env)
    outputs = {name: child.communicate(timeout=300) for name, child in (("train", train), ("sweep", sweep))}
    for name, child in (("train", train), ("sweep", sweep)):
        out, err = outputs[name]
        assert child.returncode == 0, f"{name}:\n{err[-3000:]}"
        assert postgres.password not in out + err
    trained, swept = (json.loads(outputs[name][0]) for name in ("train", "sweep"))
    for result in (trained, swept):
        assert result["fell_back_to"] is None
        assert result["tracking_uri"] == redact_uri(postgres_store)
    assert not list(tmp_path.glob("*.db")), "nothing went to a local store"

    client = MlflowClient(store_uri(postgres_store))
    run = client.get_run(trained["run_id"])
    assert run.info.status == FINISHED
    losses = losses_of(client, trained["run_id"])
    assert len(losses) == 40
    assert losses[-1] == pytest.approx(trained["final_loss"]) == pytest.approx(run.data.metrics["final_loss"])

    parent = client.get_run(swept["run_id"])
    assert parent.info.status == FINISHED
    children = client.search_runs([parent.info.experiment_id],
                                  filter_string=f"tags.mlflow.parentRunId = '{swept['run_id']}'")
    assert sorted(child.info.run_id for child in children) == sorted(point["run_id"] for point in swept["runs"])
    assert sorted(int(child.data.params["devices"]) for child in children) == [1, 2, 4]
    for child in children:
        assert child.info.status == FINISHED
        child_losses = losses_of(client, child.info.run_id)
        assert len(child_losses) == 30
        assert child_losses[-1] == pytest.approx(child.data.metrics["final_loss"])
    # the parent keeps the curve over D under its own name (by_D/…), apart from its children's figures
    assert [m.step for m in client.get_metric_history(swept["run_id"], "by_D/efficiency")] == [1, 2, 4]

    # The same rows straight from the server, not through MLflow: one loss a step of every run.
    rows = postgres.query(database(postgres_store), "SELECT count(*), count(DISTINCT run_uuid) FROM metrics "
                                                    "WHERE key = 'loss'")
    assert rows == [(40 + 3 * 30, 4)]
    statuses = postgres.query(database(postgres_store), "SELECT status, count(*) FROM runs GROUP BY status")
    assert statuses == [(FINISHED, 5)]


def test_the_class_page_reads_a_class_back_from_postgresql(postgres_store, tmp_path):
    code, students = "PG-Class", {"Ada": 2, "Lin": 4}
    trained = {}
    for student, devices in students.items():
        tags = classroom.class_tags(student, code)
        tracker = Tracker(postgres_store, fallback_uri=new_tracking_store(tmp_path / f"fallback-{student}.db"))
        tracking = TrackingCallback(tracker, extra_tags=tags)
        trained[student] = tracking.tracked(loop.train(TrainConfig(devices=devices, global_batch=32, steps=20,
                                                                    chunk=10), [tracking]))
        assert trained[student].fell_back_to is None and trained[student].error is None
        classroom.record_exercise("1_shards", {"pad_per_device": student == "Ada"}, tags, uri=postgres_store)
    # A run recorded before codes were folded: its tag as typed, found by the code in any case (ILIKE: on
    # PostgreSQL, unlike sqlite, LIKE minds case).
    legacy = {classroom.CLASS_TAG: code, classroom.STUDENT_TAG: "Old",
              classroom.CLASS_KEY_TAG: classroom.class_key(code)}
    classroom.record_exercise("1_shards", {"pad_per_device": True}, legacy, uri=postgres_store)

    for typed in ("pg-class", "PG-CLASS"):
        runs = classroom.class_runs(typed, uri=postgres_store)
        assert sorted(runs[runs["kind"] == "exercise"]["student"]) == ["Ada", "Lin", "Old"]
        training = runs[runs["kind"] == "training"].set_index("student")
        assert sorted(training.index) == ["Ada", "Lin"]
        for student, devices in students.items():
            run = trained[student]
            assert training.loc[student, "run_id"] == run.run_id
            assert training.loc[student, "devices"] == devices
            assert training.loc[student, "steady_throughput"] == pytest.approx(run.result.steady_throughput)
    done = classroom.completion(runs).set_index("student")["1_shards/pad_per_device"]
    assert done.to_dict() == {"Ada": 1.0, "Lin": 0.0, "Old": 1.0}
    efficiency = classroom.best_efficiency(runs).set_index("student")
    for student, devices in students.items():
        assert efficiency.loc[student, f"D={devices}"] == pytest.approx(trained[student].scaling.efficiency)
    client = MlflowClient(store_uri(postgres_store))
    for run in trained.values():
        assert client.get_run(run.run_id).info.status == FINISHED
        np.testing.assert_allclose(losses_of(client, run.run_id), run.result.losses, rtol=1e-6)


def test_eight_sessions_train_at_once_and_every_loss_reads_back(postgres, postgres_store, tmp_path):
    """As eight sessions of one server pressing Train together on a new store: each its own tracker, all
    creating the lab's experiment at the same instant, then writing their losses side by side."""
    start = threading.Barrier(TRAINERS)
    results, errors = [None] * TRAINERS, []

    def session(index: int) -> None:
        try:
            tracker = Tracker(postgres_store, fallback_uri=new_tracking_store(tmp_path / f"fallback-{index}.db"))
            tracking = TrackingCallback(tracker)
            config = TrainConfig(devices=1 + index % 4, global_batch=48, steps=60, chunk=5, seed=index,
                                 learning_rate=0.05 + 0.01 * index)
            start.wait(timeout=120)
            results[index] = tracking.tracked(loop.train(config, [tracking], measure_scaling=False))
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            errors.append(f"session {index}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=session, args=(i,)) for i in range(TRAINERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert all(result.fell_back_to is None and result.error is None for result in results)

    client = MlflowClient(store_uri(postgres_store))
    stored = {run.info.run_id: run for run in runs_of(client)}
    assert sorted(stored) == sorted(result.run_id for result in results)
    for result in results:
        assert stored[result.run_id].info.status == FINISHED
        assert stored[result.run_id].data.params["seed"] == str(result.result.config.seed)
        np.testing.assert_allclose(losses_of(client, result.run_id), result.result.losses, rtol=1e-6)
    assert len(client.search_experiments(filter_string=f"name = '{EXPERIMENT}'")) == 1
    # Straight from the server, not through MLflow: every loss of every session, once.
    rows = postgres.query(database(postgres_store), "SELECT count(*), count(DISTINCT (run_uuid, step)) FROM metrics "
                                                    "WHERE key = 'loss'")
    assert rows == [(TRAINERS * 60, TRAINERS * 60)]


def test_two_app_servers_share_one_postgresql_store(postgres, postgres_store):
    """Two `streamlit run` processes on one database, one session each pressing Train at the same time
    (Streamlit's own websocket protocol, as benchmarks/load_protocol speaks it): both runs FINISHED,
    each with every loss, in one experiment; neither server logs the password."""
    from harness import browser as bs
    from harness.protocol import ProtocolSession

    servers = []
    try:
        for _ in range(2):
            servers.append(bs.start_server({"PMAP_LAB_HEAVY_JOBS": "1"}, tracking_store=lambda _: postgres_store))

        async def train_on_each() -> list[ProtocolSession]:
            sessions = [ProtocolSession(server, f"server{i}") for i, server in enumerate(servers)]
            try:
                for session in sessions:
                    session.query = "lang=en&model=linear&devices=2&batch=64&steps=50"
                    await session.connect()
                await asyncio.gather(*(session.open("training") for session in sessions))
                await asyncio.wait_for(asyncio.gather(*(session.press_train() for session in sessions)), 300)
            finally:
                await asyncio.gather(*(session.close() for session in sessions), return_exceptions=True)
            return sessions

        sessions = run_coroutine(train_on_each())
        assert not [error for session in sessions for error in session.errors]
        logs = [server.log_tail(1_000_000) for server in servers]
    finally:
        for server in servers:
            bs.stop_server(server)
    assert all(postgres.password not in log for log in logs)

    client = MlflowClient(store_uri(postgres_store))
    runs = runs_of(client)
    assert len(runs) == 2, [run.info.run_name for run in runs]
    for run in runs:
        assert run.info.status == FINISHED
        assert run.data.params["steps"] == "50"
        losses = losses_of(client, run.info.run_id)
        assert len(losses) == 50
        assert losses[-1] == pytest.approx(run.data.metrics["final_loss"])
    assert len(client.search_experiments(filter_string=f"name = '{EXPERIMENT}'")) == 1


def test_a_database_server_that_does_not_answer_is_left_for_the_fallback_at_once(tmp_path):
    """No server on the port: the runs go to the local store before the first write, not after MLflow's
    ten tries at opening the store (about 100 s); the password is in no message."""
    uri = f"postgresql://lab:s3cret-pw@127.0.0.1:{free_port()}/mlflow"
    fallback = new_tracking_store(tmp_path / "fallback.db")
    tracker = Tracker(uri, fallback_uri=fallback)
    assert tracker.fell_back_to == fallback
    assert "did not answer" in tracker.fallback_reason and "s3cret" not in tracker.fallback_reason
    tracking = TrackingCallback(tracker)
    tracked = tracking.tracked(loop.train(TrainConfig(devices=2, steps=10, chunk=5), [tracking], measure_scaling=False))
    client = MlflowClient(fallback)
    assert client.get_run(tracked.run_id).info.status == FINISHED
    np.testing.assert_allclose(losses_of(client, tracked.run_id), tracked.result.losses, rtol=1e-6)


def test_a_password_in_pgpassword_leaves_no_secret_in_the_uri(postgres, postgres_store, monkeypatch, tmp_path):
    """DEPLOY.md's advice: the URI names the user only, libpq reads the password from PGPASSWORD."""
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    uri = postgres_store.replace(f":{postgres.password}@", "@")
    assert postgres.password not in uri
    tracker = Tracker(uri, fallback_uri=new_tracking_store(tmp_path / "fallback.db"))
    tracking = TrackingCallback(tracker)
    tracked = tracking.tracked(loop.train(TrainConfig(devices=2, steps=10, chunk=5), [tracking], measure_scaling=False))
    assert tracked.fell_back_to is None and tracked.tracking_uri == uri
    client = MlflowClient(store_uri(postgres_store))
    assert client.get_run(tracked.run_id).info.status == FINISHED
    np.testing.assert_allclose(losses_of(client, tracked.run_id), tracked.result.losses, rtol=1e-6)


def test_mlflow_is_given_the_installed_driver_and_the_ui_command_names_it(monkeypatch):
    """SQLAlchemy 2.1 opens `postgresql://` with psycopg 3; the lab pins psycopg2 and says so to MLflow,
    and to `mlflow ui` (no lab code there) in the command it prints, the password left out."""
    monkeypatch.delenv("PMAP_LAB_MLFLOW_UI_URL", raising=False)
    assert store_uri("postgresql://lab:pw@db:5432/mlflow") == "postgresql+psycopg2://lab:pw@db:5432/mlflow"
    assert store_uri("postgresql+psycopg2://lab@db/mlflow") == "postgresql+psycopg2://lab@db/mlflow"
    assert store_uri("sqlite:///mlflow.db") == "sqlite:///mlflow.db"
    assert ui_command("postgresql://lab:pw@db/mlflow") == (
        "mlflow ui --backend-store-uri postgresql+psycopg2://***@db/mlflow --host 127.0.0.1 --port 5000")


class RestartsTheDatabase(loop.Callback):
    """After the chunk of `at_step`, the database server restarts: stopped at once (before the tracker
    writes that chunk's losses), started again `down_s` seconds later, in the background."""

    def __init__(self, cluster, at_step: int, down_s: float = 2.0):
        self.cluster, self.at_step, self.down_s = cluster, at_step, down_s
        self.restart: threading.Thread | None = None

    def chunk_done(self, steps_done: int, losses) -> None:
        if steps_done == self.at_step:
            self.cluster.pause()
            self.restart = threading.Thread(target=lambda: (time.sleep(self.down_s), self.cluster.resume()))
            self.restart.start()


def test_a_database_restart_mid_run_keeps_the_run_in_postgresql(postgres, postgres_store, tmp_path, monkeypatch):
    """A restart of PostgreSQL (an upgrade, a failover) in the middle of a run: the writes wait for the
    server to answer again and go on there, the run and every loss stay in the class's store."""
    # How long a write waits for the database to come back: a loaded test machine restarts it slowly.
    monkeypatch.setattr(mlflow_backend, "DATABASE_RETRY_WAIT_S", 120.0)
    restarts = RestartsTheDatabase(postgres, at_step=20)
    tracker = Tracker(postgres_store, fallback_uri=new_tracking_store(tmp_path / "fallback.db"))
    tracking = TrackingCallback(tracker)
    try:
        tracked = tracking.tracked(loop.train(TrainConfig(devices=2, global_batch=32, steps=40, chunk=5),
                                              [restarts, tracking], measure_scaling=False))
    finally:
        if restarts.restart is not None:
            restarts.restart.join(timeout=180)
        if not postgres.running():
            postgres.resume()
    assert restarts.restart is not None
    assert tracked.fell_back_to is None and tracked.error is None
    client = MlflowClient(store_uri(postgres_store))
    assert client.get_run(tracked.run_id).info.status == FINISHED
    np.testing.assert_allclose(losses_of(client, tracked.run_id), tracked.result.losses, rtol=1e-6)


def commits_then_loses_the_answer(method, lost: list, monkeypatch) -> None:
    """MlflowClient.`method` commits in PostgreSQL, then, the first time, raises what SQLAlchemy raises when the
    connection drops before the answer arrives (a restart at that moment); `lost` records that it did."""
    real = getattr(MlflowClient, method)

    def write(client, *args, **kwargs):
        answer = real(client, *args, **kwargs)
        if not lost and (method != "log_batch" or kwargs.get("metrics")):
            lost.append(method)
            raise sqlalchemy.exc.OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))
        return answer

    monkeypatch.setattr(MlflowClient, method, write)


@pytest.mark.parametrize("method", ["create_run", "log_batch"])
def test_a_write_whose_answer_was_lost_is_stored_once(method, postgres, postgres_store, tmp_path, monkeypatch):
    """The connection drops after PostgreSQL committed the run's creation or a batch of losses, before the answer
    came back: the write is tried again, and the store holds one run, FINISHED, with each step's loss once."""
    lost = []
    commits_then_loses_the_answer(method, lost, monkeypatch)
    tracker = Tracker(postgres_store, fallback_uri=new_tracking_store(tmp_path / "fallback.db"))
    run_id = tracker.start_run("lost answer", {"steps": 10})
    tracker.log_series(run_id, "loss", [1.0 / (step + 1) for step in range(10)])
    tracker.end_run(run_id)
    assert lost == [method] and tracker.fell_back_to is None
    client = MlflowClient(store_uri(postgres_store))
    assert [run.info.run_id for run in runs_of(client)] == [run_id]
    assert client.get_run(run_id).info.status == FINISHED
    np.testing.assert_allclose(losses_of(client, run_id), [1.0 / (step + 1) for step in range(10)])


@pytest.fixture
def server_on_postgres(postgres, postgres_store, tmp_path):
    """DEPLOY.md's recommended set-up: one `mlflow server` on the PostgreSQL store (only it holds the password,
    in PGPASSWORD); yields the server and the store's own URI."""
    backend = store_uri(postgres_store.replace(f":{postgres.password}@", "@"))  # the password in PGPASSWORD
    server = MlflowServer(tmp_path, backend=backend, env={"PGPASSWORD": postgres.password})
    try:
        server.wait_until_healthy(timeout_s=300)  # 21-36 s to start here, more under load
        yield server, postgres_store
    finally:
        server.stop()


def test_a_database_restart_behind_an_mlflow_server_keeps_the_run_in_postgresql(
        postgres, server_on_postgres, tmp_path, monkeypatch):
    """App servers -> one `mlflow server` -> PostgreSQL, and PostgreSQL restarts in the middle of a run: the
    tracking server answers with errors meanwhile, the writes are tried again until it takes them, and the
    run ends FINISHED in the class store with every loss (none of it in the fallback store)."""
    server, database_uri = server_on_postgres
    monkeypatch.setattr(mlflow_backend, "DATABASE_RETRY_WAIT_S", 120.0)  # a loaded test machine restarts slowly
    restarts = RestartsTheDatabase(postgres, at_step=20, down_s=1.0)
    fallback = tmp_path / "fallback.db"
    tracker = Tracker(server.uri, fallback_uri=new_tracking_store(fallback))
    tracking = TrackingCallback(tracker)
    try:
        tracked = tracking.tracked(loop.train(TrainConfig(devices=2, global_batch=32, steps=40, chunk=5),
                                              [restarts, tracking], measure_scaling=False))
    finally:
        if restarts.restart is not None:
            restarts.restart.join(timeout=180)
        if not postgres.running():
            postgres.resume()
    assert restarts.restart is not None
    assert tracked.fell_back_to is None and tracked.error is None, tracked.fell_back_to
    for client in (MlflowClient(server.uri), MlflowClient(store_uri(database_uri))):  # the server and its tables
        assert client.get_run(tracked.run_id).info.status == FINISHED
        np.testing.assert_allclose(losses_of(client, tracked.run_id), tracked.result.losses, rtol=1e-6)
    assert runs_of(MlflowClient(f"sqlite:///{fallback}")) == []


class TakesTheDatabaseDown(loop.Callback):
    """After the chunk of `at_step`, once the store holds the losses of the steps before that chunk
    (`written`), the database server stops (before the tracker writes that chunk's losses) and stays down
    until the tracker has left it for the fallback store and has tried, in vain, to close the run it left
    there: the shortest outage that leaves a partial copy RUNNING in the class store. Then it starts again, in
    the background, while the training goes on."""

    def __init__(self, cluster, uri: str, closing_tried: threading.Event, at_step: int, written: int):
        self.cluster, self.uri, self.closing_tried = cluster, uri, closing_tried
        self.at_step, self.written = at_step, written
        self.restart: threading.Thread | None = None
        self.down_s = 0.0

    def chunk_done(self, steps_done: int, losses) -> None:
        if steps_done == self.at_step:
            client, deadline = MlflowClient(store_uri(self.uri)), time.monotonic() + 60
            while time.monotonic() < deadline and not (
                    (runs := runs_of(client)) and len(client.get_metric_history(runs[0].info.run_id, "loss"))
                    >= self.written):
                time.sleep(0.1)
            self.cluster.pause()
            self.restart = threading.Thread(target=self._back_up)
            self.restart.start()

    def _back_up(self) -> None:
        started = time.monotonic()
        try:
            self.closing_tried.wait(timeout=180)
        finally:
            self.down_s = time.monotonic() - started
            self.cluster.resume()


def test_an_outage_mid_run_then_move_fallback_leaves_one_finished_copy(postgres, postgres_store, tmp_path,
                                                                         monkeypatch):
    """PostgreSQL goes down mid-run for longer than the tracker waits (10 s): the run goes on in the fallback
    store, and the copy the database kept stays RUNNING (nobody could end it). Once the database is back,
    `store move-fallback` leaves exactly one copy of the run in the class store: FINISHED, with every loss;
    the partial one (the same creation tag) is ended FAILED and deleted."""
    closing_tried = threading.Event()
    close_moved_runs = mlflow_backend.close_moved_runs

    def close_then_say_so(*args):
        try:
            close_moved_runs(*args)
        finally:
            closing_tried.set()

    monkeypatch.setattr(mlflow_backend, "close_moved_runs", close_then_say_so)
    fallback = new_tracking_store(tmp_path / "mlflow-fallback.db")
    tracker = Tracker(postgres_store, fallback_uri=fallback)
    outage = TakesTheDatabaseDown(postgres, postgres_store, closing_tried, at_step=20, written=15)
    tracking = TrackingCallback(tracker)
    try:
        tracked = tracking.tracked(loop.train(TrainConfig(devices=2, global_batch=32, steps=40, chunk=5),
                                              [outage, tracking], measure_scaling=False))
    finally:
        if outage.restart is not None:
            outage.restart.join(timeout=240)
        if not postgres.running():
            postgres.resume()
    assert tracked.fell_back_to == fallback and tracked.error is None
    assert outage.down_s > mlflow_backend.DATABASE_RETRY_WAIT_S
    client = MlflowClient(store_uri(postgres_store))
    (partial,) = runs_of(client)
    assert partial.info.status == "RUNNING" and len(losses_of(client, partial.info.run_id)) == 15
    assert partial.data.tags[mlflow_backend.CREATION_TAG] == MlflowClient(fallback).get_run(
        tracked.run_id).data.tags[mlflow_backend.CREATION_TAG]

    moved = run_python(["-m", "pmap_core", "store", "move-fallback", "--from", fallback, "--json"],
                       cwd=tmp_path, env={"MLFLOW_TRACKING_URI": postgres_store}, timeout=300)
    assert moved.returncode == 0, moved.stderr[-3000:]
    assert postgres.password not in moved.stdout + moved.stderr
    report = json.loads(moved.stdout)
    assert (report["moved"], report["partial_copies_deleted"]) == (1, 1)
    (copy,) = runs_of(client)
    assert copy.info.run_id == report["runs"][0]["run_id"] and copy.info.status == FINISHED
    np.testing.assert_allclose(losses_of(client, copy.info.run_id), tracked.result.losses, rtol=1e-6)
    left = client.get_run(partial.info.run_id)
    assert (left.info.status, left.info.lifecycle_stage) == ("FAILED", "deleted")
    # Straight from the tables: one live run, FINISHED, with a loss for each of the 40 steps.
    rows = postgres.query(database(postgres_store), "SELECT status, lifecycle_stage, count(*) FROM runs "
                                                    "GROUP BY status, lifecycle_stage ORDER BY status")
    assert rows == [("FAILED", "deleted", 1), (FINISHED, "active", 1)]
    again = json.loads(run_python(["-m", "pmap_core", "store", "move-fallback", "--from", fallback, "--json"],
                                  cwd=tmp_path, env={"MLFLOW_TRACKING_URI": postgres_store}, check=True).stdout)
    assert (again["moved"], again["already_moved"], again["partial_copies_deleted"]) == (0, 1, 0)


def test_the_checks_fail_in_one_line_while_postgresql_is_down_behind_an_mlflow_server(
        postgres, server_on_postgres, tmp_path):
    """MLflow's /health answers 200 while its database is down, and its API 503: `store check` and the
    before-class benchmark write and read a run through the API, and each says in one line that the store
    does not take it (and passes once the database is back)."""
    import urllib.request

    from harness.processes import ROOT

    server, _ = server_on_postgres
    env = {"MLFLOW_TRACKING_URI": server.uri}
    check = ["-m", "pmap_core", "store", "check", "--json"]
    assert json.loads(run_python(check, cwd=tmp_path, env=env, check=True).stdout)["store"] == server.uri
    postgres.pause()
    try:
        with urllib.request.urlopen(server.uri + "/health", timeout=30) as health:
            assert health.status == 200
        down = run_python(check, cwd=tmp_path, env=env, drop=["PMAP_LAB_TEACHER_KEY"], timeout=300)
        before_class = run_python(["-m", "benchmarks.memory_after_all_labs"], cwd=ROOT, env=env,
                                  drop=["PMAP_LAB_TEACHER_KEY"], timeout=300)
    finally:
        postgres.resume()
    assert down.returncode == 1 and json.loads(down.stdout)["code"] == "not_ready"
    for done in (down, before_class):
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, done.stderr[-3000:]
        assert f"the tracking store {server.uri} does not take a run" in lines[0] and "503" in lines[0], lines[0]
    assert before_class.returncode == 2
    assert run_python(check, cwd=tmp_path, env=env, timeout=300).returncode == 0  # the database is back
