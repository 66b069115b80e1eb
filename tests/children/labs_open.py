"""Opens each lab named on the command line through a link made on a larger server (devices=4), on this
process's device count:

    python -m tests.children.labs_open basics collectives ...

Prints a line per lab, `<lab> ERRORS [exceptions and error boxes] D [the device inputs' values]
WARNED <whether a warning speaks of devices>`. Run by tests/system/test_one_device.py with one device."""

import sys

from tests.children.apptest_setup import open_lab

LINK_DEVICES = 4  # the D of a link made on a larger server


def main(scripts: list[str]) -> None:
    for script in scripts:
        at = open_lab(script, devices=LINK_DEVICES)
        errors = [e.value for e in at.exception] + [e.value for e in at.error]
        shown = [n.value for n in at.number_input if n.key.endswith(".devices")]
        print(script, "ERRORS", errors, "D", shown, "WARNED", any("devices" in w.value for w in at.warning))


if __name__ == "__main__":
    main(sys.argv[1:])
