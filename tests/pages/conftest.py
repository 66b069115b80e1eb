"""Streamlit's AppTest for this level: the `lab` and `one_slot` fixtures, and the names a test module
may import from conftest (APP, SESSION_TRACKING_URI, assert_clean, open_lab)."""

from tests.apptest_support import APP, SESSION_TRACKING_URI, assert_clean, lab, one_slot, open_lab

__all__ = ["APP", "SESSION_TRACKING_URI", "assert_clean", "lab", "one_slot", "open_lab"]
