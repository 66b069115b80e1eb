"""The Multi-process page says why the survivor of a lost process left from what it said, not from when it left:
the watch's own heartbeat count can end it a little before the timeout (its last beat came before the kill)."""

from labs.ui.multiprocess_lost import lost_verdict
from pmap_core.train import distributed

SAID = "error: process 0 lost contact with the group: {reason}; the group's MLflow run ended FAILED with the losses"


def test_the_survivor_is_said_to_have_left_for_the_reason_it_gave():
    silent = SAID.format(reason=f"process 1 {distributed.SILENT} 10 s")
    gloo = SAID.format(reason="UNKNOWN: Gloo AllGather failed: Connection closed by peer [127.0.0.1]:41823")
    assert lost_verdict([silent]) == "lost.after"
    assert lost_verdict([gloo]) == "lost.before"
    assert lost_verdict(["terminated (SIGTERM from the launcher)"]) == "lost.before"
    assert lost_verdict([]) == "lost.unsaid"
