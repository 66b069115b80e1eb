"""Every page of the registry opens on its default settings at D = 1, 2, 3, 5, 8 and 16 with no exception
and no error box: a laptop with one GPU gives D = 1, a server may be started with an odd count.

The device count is fixed per process: this process's D is opened here, each other D in a child process of
its own (all the pages in one child: starting a process costs more than a page), and the children run at
once."""

import pytest

from labs.registry import HOME, LABS

DEVICE_COUNTS = (1, 2, 3, 5, 8, 16)
SCRIPTS = [HOME.script, *(lab.script for lab in LABS)]

# The module's first test sets up every device count's run (its children's own limit is 900 s): on 2 cores
# shared with other work it took over pytest's 300 s per test (pyproject.toml).
pytestmark = pytest.mark.timeout(900)


def pages_here() -> dict:
    """{lang: {script: [what went wrong]}}: each page, in English and in Chinese, on its defaults on this
    process's device count: the exceptions and error boxes shown, or the error of a page that did not finish."""
    from tests.apptest_support import open_lab

    found = {}
    for lang in ("en", "zh"):
        for lab in [HOME, *LABS]:
            try:
                at = open_lab(None if lab is HOME else lab.script, lang=lang)
                found.setdefault(lang, {})[lab.script] = [e.value for e in at.exception] + [e.value for e in at.error]
            except Exception as error:  # noqa: BLE001 - a page that does not finish is as wrong as an error box
                found.setdefault(lang, {})[lab.script] = [f"{type(error).__name__}: {error}"]
    return found


@pytest.fixture(scope="module")
def pages_at_each_device_count():
    """{D: {lang: {script: [what went wrong]}}}: each page, in English and in Chinese, on its defaults."""
    import jax

    from harness.processes import json_at_device_counts

    here = jax.device_count()
    others = [d for d in DEVICE_COUNTS if d != here]
    children = json_at_device_counts(["-m", "tests.children.pages_on_defaults"], others, timeout=900)
    return {here: pages_here(), **children}


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_every_page_opens_clean_on_its_defaults(pages_at_each_device_count, devices):
    for lang, pages in pages_at_each_device_count[devices].items():
        assert list(pages) == SCRIPTS, (devices, lang)
        broken = {script: problems for script, problems in pages.items() if problems}
        assert not broken, (devices, lang, broken)
