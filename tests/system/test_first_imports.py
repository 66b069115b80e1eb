"""The first visitors of a fresh server import the heavy libraries from different pages at once.

Six threads of a fresh interpreter, released together, each enter MLflow, JAX or the charts at a
different module, as the training lab, the class page and the warm-up do. Without
`labs.ui.first_imports.import_libraries` first, such threads got a partially initialised `mlflow`
("has no attribute 'version'") or a `_DeadlockError` in 3 runs out of 3 here."""

import tomllib

from harness.processes import ROOT, run_python


def test_threads_importing_the_libraries_at_once_all_get_complete_modules():
    for _ in range(2):  # a fresh interpreter each time: the race is on the first import
        done = run_python(["-m", "tests.children.first_imports_race"], inherit=False, devices=2, timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip().startswith("complete: mlflow "), done.stdout[-3000:]


def test_a_rerun_does_not_walk_the_libraries_objects():
    """Streamlit's full collection after each script run walked the libraries' quarter of a million
    objects (0.13-0.25 s of held GIL per rerun, for every session in turn): they are frozen out of the
    collector once imported, and the server runs no collection of its own after each script."""
    done = run_python(["-m", "tests.children.frozen_libraries"], inherit=False, devices=2, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    frozen, tracked = map(int, done.stdout.split())
    assert frozen > 100_000 and tracked < frozen / 10, (frozen, tracked)
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
