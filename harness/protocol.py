"""A Streamlit session without a browser: a websocket client that speaks Streamlit's own protocol.

It sends what a browser sends (open a lab, move its first slider, go to the next lab, press *Train*,
give a prediction and check it) and waits for what the server sends back until the script has finished;
it draws nothing. The load benchmarks (`benchmarks.load_protocol`, `benchmarks.bench_restart`) time it at
the server; the tests use it where a class of sessions must act at once.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from harness import browser as bs
from labs.registry import HOME, LABS

URL_PATHS = {lab.script: lab.url_path for lab in [HOME, *LABS]}
MAIN_AREA = 0  # the first index of an element's delta path: 0 main area, 1 sidebar
TRAIN_BUTTON_KEY = "training.train"  # the widget key (CSS: .st-key-training-train)
# The step a predicting class checks, and the keys of the widgets a student uses on it.
PREDICT_QUERY = "sheet=1_shards&step=pad_per_device&lang=en"
PREDICT_KEYS = {"name": "worksheet.student", "code": "worksheet.class_code",
                "guess": "worksheet.1_shards.pad_per_device.guess", "check": "worksheet.check"}
RECORDED_TEXT = "Recorded for your class."  # what the Worksheet says once a check is recorded
FAILED_TEXT = "could not be recorded"  # ... and when the store failed, before what the store said


def said_after(texts: list[str], marker: str) -> str:
    """The text that follows the first one holding `marker` (what the store said), or all of them."""
    at = next((i for i, text in enumerate(texts) if marker in text), None)
    return texts[at + 1] if at is not None and at + 1 < len(texts) else " | ".join(texts)


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
        self.texts: list[str] = []  # the texts (markdown, captions, alerts, code) of the last run
        self.states: list = []  # the widget states a predicting session has set, re-sent with each rerun
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
        self.widgets, self.texts = {}, []
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
            elif element_type in ("markdown", "alert"):
                self.texts.append(getattr(element, element_type).body)
            elif element_type == "code":  # what a failing store said, as the page shows it
                self.texts.append(element.code.code_text)
            elif reply.metadata.delta_path[:1] == [MAIN_AREA] and element_type in (
                    "slider", "number_input", "button", "text_input"):
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

    def widget_id(self, key: str) -> str:
        """The id of the main area's widget with this key (its id ends with the key)."""
        found = next((wid for wid in self.widgets if wid.endswith(key)), None)
        if found is None:
            raise KeyError(f"no widget {key!r}")
        return found

    async def enter(self, name: str, code: str, guess: float) -> float:
        """On the Worksheet's step, as a browser sends it: a name and the class code (one rerun), then the
        guess (a rerun of its own, when the box loses focus); the latter's latency."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        self.states = [WidgetState(id=self.widget_id(PREDICT_KEYS["name"]), string_value=name),
                       WidgetState(id=self.widget_id(PREDICT_KEYS["code"]), string_value=code)]
        await self.rerun(widget_states=self.states)
        self.states.append(WidgetState(id=self.widget_id(PREDICT_KEYS["guess"]), double_value=guess))
        return await self.rerun(widget_states=self.states)

    async def check(self) -> float:
        """A press of *Run the code and check*; its latency."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        press = WidgetState(id=self.widget_id(PREDICT_KEYS["check"]), trigger_value=True)
        return await self.rerun(widget_states=[*self.states, press])

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


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


async def predicting_class(server, students: int, timeout_s: float, code: str) -> dict:
    """`students` sessions on one Worksheet step, each with a name and the class code; then all press
    check at the same moment. The checks' latencies and errors, and whether each said it was recorded."""
    sessions = [ProtocolSession(server, f"student{i}") for i in range(students)]
    rss, stop = [bs.server_rss_bytes(server)], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(server, rss, stop))
    started = time.monotonic()

    async def each(make_step, what):
        return await asyncio.gather(*(timed(s, make_step(s), timeout_s, what) for s in sessions))

    try:
        await each(lambda s: s.connect(), "connect")
        for s in sessions:
            s.query = PREDICT_QUERY
        await each(lambda s: s.open("worksheet"), "worksheet")
        # Two of every three guess 3 (the answer), the others 2: the class's spread, as a teacher would see it.
        typed = await asyncio.gather(*(
            timed(s, s.enter(f"student {i}", code, 3.0 if i % 3 else 2.0), timeout_s, "prediction typed")
            for i, s in enumerate(sessions)))
        latencies = await each(lambda s: s.check(), "check")  # the teacher says "now": all press at once
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        stop.set()
        await sampler
    checks = [t for t in latencies if t is not None]
    errors = [e for s in sessions for e in s.errors]
    errors += [f"{s.name}: not recorded: {said_after(s.texts, FAILED_TEXT)[:300]}"
               for s, t in zip(sessions, latencies, strict=True)
               if t is not None and not any(RECORDED_TEXT in text for text in s.texts)]
    typed = [t for t in typed if t is not None]
    return {"students": students, "checks": len(checks), "p50_s": percentile(checks, 50),
            "p95_s": percentile(checks, 95), "max_s": max(checks, default=None),
            "typed_p95_s": percentile(typed, 95), "errors": errors,
            "peak_rss_mib": max(rss) / 2**20, "wall_s": time.monotonic() - started}


def read_back(uri: str, code: str, students: int) -> dict:
    """Every prediction of the class as the store holds it: how many, how many students, how many first."""
    from pmap_core.tracking import classroom

    recorded = classroom.read_class(code, uri).predictions
    first, named = int(recorded["first"].sum()), int(recorded["student"].nunique())
    each_once = len(recorded) == students == first == named and bool((recorded["attempt"] == 1).all())
    return {"predictions_read_back": len(recorded), "students_read_back": named, "first_attempts": first,
            "each_once": each_once}
