"""Every page of the registry opens on its default settings at D = 1, 2, 3, 5, 8 and 16 with no exception
and no error box: a laptop with one GPU gives D = 1, a server may be started with an odd count.

The device count is fixed per process, so each D opens every page in a child process of its own (all the
pages in one child: starting a process costs more than a page), and the children run at once."""

import json

import pytest

from labs.registry import HOME, LABS

DEVICE_COUNTS = (1, 2, 3, 5, 8, 16)
SCRIPTS = [HOME.script, *(lab.script for lab in LABS)]

# Each page, in English and in Chinese, on its defaults: {lang: {script: [what went wrong]}} as JSON.
_CHILD = """
import json
from labs.registry import HOME, LABS

found = {}
for lang in ("en", "zh"):
    for lab in [HOME, *LABS]:
        try:
            at = open_lab(None if lab is HOME else lab.script, lang=lang)
            found.setdefault(lang, {})[lab.script] = [e.value for e in at.exception] + [e.value for e in at.error]
        except Exception as error:  # a page that does not finish is as wrong as one that shows an error
            found.setdefault(lang, {})[lab.script] = [f"{type(error).__name__}: {error}"]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def pages_at_each_device_count():
    from harness.processes import APPTEST_CHILD, start_python

    children = {devices: start_python(APPTEST_CHILD + _CHILD, devices=devices) for devices in DEVICE_COUNTS}
    found = {}
    for devices, child in children.items():
        out, err = child.communicate(timeout=900)
        assert child.returncode == 0, f"D = {devices}:\n{err[-3000:]}"
        found[devices] = json.loads(out.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_every_page_opens_clean_on_its_defaults(pages_at_each_device_count, devices):
    for lang, pages in pages_at_each_device_count[devices].items():
        assert list(pages) == SCRIPTS, (devices, lang)
        broken = {script: problems for script, problems in pages.items() if problems}
        assert not broken, (devices, lang, broken)
