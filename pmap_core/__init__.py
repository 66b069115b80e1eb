"""pmap-lab's core: data parallelism with jax.pmap, free of any UI.

Importing the package fixes the device runtime (see `runtime`) before any JAX
operation, so every entry point — the app, the CLI, the tests — sees the same
devices and is safe from the collective deadlock described there.
"""

import contextlib

from pmap_core.runtime import RuntimeInfo, configure_runtime, describe_runtime
from pmap_core.validation import LabInputError

# A bad PMAP_LAB_DEVICES is not raised at import: the CLI and the app call configure_runtime()
# again, where the error becomes one line (exit status 2, an error box) instead of a traceback.
with contextlib.suppress(ValueError):
    configure_runtime()

__all__ = ["LabInputError", "RuntimeInfo", "configure_runtime", "describe_runtime"]
