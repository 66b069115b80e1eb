"""Six threads of this fresh interpreter, released together, each enter MLflow, JAX or the charts at a
different module after labs.ui.first_imports.import_libraries, as a fresh server's first visitors do.

Prints `complete: mlflow <version>` when every thread got complete modules, else the list of what went
wrong. Run by tests/system/test_first_imports.py, in a fresh interpreter each time: the race is on the
first import."""

import importlib
import threading

from labs.ui.first_imports import import_libraries

ENTRIES = ["mlflow.models", "mlflow.tracking", "pmap_core.tracking.mlflow_backend", "labs.ui.charts", "jax.numpy",
           "mlflow"]


def main() -> None:
    barrier, errors = threading.Barrier(len(ENTRIES)), []

    def visit(name: str) -> None:
        barrier.wait()
        try:
            import_libraries()
            module = importlib.import_module(name)
            assert not getattr(getattr(module, "__spec__", None), "_initializing", False), name
        except BaseException as error:  # noqa: BLE001 - each thread's failure is what this child reports
            errors.append(f"{name}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=visit, args=(name,)) for name in ENTRIES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    import mlflow

    print(errors or f"complete: mlflow {mlflow.version.VERSION}")


if __name__ == "__main__":
    main()
