"""Where the app server keeps JAX's compilation cache (pmap_core.runtime.compilation_cache_dir)."""

import os

import pytest

from pmap_core.runtime import compilation_cache_dir


@pytest.mark.parametrize(("uri", "environ", "expected"), [
    ("sqlite:////srv/pmap-lab/mlflow.db", {}, "/srv/pmap-lab/.jax-cache"),
    ("sqlite:////srv/pmap-lab/mlflow.db?timeout=5", {}, "/srv/pmap-lab/.jax-cache"),
    ("sqlite:///mlflow.db", {}, os.path.join(os.getcwd(), ".jax-cache")),
    ("http://127.0.0.1:5000", {}, os.path.join(os.getcwd(), ".jax-cache")),  # a server's store: the working folder
    ("postgresql://lab@db/mlflow", {}, os.path.join(os.getcwd(), ".jax-cache")),
    ("sqlite:////srv/pmap-lab/mlflow.db", {"PMAP_LAB_COMPILATION_CACHE": "/var/cache/pmap-lab"}, "/var/cache/pmap-lab"),
    ("sqlite:////srv/pmap-lab/mlflow.db", {"PMAP_LAB_COMPILATION_CACHE": " OFF "}, None),
    ("sqlite:////srv/pmap-lab/mlflow.db", {"PMAP_LAB_COMPILATION_CACHE": "  "}, "/srv/pmap-lab/.jax-cache"),
])
def test_compilation_cache_dir(uri, environ, expected):
    assert compilation_cache_dir(uri, environ) == expected
