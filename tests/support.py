"""Small helpers shared by the tests, the browser harness and the benchmarks.

Nothing here has side effects on import, so the benchmarks can use it outside pytest
(as `tests.support`, run from the repository root).
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import shutil
import socket
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Ignored by git, kept between runs, and pytest's own cache folder.
CACHE = ROOT / ".pytest_cache" / "pmap-lab"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def empty_tracking_store() -> pathlib.Path:
    """An MLflow sqlite store with its tables and nothing else, built once per MLflow version.

    Creating a store runs MLflow's schema migrations, which takes seconds; copying the built
    file takes none, so every store the tests make is a copy of this one.
    """
    template = CACHE / f"mlflow-empty-{importlib.metadata.version('mlflow')}.db"
    if not template.exists():
        from mlflow.tracking import MlflowClient

        template.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=template.parent) as folder:
            built = pathlib.Path(folder) / "empty.db"
            MlflowClient(f"sqlite:///{built}").search_experiments()
            os.replace(built, template)  # atomic: a concurrent run sees no half-built store
    return template


def new_tracking_store(path: str | os.PathLike) -> str:
    """A fresh, empty MLflow sqlite store at `path`; returns its tracking URI."""
    shutil.copyfile(empty_tracking_store(), path)
    return f"sqlite:///{path}"
