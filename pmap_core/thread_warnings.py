"""The warnings one call raises, captured in its own thread only.

`warnings.catch_warnings` swaps process-wide state: in a server where several sessions run
at once it records the other sessions' warnings too, and changes which warnings they see.
Here each thread that captures gets every warning it raises itself, and only those; other
threads' warnings go where they went before.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator

_capturing = threading.local()  # .caught: the list of the capture running in this thread
_setup_lock = threading.Lock()


class _InCapturingThread:
    """A warnings-filter message pattern that matches only in a thread that is capturing."""

    def match(self, text: str) -> bool:
        return getattr(_capturing, "caught", None) is not None


_ALWAYS_WHILE_CAPTURING = ("always", _InCapturingThread(), Warning, None, 0)


def _show_or_capture(message, category, filename, lineno, file=None, line=None):
    caught = getattr(_capturing, "caught", None)
    if caught is None:
        return _show_or_capture.passed_on(message, category, filename, lineno, file, line)
    caught.append(warnings.WarningMessage(message, category, filename, lineno, file, line))


@contextlib.contextmanager
def warnings_of_this_thread() -> Iterator[list[warnings.WarningMessage]]:
    """Every warning raised in this thread while inside, and no other thread's."""
    with _setup_lock:
        if warnings.showwarning is not _show_or_capture:
            _show_or_capture.passed_on = warnings.showwarning
            warnings.showwarning = _show_or_capture
        if not warnings.filters or warnings.filters[0] is not _ALWAYS_WHILE_CAPTURING:
            with contextlib.suppress(ValueError):
                warnings.filters.remove(_ALWAYS_WHILE_CAPTURING)
            warnings.filters.insert(0, _ALWAYS_WHILE_CAPTURING)
        # Forget which warnings were shown once already (as catch_warnings does on entry).
        warnings._filters_mutated()
    outer, _capturing.caught = getattr(_capturing, "caught", None), []
    try:
        yield _capturing.caught
    finally:
        if outer is not None:
            outer.extend(_capturing.caught)
        _capturing.caught = outer
