"""Input checks shared by every entry point, and the limits of a shared deployment.

Every check raises `LabInputError`: a `ValueError` with a stable `code` and the
values involved, so the app can say it in the reader's language while the CLI
prints the English `str()`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

# Limits protect one server shared by a class. They are generous for learning
# and small enough that no single request can starve the others.
MAX_BATCH = 65_536
MAX_FEATURES = 4_096
MAX_STEPS = 5_000
MAX_ELEMENTS = 16_777_216  # 64 MiB of float32 in one array
MAX_SEED = 2**31 - 1  # what every random generator here accepts


class LabInputError(ValueError):
    """An input the lab cannot run. `code` names the problem; `params` hold its values."""

    def __init__(self, code: str, message: str, **params: Any):
        self.code = code
        self.params = params
        super().__init__(message.format(**params))


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """`value` as an int within [low, high], or a LabInputError that says why not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
        isinstance(value, float) and not (math.isfinite(value) and value.is_integer())
    ):
        raise LabInputError("not_whole_number", "{name} must be a whole number, got {value!r}", name=name, value=value)
    value = int(value)
    if value < low or value > high:
        raise LabInputError(
            "out_of_range", "{name} must be between {low} and {high}, got {value}",
            name=name, value=value, low=low, high=high,
        )
    return value


def check_float(name: str, value: Any, low: float, high: float) -> float:
    """`value` as a finite float within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LabInputError("not_a_number", "{name} must be a finite number, got {value!r}", name=name, value=value)
    if value < low or value > high:
        raise LabInputError(
            "out_of_range", "{name} must be between {low} and {high}, got {value}",
            name=name, value=value, low=low, high=high,
        )
    return float(value)


def check_seed(seed: Any) -> int:
    """A seed for NumPy and JAX random generators: 0 <= seed <= MAX_SEED."""
    return check_int("seed", seed, 0, MAX_SEED)


def check_devices(devices: Any, available: int | None = None) -> int:
    """A device count the runtime can serve: 1 <= devices <= available."""
    if available is None:
        import jax

        available = jax.device_count()
    if isinstance(devices, int) and not isinstance(devices, bool) and devices > available:
        raise LabInputError(
            "too_many_devices", "asked for {devices} devices but only {available} are available",
            devices=devices, available=available,
        )
    return check_int("devices", devices, 1, available)


def check_elements(name: str, count: int, limit: int = MAX_ELEMENTS) -> int:
    """Refuse arrays past the memory budget before anything is allocated."""
    if count > limit:
        raise LabInputError(
            "too_large", "{name} would hold {count:,} values, over the limit of {limit:,}",
            name=name, count=count, limit=limit,
        )
    return count


# The teacher key (docs/DEPLOY.md, "Teacher controls"): a short key is guessed, so none shorter is taken.
TEACHER_KEY_ENV = "PMAP_LAB_TEACHER_KEY"
TEACHER_KEY_MIN_CHARS, TEACHER_KEY_MAX_CHARS = 20, 200


def check_teacher_key(key: str) -> str:
    """The teacher key as set (surrounding whitespace stripped, as a pasted key often has), "" when none
    is set; a LabInputError when it is shorter than TEACHER_KEY_MIN_CHARS or longer than TEACHER_KEY_MAX_CHARS."""
    key = key.strip()
    if key and not TEACHER_KEY_MIN_CHARS <= len(key) <= TEACHER_KEY_MAX_CHARS:
        raise LabInputError(
            "teacher_key_length", "{env} has {length} characters; a teacher key has {low} to {high}",
            env=TEACHER_KEY_ENV, length=len(key), low=TEACHER_KEY_MIN_CHARS, high=TEACHER_KEY_MAX_CHARS,
        )
    return key


class Backoff:
    """Failed tries per client (a session, an address): the first `free` cost nothing, then each
    further one makes the client wait base_s·2^k seconds (k = failures past `free`, at most `most_s`)
    before its next try counts. A client quiet for `forget_s` starts again; at most `clients` are
    remembered (the oldest are forgotten first). Safe to share between threads."""

    def __init__(self, free: int, base_s: float = 2.0, most_s: float = 300.0, forget_s: float = 3600.0,
                 clients: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self.free, self.base_s, self.most_s, self.forget_s, self.clients = free, base_s, most_s, forget_s, clients
        self.clock = clock
        self._failed: dict[Hashable, tuple[int, float]] = {}  # client -> (failures, time of the last)
        self._lock = threading.Lock()

    def _delay(self, failures: int) -> float:
        return 0.0 if failures < self.free else min(self.most_s, self.base_s * 2 ** min(failures - self.free, 30))

    def wait_s(self, client: Hashable) -> float:
        """Seconds before `client` may try again (0: now)."""
        with self._lock:
            failures, last = self._failed.get(client, (0, 0.0))
            if failures and self.clock() - last >= self.forget_s:
                self._failed.pop(client, None)
                return 0.0
            return max(0.0, last + self._delay(failures) - self.clock()) if failures else 0.0

    def failed(self, client: Hashable) -> int:
        """Count a failed try of `client`; returns its failures so far."""
        with self._lock:
            failures = self._failed.pop(client, (0, 0.0))[0] + 1
            self._failed[client] = (failures, self.clock())  # newest last: the oldest go first
            while len(self._failed) > self.clients:
                self._failed.pop(next(iter(self._failed)))
            return failures

    def succeeded(self, client: Hashable) -> None:
        with self._lock:
            self._failed.pop(client, None)


class Budget:
    """A token bucket: at most `burst` actions at once, then one every `every_s` seconds."""

    def __init__(self, burst: int, every_s: float, clock: Callable[[], float] = time.monotonic):
        self.burst, self.every_s, self.clock = burst, every_s, clock
        self._tokens, self._at = float(burst), clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Whether one more action fits now (it is counted when it does)."""
        with self._lock:
            now = self.clock()
            refill = (now - self._at) / self.every_s if self.every_s > 0 else 0.0
            self._tokens, self._at = min(float(self.burst), self._tokens + refill), now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True
