"""An MLflow store that holds a few real runs, for the suites that open every lab generically
(browser, link fuzzing, widget extremes): with an empty store the experiments lab shows only
its "no runs yet" note and none of its filters, table or charts.

The runs are trained once per test session (tiny trainings and one sweep, the way the
training lab records them); every caller gets its own copy of that store.
"""

from __future__ import annotations

import atexit
import os
import pathlib
import shutil
import tempfile
import threading

from harness.processes import new_tracking_store

_built: dict[str, pathlib.Path] = {}
_lock = threading.Lock()


def _train_runs(uri: str) -> None:
    from pmap_core.tracking.callback import TrackingCallback
    from pmap_core.tracking.mlflow_backend import Tracker
    from pmap_core.train.config import TrainConfig
    from pmap_core.train.loop import sweep, train

    tracker = Tracker(uri)
    small = TrainConfig(model="linear", devices=2, global_batch=32, steps=20, chunk=10)
    for config in (small, TrainConfig(model="linear", devices=4, global_batch=32, steps=20, chunk=10),
                   TrainConfig(model="mlp", devices=4, global_batch=64, steps=20, chunk=10)):
        train(config, [TrackingCallback(tracker)])
    sweep(small, [1, 2], [TrackingCallback(tracker)])


def store_with_runs(path: str | os.PathLike) -> str:
    """A copy, at `path`, of a store holding three finished trainings and a sweep over D = 1, 2;
    returns its tracking URI."""
    with _lock:
        if "template" not in _built:
            folder = pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-runs-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            template = folder / "runs.db"
            _train_runs(new_tracking_store(template))
            _built["template"] = template
    shutil.copyfile(_built["template"], path)
    return f"sqlite:///{path}"
