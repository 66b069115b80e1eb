"""Every page of the registry (the home page, then each lab) opened on its defaults, in English and in
中文, on this process's device count: prints one JSON line, {lang: {script: [what went wrong]}}, the
exceptions and error boxes shown, or the error of a page that did not finish.

Run by tests/system/test_every_page_every_device_count.py at 1, 2, 3, 5, 8 and 16 devices, one process
each (all the pages in one process: starting a process costs more than a page)."""

import json

from tests.children.apptest_setup import open_lab


def main() -> None:
    from labs.registry import HOME, LABS

    found = {}
    for lang in ("en", "zh"):
        for lab in [HOME, *LABS]:
            try:
                at = open_lab(None if lab is HOME else lab.script, lang=lang)
                found.setdefault(lang, {})[lab.script] = [e.value for e in at.exception] + [e.value for e in at.error]
            except Exception as error:  # noqa: BLE001 - a page that does not finish is as wrong as an error box
                found.setdefault(lang, {})[lab.script] = [f"{type(error).__name__}: {error}"]
    print(json.dumps(found))


if __name__ == "__main__":
    main()
