"""A bound on how long the app server may take to exit after SIGTERM (a restart, a redeploy).

Streamlit serves with uvicorn and gives it no `timeout_graceful_shutdown`, so uvicorn's shutdown
waits for every open connection to finish its response, without limit. One client that stops
reading (a laptop lid closed mid-download, a stalled network) then keeps the process alive until
the platform's SIGKILL, which ends no MLflow run: a training in progress would stay RUNNING.
"""

from __future__ import annotations

import functools
import threading

import uvicorn

# Long enough for a response already on its way, short of any platform's grace period (30 s and more).
GRACEFUL_SHUTDOWN_S = 5.0

_lock = threading.Lock()


def bound_graceful_shutdown(seconds: float = GRACEFUL_SHUTDOWN_S) -> None:
    """From now on, a uvicorn server of this process that is shutting down waits at most `seconds`
    for its connections, then cancels what is left (uvicorn's own timeout, set where none was).

    The server object already runs when a script can first act, so the bound goes on the class:
    uvicorn reads it when the shutdown starts. Idempotent; any session's script may call it."""
    with _lock:
        if getattr(uvicorn.Server.shutdown, "bounded_s", None) is not None:
            return
        unbounded = uvicorn.Server.shutdown

        @functools.wraps(unbounded)
        async def shutdown(self: uvicorn.Server, *args, **kwargs) -> None:
            if self.config.timeout_graceful_shutdown is None:
                self.config.timeout_graceful_shutdown = seconds
            await unbounded(self, *args, **kwargs)

        shutdown.bounded_s = seconds
        uvicorn.Server.shutdown = shutdown
