"""The heavy libraries, imported the first time by one thread while the others wait.

Streamlit runs each session's script in a thread of its own, so the first visitors of a fresh
server import JAX, MLflow, Altair and pandas at the same moment, each from the page it opened.
MLflow and JAX import themselves in cycles (`mlflow` → `mlflow.models` → `mlflow.version`); two
threads entering such a cycle at different modules make Python hand one of them a partially
initialised module ("partially initialized module 'mlflow' has no attribute 'version'") or raise
its `_DeadlockError`: an error page for that visitor. Importing them all under one lock first,
before any page runs, leaves every later import a lookup in `sys.modules`.

Then the objects these imports made (a quarter of a million: modules, functions, classes) are
frozen out of the garbage collector's view: a full collection (Python's own now and then, and
Streamlit's after every script run where `runner.postScriptGC` is on) walked them in 0.13-0.25 s
of held GIL, which every session of the server waited for; they live as long as the process anyway.
"""

import gc
import importlib
import threading

LIBRARIES = ("jax", "jax.numpy", "pandas", "altair", "mlflow", "mlflow.tracking")

_lock = threading.Lock()
_done = threading.Event()


def import_libraries() -> None:
    """Import LIBRARIES once per process; a thread that comes while another imports them waits."""
    if _done.is_set():
        return
    with _lock:
        if not _done.is_set():
            for name in LIBRARIES:
                importlib.import_module(name)
            gc.freeze()
            _done.set()
