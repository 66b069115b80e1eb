"""Streamlit's Stop and Rerun mid-training, as a Streamlit call raises them from a callback: the run
ends KILLED, not FAILED or RUNNING, and keeps its losses; in a sweep the open child and the parent too."""

import pytest
from mlflow.tracking import MlflowClient
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train.config import TrainConfig
from pmap_core.train.loop import Progress, sweep, train
from tests.core.test_tracking_stores import SMALL, fresh_store, losses_of


@pytest.mark.parametrize("stop", [StopException(), RerunException(RerunData())], ids=["stop", "rerun"])
def test_a_streamlit_stop_or_rerun_mid_training_ends_the_run_killed(tmp_path, stop):
    """Streamlit's own Stop and Rerun exceptions, raised from a callback as a Streamlit call
    would raise them: the run is KILLED (the user stopped it), not FAILED, and keeps its losses."""
    store = fresh_store(tmp_path / "mlflow.db")
    tracker = Tracker(store)
    tracking = TrackingCallback(tracker)

    def streamlit_call(steps_done, losses):
        raise stop

    with pytest.raises(type(stop)):
        train(SMALL, [tracking, Progress(on_chunk=streamlit_call)])
    (run_id,) = tracker._runs
    assert MlflowClient(store).get_run(run_id).info.status == "KILLED"
    assert [m.step for m in losses_of(store, run_id)] == list(range(20))


def test_a_streamlit_stop_in_a_sweep_ends_the_open_child_and_the_parent_killed(tmp_path):
    """A stop during the second run of a sweep: that run and the sweep's parent are KILLED; the first
    run, already complete, stays FINISHED. No run is left RUNNING."""
    store = fresh_store(tmp_path / "mlflow.db")
    tracker = Tracker(store)
    tracking = TrackingCallback(tracker)
    config = TrainConfig(devices=2, global_batch=32, steps=20, chunk=10)

    def streamlit_call(steps_done, losses):
        if len(tracker._runs) == 3:  # the parent, D = 1, D = 2: inside the second run
            raise StopException()

    with pytest.raises(StopException):
        sweep(config, None, [tracking, Progress(on_chunk=streamlit_call)])
    parent, first, second = (MlflowClient(store).get_run(run_id) for run_id in tracker._runs)
    assert (parent.info.status, first.info.status, second.info.status) == ("KILLED", "FINISHED", "KILLED")
    assert second.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert [m.step for m in losses_of(store, second.info.run_id)] == list(range(10))
