"""The first import of every child program that opens pages with Streamlit's AppTest: the test session's
setup, as pytest does it (tests/conftest.py: a throwaway MLflow store of this process's own, JAX's
compilation cache, the device runtime from PMAP_LAB_DEVICES), then the page helpers of
tests/apptest_support.py, which read that store's URI on import.

    from tests.children.apptest_setup import assert_clean, open_lab  # before JAX, MLflow or a page

The store's folder is removed when the child exits, as pytest removes its own at the session's end."""

import atexit
import shutil

import tests.conftest as session
from tests.apptest_support import SESSION_TRACKING_URI, assert_clean, give_prediction, open_lab

__all__ = ["SESSION_TRACKING_URI", "assert_clean", "give_prediction", "open_lab"]

atexit.register(shutil.rmtree, session.SESSION_DIR, ignore_errors=True)
