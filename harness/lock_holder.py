"""Holds a write lock on a sqlite file, so that every other reader and writer waits, for a while.

    python -m harness.lock_holder DB SECONDS

Prints `locked` once it holds the lock, then keeps it for SECONDS. Started by
harness.processes.hold_lock, for the tests of a store that stays locked."""

import sqlite3
import sys
import time


def main(db_path: str, seconds: float) -> None:
    connection = sqlite3.connect(db_path, isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(seconds)
    connection.execute("COMMIT")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
