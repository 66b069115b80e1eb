"""Two app processes sharing one MLflow server (docs/DEPLOY.md, "Two app processes behind one proxy"):
a training started in each lands in the shared store as its own run, with the settings and
the figures that app showed, and nothing of the other."""

import re

import pytest
from mlflow.tracking import MlflowClient

from harness import browser as bs  # the module the other browser tests share: one Playwright per process
from harness.processes import MlflowServer

if reason := bs.chromium_missing_reason():
    pytestmark = pytest.mark.skip(reason=reason)

# Different settings on each app: a run carrying the other app's settings would show the mix-up.
SETTINGS = ({"devices": 2, "batch": 64, "steps": 40, "seed": 11},
            {"devices": 4, "batch": 128, "steps": 60, "seed": 22})


def shown_metric(page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return metric.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_runs_from_two_app_processes_land_in_one_mlflow_server_unmixed(tmp_path):
    mlflow = MlflowServer(tmp_path)  # starts now; its health is awaited after the apps have started
    servers, contexts = [], []
    try:
        # A loaded 2-core machine can keep one MLflow worker busy past the lab's 5 s request timeout.
        env = {"MLFLOW_TRACKING_URI": mlflow.uri, "MLFLOW_HTTP_REQUEST_TIMEOUT": "60",
               "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2"}
        servers = bs.start_servers([env] * len(SETTINGS))
        mlflow.wait_until_healthy()
        client = MlflowClient(tracking_uri=mlflow.uri)
        # No experiment yet: the two apps may create it at the same instant, and both runs must still land here.
        browser = bs.shared_browser()
        pages = []
        for server, settings in zip(servers, SETTINGS, strict=True):
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            page = contexts[-1].new_page()
            bs.open_app_page(page, bs.page_url(server, "training", lang="en", **settings))
            pages.append(page)
        for page in pages:  # both apps train at the same time
            page.locator(".st-key-training-train button").click(no_wait_after=True)
        shown = []
        for page in pages:
            page.locator('[data-testid="stMetric"]').filter(has_text="Final loss").first.wait_for(timeout=120_000)
            bs.wait_ready(page, timeout_ms=120_000)
            assert not bs.exception_texts(page), bs.exception_texts(page)
            codes = page.locator(bs.MAIN).locator('[data-testid="stCode"]').all_inner_texts()
            recorded = next((text for text in codes if mlflow.uri in text), "")
            found = re.search(r"\b[0-9a-f]{32}\b", recorded)
            assert found, f"no run id beside {mlflow.uri}: {codes}\n{servers[len(shown)].log_tail(2000)}"
            run_id = found.group(0)
            shown.append((run_id, shown_metric(page, "Final loss"), shown_metric(page, "learned w")))

        experiment = client.get_experiment_by_name("pmap-lab")
        runs = {run.info.run_id: run for run in client.search_runs([experiment.experiment_id])}
        assert set(runs) == {run_id for run_id, _, _ in shown}  # two runs, one from each app
        for (run_id, final_loss, w), settings in zip(shown, SETTINGS, strict=True):
            run = runs[run_id]
            assert run.info.status == "FINISHED"
            params = run.data.params
            assert (int(params["devices"]), int(params["global_batch"]), int(params["steps"]), int(params["seed"])) \
                == (settings["devices"], settings["batch"], settings["steps"], settings["seed"])
            assert float(final_loss) == pytest.approx(run.data.metrics["final_loss"], rel=1e-2)
            assert len(client.get_metric_history(run_id, "loss")) == settings["steps"]
            assert float(w) != 0.0
    finally:
        for context in contexts:
            context.close()
        for server in servers:
            bs.stop_server(server)
        mlflow.stop()
