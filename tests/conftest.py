"""Fix the device runtime before any test imports JAX, and share AppTest helpers."""

import os

os.environ.setdefault("MLFLOW_TRACKING_URI", "sqlite:///" + os.path.join(os.path.dirname(__file__), "..", ".pytest_cache", "mlflow-unset.db"))

import pmap_core  # noqa: E402,F401 - configures 8 simulated devices and the worker pool

import pytest  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = os.path.join(os.path.dirname(__file__), "..", "streamlit_app.py")


def open_lab(script: str | None = None, lang: str = "en", **query: object) -> AppTest:
    """Run the app on one lab (a file under labs/) with the given query parameters."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    for name, value in query.items():
        at.query_params[name] = str(value)
    if script is not None:
        # st.navigation registers the pages (with their url_path) on the first
        # run; switching before it finds only pages whose url_path is the filename.
        at.run()
        at.switch_page(f"labs/{script}.py")
    return at.run()


def assert_clean(at: AppTest) -> None:
    """No exception and no error box on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture
def lab():
    return open_lab
