"""pmap-lab's core: data parallelism with jax.pmap, free of any UI.

Importing the package fixes the device runtime (see `runtime`) before any JAX
operation, so every entry point — the app, the CLI, the tests — sees the same
devices and is safe from the collective deadlock described there.
"""

import itertools
import sys

from pmap_core.runtime import RuntimeInfo, configure_compilation_cache, configure_runtime, describe_runtime
from pmap_core.validation import LabInputError


def _reports_runtime_errors() -> bool:
    """The app (under Streamlit) and `python -m pmap_core` call configure_runtime() again themselves,
    where a bad PMAP_LAB_DEVICES becomes one line (an error box, exit status 2), not a traceback."""
    argv = list(getattr(sys, "orig_argv", []))
    as_cli = ("-m", "pmap_core") in itertools.pairwise(argv)
    return as_cli or "streamlit" in sys.modules


try:
    configure_runtime()
except ValueError:
    if not _reports_runtime_errors():  # anyone else would run on devices nobody asked for
        raise

__all__ = ["LabInputError", "RuntimeInfo", "configure_compilation_cache", "configure_runtime", "describe_runtime"]
