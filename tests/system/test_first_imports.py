"""The first visitors of a fresh server import the heavy libraries from different pages at once.

Six threads of a fresh interpreter, released together, each enter MLflow, JAX or the charts at a
different module, as the training lab, the class page and the warm-up do. Without
`labs.ui.first_imports.import_libraries` first, such threads got a partially initialised `mlflow`
("has no attribute 'version'") or a `_DeadlockError` in 3 runs out of 3 here."""

import tomllib

from harness.processes import ROOT, run_python

CHILD = """
import importlib, sys, threading
from labs.ui.first_imports import import_libraries

entries = ["mlflow.models", "mlflow.tracking", "pmap_core.tracking.mlflow_backend", "labs.ui.charts", "jax.numpy",
           "mlflow"]
barrier, errors = threading.Barrier(len(entries)), []

def visit(name):
    barrier.wait()
    try:
        import_libraries()
        module = importlib.import_module(name)
        assert not getattr(getattr(module, "__spec__", None), "_initializing", False), name
    except BaseException as error:
        errors.append(f"{name}: {type(error).__name__}: {error}")

threads = [threading.Thread(target=visit, args=(name,)) for name in entries]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
import mlflow
print(errors or f"complete: mlflow {mlflow.version.VERSION}")
"""


def test_threads_importing_the_libraries_at_once_all_get_complete_modules():
    for _ in range(2):  # a fresh interpreter each time: the race is on the first import
        done = run_python(CHILD, inherit=False, devices=2, timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip().startswith("complete: mlflow "), done.stdout[-3000:]


def test_a_rerun_does_not_walk_the_libraries_objects():
    """Streamlit's full collection after each script run walked the libraries' quarter of a million
    objects (0.13-0.25 s of held GIL per rerun, for every session in turn): they are frozen out of the
    collector once imported, and the server runs no collection of its own after each script."""
    child = ("import gc; from labs.ui.first_imports import import_libraries; import_libraries(); "
             "print(gc.get_freeze_count(), len(gc.get_objects()))")
    done = run_python(child, inherit=False, devices=2, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    frozen, tracked = map(int, done.stdout.split())
    assert frozen > 100_000 and tracked < frozen / 10, (frozen, tracked)
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
