"""Every page of the registry opens on its default settings at D = 1, 2, 3, 5, 8 and 16 with no exception
and no error box: a laptop with one GPU gives D = 1, a server may be started with an odd count.

The device count is fixed per process, so each D opens every page in a child process of its own (all the
pages in one child: starting a process costs more than a page), and the children run at once."""

import pytest

from labs.registry import HOME, LABS

DEVICE_COUNTS = (1, 2, 3, 5, 8, 16)
SCRIPTS = [HOME.script, *(lab.script for lab in LABS)]

@pytest.fixture(scope="module")
def pages_at_each_device_count():
    """{D: {lang: {script: [what went wrong]}}}: each page, in English and in Chinese, on its defaults."""
    from harness.processes import json_at_device_counts

    return json_at_device_counts(["-m", "tests.children.pages_on_defaults"], DEVICE_COUNTS, timeout=900)


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_every_page_opens_clean_on_its_defaults(pages_at_each_device_count, devices):
    for lang, pages in pages_at_each_device_count[devices].items():
        assert list(pages) == SCRIPTS, (devices, lang)
        broken = {script: problems for script, problems in pages.items() if problems}
        assert not broken, (devices, lang, broken)
