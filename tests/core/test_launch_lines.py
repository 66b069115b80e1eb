"""Which lines of a group's processes are the lab's own (shown to a visitor, read by the Multi-process page) and
which are native libraries' logs (counted, held back)."""

import pytest

from pmap_core.train import launch

LAB_LINES = [
    f"{launch.JOINED} process 0 of 2, 2 of 4 devices, pid 27128 on vm",
    "training linear with pmap on 4 devices (process 1 of 2), global batch 64",
    "step 30/5000  loss 0.000713818",
    "error: process 0 lost contact with the group: process 1 sent no heartbeat for 10 s",
    f"{launch.TERMINATED} every open MLflow run ended as KILLED with the losses logged so far",
    "interrupted: every open MLflow run ended as KILLED",
]
NATIVE_LINES = [
    "E1202 21:24:34.555368   27140 coordination_service.cc:1518] Use error polling to propagate the following error",
    "[Gloo] Rank 0 is connected to 3 peer ranks. Expected number of connected peer ranks is : 3",
    "*** Check failure stack trace: ***",
    "    @     0x7f14e6ef81b4  absl::lts_20260526::log_internal::LogMessage::SendToLog()",
    "Traceback (most recent call last):",
]


@pytest.mark.parametrize("text", LAB_LINES)
def test_the_lab_s_own_lines_are_shown(text):
    assert launch.Line(0, text, "stderr").from_lab


@pytest.mark.parametrize("text", NATIVE_LINES)
def test_native_logs_are_held_back(text):
    assert not launch.Line(0, text, "stderr").from_lab
