"""A class of 30 pressing check at the same moment, over Streamlit's own protocol against a real
`streamlit run` (benchmarks.load_protocol --predict): every check says it was recorded, and every
prediction reads back from the server's store once, as a first attempt. (Before the writes took turns,
half of them waited out the sqlite store's connection pool and were lost.) No time is asserted: the
benchmark prints the latencies."""

from __future__ import annotations

import asyncio
import concurrent.futures

from harness import browser as bs
from harness import protocol

STUDENTS = 30


def test_thirty_predictions_at_once_are_each_recorded_once():
    server = bs.start_server()
    try:
        # In a thread of its own: a browser test earlier in this worker may have left Playwright's event
        # loop running in the main thread, where asyncio.run refuses to start.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            figures = pool.submit(asyncio.run, protocol.predicting_class(
                server, STUDENTS, timeout_s=240, code="at-once")).result()
        store = f"sqlite:///{server.log_path.parent / 'mlflow.db'}"
        read = protocol.read_back(store, "at-once", STUDENTS)
    finally:
        bs.stop_server(server)
    assert figures["errors"] == [] and figures["checks"] == STUDENTS
    assert read == {"predictions_read_back": STUDENTS, "students_read_back": STUDENTS, "first_attempts": STUDENTS,
                    "each_once": True}
