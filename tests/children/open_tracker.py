"""Opens a tracker on a store with a fallback store, and nothing else:

    python -m tests.children.open_tracker STORE FALLBACK

What the tracker says (on stderr, through Python's logging) is the output. Run by
tests/system/test_tracking_faults.py with a store that does not answer: one line names the fallback."""

import sys

from pmap_core.tracking.mlflow_backend import Tracker

if __name__ == "__main__":
    Tracker(sys.argv[1], fallback_uri=sys.argv[2])
