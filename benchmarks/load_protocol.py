"""A class on one server, timed at the server: sessions that speak Streamlit's own websocket protocol.

The browser benchmark (`benchmarks.load_sessions`) runs every student's Chromium on the server's
own cores, and drawing 30 pages takes most of that CPU. Here each session is a websocket client
that sends what the browser sends (open a lab, move its first slider, go to the next lab, press
*Train*) and waits for what the server sends back until the script has finished; it draws
nothing. An interaction's latency is the server's: what a student whose browser runs on their own
machine waits before the page has everything to draw, less the network.

    .venv/bin/python -m benchmarks.load_protocol                     # N = 1, 8, 16, 30, 2 of them training
    .venv/bin/python -m benchmarks.load_protocol --class-sizes 30 60 --trainers 4
    .venv/bin/python -m benchmarks.load_protocol --soak 200          # 200 sessions, one after another

Same steps, table, CSV and Altair chart as `benchmarks.load_sessions`, written to --out
(default benchmark-output/load-protocol/). Loopback only; every level stops at --max-minutes.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import sys
import time

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from benchmarks.load_sessions import (
    CONCEPT_LABS,
    OUT,
    URL_PATHS,
    class_arguments,
    class_arguments_refused,
    level_figures,
    report,
    server_cpu_s,
    soak_figures,
)
from tests import browser_support as bs

MAIN_AREA = 0  # the first index of an element's delta path: 0 main area, 1 sidebar
TRAIN_BUTTON_KEY = "training.train"  # the widget key (CSS: .st-key-training-train)


class ProtocolSession:
    """One Streamlit session over one websocket: what it was last sent, and its timings and errors."""

    def __init__(self, server, name: str):
        self.server, self.name = server, name
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.query = "lang=en"
        self.page_hash = ""  # the script hash of the page on screen
        self.pages: dict[str, str] = {}  # url path -> page script hash, from the navigation message
        self.widgets: dict[str, object] = {}  # the main area's widgets of the last run, by id, in order
        self.socket = None

    async def connect(self) -> None:
        url = self.server.url.replace("http://", "ws://") + "/_stcore/stream"
        # As the browser does: the first subprotocol is selected, the others carry tokens (none here).
        self.socket = await connect(url, subprotocols=["streamlit"], max_size=None,
                                    origin=self.server.url, open_timeout=60)

    async def rerun(self, page_name: str = "", widget_states=()) -> float:
        """Ask for a rerun (as a link, a page switch or a widget does) and wait until the script has
        finished; returns the seconds from the request to the last message of the run."""
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query
        state.page_script_hash = self.page_hash if not page_name else ""
        state.page_name = page_name
        state.widget_states.widgets.extend(widget_states)
        started = time.perf_counter()
        await self.socket.send(message.SerializeToString())
        self.widgets = {}
        while True:
            reply = ForwardMsg()
            reply.ParseFromString(await self.socket.recv())
            kind = reply.WhichOneof("type")
            if kind == "script_finished":
                elapsed = time.perf_counter() - started
                if reply.script_finished != ForwardMsg.FINISHED_SUCCESSFULLY:
                    continue  # a run ended early for the one that follows: wait for that one
                self.latencies.append(elapsed)
                return elapsed
            self.read(reply, kind)

    def read(self, reply: ForwardMsg, kind: str) -> None:
        if kind == "navigation":
            self.pages = {page.url_pathname: page.page_script_hash for page in reply.navigation.app_pages}
            self.page_hash = reply.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = reply.page_info_changed.query_string
        elif kind == "delta" and reply.delta.WhichOneof("type") == "new_element":
            element = reply.delta.new_element
            element_type = element.WhichOneof("type")
            if element_type == "exception":
                self.errors.append(f"{self.name}: {element.exception.type}: {element.exception.message[:200]}")
            elif reply.metadata.delta_path[:1] == [MAIN_AREA] and element_type in ("slider", "number_input", "button"):
                widget = getattr(element, element_type)
                self.widgets[widget.id] = widget

    async def open(self, script: str) -> float:
        """A link to the lab: the session's first run lands on it."""
        return await self.rerun(page_name=URL_PATHS[script])

    async def switch_to(self, script: str) -> float:
        """The sidebar's link to the lab: a rerun of the same session on that page."""
        self.page_hash = self.pages[URL_PATHS[script]]
        self.query = "lang=en"
        return await self.rerun()

    async def move_first_setting(self) -> float | None:
        """One step of the main area's first slider (else number box), as an arrow key does."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        for widget in self.widgets.values():
            kind = type(widget).__name__
            if kind not in ("Slider", "NumberInput"):
                continue
            value = (list(widget.value) if kind == "Slider" and widget.set_value else
                     list(widget.default) if kind == "Slider" else
                     [widget.value if widget.set_value else widget.default])[0]
            step = widget.step or 1
            top = widget.max if kind == "Slider" or widget.has_max else float("inf")
            value = value - step if value + step > top else value + step
            state = WidgetState(id=widget.id)
            if kind == "Slider":
                state.double_array_value.data.append(value)
            elif widget.data_type == widget.INT:
                state.int_value = int(value)
            else:
                state.double_value = value
            return await self.rerun(widget_states=[state])
        self.errors.append(f"{self.name}: nothing to interact with")
        return None

    async def press_train(self) -> float | None:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        button = next((w for w in self.widgets.values() if w.id.endswith(TRAIN_BUTTON_KEY)), None)
        if button is None:
            self.errors.append(f"{self.name}: no train button")
            return None
        return await self.rerun(widget_states=[WidgetState(id=button.id, trigger_value=True)])

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()


async def timed(session: ProtocolSession, step, timeout_s: float, what: str):
    try:
        return await asyncio.wait_for(step, timeout_s)
    except (TimeoutError, KeyError, OSError, ConnectionClosed) as error:
        session.errors.append(f"{session.name}: {what}: {type(error).__name__} {error}")
        return None


async def sample_rss(server, samples: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(bs.server_rss_bytes(server))
        await asyncio.sleep(0.1)


async def class_level(server, students: int, trainers: int, timeout_s: float) -> dict:
    """N students on the concept labs and `trainers` sessions training, all at once (as load_sessions)."""
    rss, stop = [bs.server_rss_bytes(server)], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(server, rss, stop))
    cpu_before, started = server_cpu_s(server), time.monotonic()
    trainees = [ProtocolSession(server, f"trainer{i}") for i in range(trainers)]
    students_ = [ProtocolSession(server, f"student{i}") for i in range(students)]
    everyone = trainees + students_

    async def each(sessions, make_step, what):
        return await asyncio.gather(*(timed(s, make_step(s), timeout_s, what) for s in sessions))

    try:
        await each(everyone, lambda s: s.connect(), "connect")
        await each(trainees, lambda s: s.open("training"), "training page")
        training = [asyncio.create_task(timed(s, s.press_train(), timeout_s * 5, "training")) for s in trainees]
        concept_start = {id(s): len(s.latencies) for s in students_}
        for step, script in enumerate(CONCEPT_LABS):
            go = ProtocolSession.open if step == 0 else ProtocolSession.switch_to
            await each(students_, lambda s, go=go, script=script: go(s, script), script)
            await each(students_, lambda s: s.move_first_setting(), f"{script} slider")
        training_s = [t for t in await asyncio.gather(*training) if t is not None]
    finally:
        await asyncio.gather(*(s.close() for s in everyone), return_exceptions=True)
        stop.set()
        await sampler
    concept = [x for s in students_ for x in s.latencies[concept_start[id(s)]:]]
    errors = [e for s in everyone for e in s.errors]
    return level_figures(students, trainers, concept, training_s, errors, rss, time.monotonic() - started,
                         server_cpu_s(server) - cpu_before)


async def soak(server, count: int, timeout_s: float) -> dict:
    """`count` sessions one after another, each on two concept labs (as load_sessions); RSS after each twentieth."""
    started, samples, errors = time.monotonic(), [], []
    for i in range(count):
        session = ProtocolSession(server, f"soak{i}")
        try:
            await timed(session, session.connect(), timeout_s, "connect")
            await timed(session, session.open(CONCEPT_LABS[0]), timeout_s, "first lab")
            await timed(session, session.move_first_setting(), timeout_s, "slider")
            await timed(session, session.switch_to(CONCEPT_LABS[1]), timeout_s, "second lab")
        finally:
            await session.close()
        errors += session.errors
        if (i + 1) % 20 == 0 or i + 1 == count:
            samples.append({"sessions_done": i + 1, "rss_mib": bs.server_rss_bytes(server) / 2**20})
    return soak_figures(count, samples, errors, time.monotonic() - started)


async def run(server, class_sizes: list[int], trainers: int, soak_count: int, timeout_s: float):
    # The server has served one page before anyone is timed, as in load_sessions.
    home = ProtocolSession(server, "home")
    await home.connect()
    await home.rerun()
    await home.close()
    if soak_count:
        return [], await soak(server, soak_count, timeout_s)
    return [await class_level(server, n, trainers, timeout_s) for n in sorted(class_sizes)], None


def main(argv: list[str] | None = None) -> int:
    parser = class_arguments(__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT.parent / "load-protocol")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if class_arguments_refused(args):
        return 2
    load = os.getloadavg()
    server = bs.start_server()
    try:
        levels, soaked = asyncio.run(run(server, args.class_sizes, args.trainers, args.soak, args.timeout))
    finally:
        bs.stop_server(server)
    return report(args.out, levels, soaked, load, args.json)


if __name__ == "__main__":
    sys.exit(main())
