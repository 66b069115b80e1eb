"""What pmap_core.runtime.configure_compilation_cache decides in a fresh process tracking into STORE:

    python -m tests.children.compilation_cache_settings STORE [--without-filelock]

Prints one JSON line: {"folder": the folder it chose (null: off), "jax": JAX's cache folder setting,
"min_compile_s": JAX's least compile time cached}. With --without-filelock, the `filelock` package
cannot be imported, as where it is not installed. Run by tests/system/test_compilation_cache.py."""

import argparse
import json
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", help="the tracking URI, e.g. sqlite:///folder/mlflow.db")
    parser.add_argument("--without-filelock", action="store_true", help="as if filelock were not installed")
    args = parser.parse_args()
    if args.without_filelock:
        sys.modules["filelock"] = None  # before JAX looks for it
    import jax

    from pmap_core.runtime import configure_compilation_cache

    folder = configure_compilation_cache(args.store)
    print(json.dumps({"folder": folder, "jax": jax.config.jax_compilation_cache_dir,
                      "min_compile_s": jax.config.jax_persistent_cache_min_compile_time_secs}))


if __name__ == "__main__":
    main()
