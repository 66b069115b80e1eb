"""A run's "Open in MLflow" link, followed in real Chromium: the training page, on a server whose
PMAP_LAB_MLFLOW_UI_URL names a real `mlflow server` over the same sqlite store, trains a tiny run;
its link opens that run in MLflow's own UI, in the Model-training view (MLflow 3's UI opens in its
GenAI view unless the link says otherwise), showing the run's metrics."""

from __future__ import annotations

import shutil
import tempfile
import time
import urllib.parse
from pathlib import Path

import pytest

from harness import browser as bs
from harness.processes import MlflowServer
from pmap_core.tracking import MLFLOW_UI_URL_ENV

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

TRAIN = ".st-key-training-train button"
MODEL_TRAINING = "workflowType=machine_learning"


def assert_model_training_view(ui, shot) -> None:
    """MLflow's sidebar in its Model-training view lists the model registry; in its GenAI view it
    lists the AI gateway and prompts instead."""
    assert MODEL_TRAINING in ui.url, ui.url
    ui.get_by_role("link", name="Model registry").first.wait_for(timeout=30_000)
    assert not ui.get_by_role("link", name="AI Gateway").count(), shot


@pytest.fixture(scope="module")
def servers():
    """A real `mlflow server` and the app, both on one sqlite store; the app links into that server."""
    folder = Path(tempfile.mkdtemp(prefix="pmap-lab-mlflow-ui-"))
    mlflow = MlflowServer(folder)
    app = None
    try:
        app = bs.start_server({MLFLOW_UI_URL_ENV: mlflow.uri}, tracking_store=lambda _: f"sqlite:///{mlflow.db}")
        mlflow.wait_until_healthy()
        yield app, mlflow
    finally:
        if app is not None:
            bs.stop_server(app)
        mlflow.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_runs_link_opens_it_in_mlflows_model_training_view(servers):
    if _missing:
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    app, mlflow = servers
    context = bs.shared_browser().new_context(viewport={"width": 1400, "height": 2400})
    try:
        page = context.new_page()
        bs.open_app_page(page, bs.page_url(app, "training", lang="en", devices=2, batch=32, steps=20))
        page.locator(TRAIN).click()
        bs.wait_ready(page, timeout_ms=180_000, rerun=True)
        shot = bs.save_screenshot(page, "training-mlflow-link")
        assert not bs.exception_texts(page), shot
        link = page.locator(bs.MAIN).get_by_role("link", name="Open in MLflow")
        link.wait_for(timeout=30_000)
        href = link.get_attribute("href")
        assert href.startswith(f"{mlflow.uri}/#/experiments/") and href.endswith(f"?{MODEL_TRAINING}"), href
        run_id = urllib.parse.urlsplit(href).fragment.split("?")[0].rsplit("/", 1)[1]
        assert run_id in page.locator(bs.MAIN).inner_text()  # the run the page shows

        with context.expect_page() as opened:
            link.click()
        ui = opened.value
        ui.wait_for_load_state("domcontentloaded")
        # The run's page: its metrics, logged by the training, read back by MLflow's UI.
        metrics = ui.get_by_role("link", name="loss", exact=True)
        metrics.first.wait_for(timeout=120_000)
        deadline = time.monotonic() + 60
        while run_id not in ui.locator("body").inner_text() and time.monotonic() < deadline:
            ui.wait_for_timeout(500)
        text = ui.locator("body").inner_text()
        shot = bs.save_screenshot(ui, "mlflow-run-page")
        assert run_id in text, shot
        for metric in ("loss", "steady_throughput", "final_loss"):
            assert ui.get_by_role("link", name=metric, exact=True).count(), (metric, shot)
        assert_model_training_view(ui, shot)
        # In an experiment, the view's sidebar keeps it in its links (Runs, Models, Traces).
        assert ui.locator(f'a[href*="{MODEL_TRAINING}"]', has_text="Runs").count(), shot
        assert not ui.get_by_text("Evaluation runs", exact=True).count(), shot
    finally:
        context.close()


def test_the_experiments_pages_links_open_the_runs_and_their_comparison(servers):
    if _missing:
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    from pmap_core.tracking import EXPERIMENT
    from pmap_core.tracking.mlflow_backend import experiment_id

    app, mlflow = servers
    client = MlflowClient(f"sqlite:///{mlflow.db}")
    experiment = experiment_id(client, EXPERIMENT)
    now = int(time.time() * 1000)
    for devices in (1, 2):  # two more finished runs, as the CLI writes them
        run = client.create_run(experiment, run_name=f"cli-D{devices}")
        client.log_batch(run.info.run_id, params=[Param("model", "linear"), Param("devices", str(devices))],
                         metrics=[Metric("loss", 1.0 / (step + 1), now, step) for step in range(5)])
        client.set_terminated(run.info.run_id, "FINISHED")
    context = bs.shared_browser().new_context(viewport={"width": 1400, "height": 2400})
    try:
        page = context.new_page()
        bs.open_app_page(page, bs.page_url(app, "experiments", lang="en"))
        shot = bs.save_screenshot(page, "experiments-mlflow-links")
        assert not bs.exception_texts(page), shot
        shown = len(client.search_runs([experiment]))
        compare = page.locator(bs.MAIN).get_by_role("link", name=f"Compare the {shown} runs shown in MLflow")
        href = compare.get_attribute("href")
        assert href.startswith(f"{mlflow.uri}/#/compare-runs?") and href.endswith(MODEL_TRAINING), href
        with context.expect_page() as opened:
            compare.click()
        ui = opened.value
        ui.get_by_text(f"Comparing {shown} Runs from 1 Experiment").wait_for(timeout=120_000)
        shot = bs.save_screenshot(ui, "mlflow-compare-runs")
        for name in ("cli-D1", "cli-D2"):
            assert ui.get_by_text(name).count(), (name, shot)
        assert_model_training_view(ui, shot)

        runs = page.locator(bs.MAIN).get_by_role("link", name="All runs in MLflow")
        with context.expect_page() as opened:
            runs.click()
        ui = opened.value
        ui.get_by_text("cli-D2").first.wait_for(timeout=120_000)
        shot = bs.save_screenshot(ui, "mlflow-experiment-runs")
        assert ui.get_by_text(f"{shown} matching runs").count(), shot
        assert_model_training_view(ui, shot)
    finally:
        context.close()
