"""Every page of the registry (the home page, then each lab) opened on its defaults, in English and in
中文, on this process's device count: prints one JSON line, what
tests.system.test_every_page_every_device_count.pages_here finds ({lang: {script: [what went wrong]}}).

Run by tests/system/test_every_page_every_device_count.py at each of its device counts but the test
process's own, one process each (all the pages in one process: starting a process costs more than a page)."""

import json

from tests.children import apptest_setup  # noqa: F401 - first: the test session's setup
from tests.system.test_every_page_every_device_count import pages_here

if __name__ == "__main__":
    print(json.dumps(pages_here()))
