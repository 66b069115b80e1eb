"""Every page on this process's device count: prints one JSON line, what
tests.system.test_pages_at_each_device_count.walks_here finds (each page on its defaults in this count's language;
each worksheet step's answer, whether the Worksheet page accepts it, the lab its link opens).

Run by tests/system/test_pages_at_each_device_count.py at each of its device counts but the test process's
own, one process each (both walks in one process: starting a process costs more than a page)."""

import json

from tests.children import apptest_setup  # noqa: F401 - first: the test session's setup
from tests.system.test_pages_at_each_device_count import walks_here

if __name__ == "__main__":
    print(json.dumps(walks_here()))
