"""A real SIGTERM to `streamlit run` while a training started from a real browser is running: what a
server restart (systemd, a container platform) does. The run must end KILLED, not stay RUNNING, with
every loss written before the signal."""

import contextlib
import signal
import sqlite3
import subprocess
import time

import pytest
from mlflow.tracking import MlflowClient

from harness import browser as bs
from harness.processes import new_tracking_store

# A second test worker on the same cores stretches the server's exit past any bound: run by itself.
pytestmark = pytest.mark.alone

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

TRAIN_BUTTON = ".st-key-training-train button"


def losses_stored(db) -> int:
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(db, timeout=1)) as store:
        return store.execute("select count(*) from metrics where key = 'loss'").fetchone()[0]
    return 0


# Short chunks: the script reaches a Streamlit call (and its stop) at once. Long chunks (seconds of
# work in one compiled call, after the first chunk's losses are stored): the process exits while the
# script thread is still inside JAX, and only the tracker's exit hook can end the run.
TRAININGS = {
    "short chunks": ({"model": "mlp", "hidden": 256, "batch": 256, "steps": 5000, "lr": 0.01}, 50),
    # Three chunks: the one in progress at the signal may still log its losses, the third never runs.
    "inside a long compiled call": ({"model": "mlp", "hidden": 1024, "batch": 16384, "steps": 75, "lr": 0.01}, 25),
}


@pytest.mark.parametrize("query, losses_first", TRAININGS.values(), ids=TRAININGS.keys())
def test_sigterm_to_streamlit_mid_training_ends_the_run_killed_with_its_losses(tmp_path, query, losses_first):
    if _missing:
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")

    db = tmp_path / "mlflow.db"
    # PYTHONFAULTHANDLER: a server that does not exit is aborted, and its log shows every thread's stack.
    server = bs.start_server({"PYTHONFAULTHANDLER": "1"}, tracking_store=lambda _: new_tracking_store(db))
    try:
        # The process's one browser: Playwright's sync API allows one instance per thread.
        page = bs.shared_browser().new_page(viewport=bs.VIEWPORT)
        try:
            bs.open_app_page(page, bs.page_url(server, "training", devices=2, **query))
            page.locator(TRAIN_BUTTON).click()
            deadline = time.monotonic() + 180
            while losses_stored(db) < losses_first and time.monotonic() < deadline:
                time.sleep(0.05)
            before = losses_stored(db)
            assert before >= losses_first, server.log_tail()
            server.process.send_signal(signal.SIGTERM)
            # Exiting waits for the compiled call in progress.
            try:
                server.process.wait(timeout=150)
            except subprocess.TimeoutExpired:
                server.process.send_signal(signal.SIGABRT)
                server.process.wait(timeout=30)
                pytest.fail(f"no exit 150 s after SIGTERM; the server's threads:\n{server.log_tail(20_000)}")
        finally:
            page.close()
        log = server.log_tail(20_000)
    finally:
        bs.stop_server(server)
    client = MlflowClient(f"sqlite:///{db}")
    (run,) = client.search_runs([client.get_experiment_by_name("pmap-lab").experiment_id])
    assert run.info.status == "KILLED", log
    steps = sorted(m.step for m in client.get_metric_history(run.info.run_id, "loss"))
    assert len(steps) >= before and steps == list(range(len(steps)))  # every loss logged before the signal
    assert len(steps) < query["steps"]  # it was stopped mid-way
    assert "Traceback" not in log, log
