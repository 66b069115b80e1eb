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

import browser_support as bs
import pytest

from pmap_core.tracking import MLFLOW_UI_URL_ENV
from tests.support import MlflowServer

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

TRAIN = ".st-key-training-train button"
MODEL_TRAINING = "workflowType=machine_learning"


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
        # The Model-training view: its sidebar (Runs, Models, Model registry) keeps the view in its
        # links; the GenAI view's sidebar (Traces, Sessions, Evaluation runs…) is not there.
        sidebar_runs = ui.locator(f'a[href*="{MODEL_TRAINING}"]', has_text="Runs")
        assert sidebar_runs.count(), shot
        assert ui.get_by_role("link", name="Model registry").count(), shot
        assert not ui.get_by_text("Evaluation runs", exact=True).count(), shot
        assert MODEL_TRAINING in ui.url, ui.url
    finally:
        context.close()
