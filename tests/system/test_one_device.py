"""A server started with one device: every lab that lets the user choose D still opens, with D = 1."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABS_WITH_D = ("basics", "collectives", "demo", "device_mapping", "jit_composition", "migration", "sharded_dp",
               "training")


def test_every_lab_with_a_device_count_opens_on_one_device():
    child = (
        "import sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from conftest import open_lab\n"
        f"for script in {LABS_WITH_D!r}:\n"
        "    at = open_lab(script, devices=4)\n"  # a link made on a larger server
        "    errors = [e.value for e in at.exception] + [e.value for e in at.error]\n"
        "    shown = [n.value for n in at.number_input if n.key.endswith('.devices')]\n"
        "    print(script, 'ERRORS', errors, 'D', shown, 'WARNED', any('devices' in w.value for w in at.warning))\n"
    )
    done = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": ROOT, "PMAP_LAB_DEVICES": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    for script in LABS_WITH_D:
        assert f"{script} ERRORS [] D [1] WARNED True" in done.stdout.splitlines(), done.stdout
