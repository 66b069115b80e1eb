"""Every worksheet step on this process's device count: prints one JSON line, what
tests.system.test_worksheet_devices.steps_here finds (the step's answer, whether the Worksheet page accepts
it, the lab its link opens).

Run by tests/system/test_worksheet_devices.py at each of its device counts but the test process's own."""

import json

from tests.children import apptest_setup  # noqa: F401 - first: the test session's setup
from tests.system.test_worksheet_devices import steps_here

if __name__ == "__main__":
    print(json.dumps(steps_here()))
