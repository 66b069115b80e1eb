"""A group of the Multi-process page's processes, streamed into the page: the last lines a visitor sees (the lab's
own lines as they come, a run of native lines counted as one), the group's progress as its processes join, and each
process's JSON result read from its output. The timeouts every group of the page runs under."""

import json

from labs.ui.i18n import texts
from pmap_core.train import launch

T = texts("multiprocess")
GROUP_TIMEOUT_S = 240
HEARTBEAT_TIMEOUT_S = 15
TAIL = 14
LOGGED_LINES = 400  # of a failed run's output, the last lines the server log keeps


class Tail:
    """The last lines a visitor sees: the lab's own lines as they come, and each run of a process's
    other lines (native logs, crash reports with stack addresses) as one line that counts them; the
    whole output is kept for the server log."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str | None, int]] = []  # (who, the lab's line or None, lines held back)
        self.everything: list[str] = []

    def add(self, line: launch.Line) -> None:
        who = "launcher" if line.process < 0 else str(line.process)
        self.everything = [*self.everything[-LOGGED_LINES:], f"[{who}] {line.text}"]
        last = self.entries[-1] if self.entries else None
        if line.from_lab:
            self.entries.append((who, line.text, 0))
        elif last is not None and last[0] == who and last[1] is None:
            self.entries[-1] = (who, None, last[2] + 1)
        else:
            self.entries.append((who, None, 1))
        self.entries = self.entries[-TAIL:]


def tail_text(entries: list[tuple[str, str | None, int]]) -> str:
    return "\n".join(f"[{who}] {text if text is not None else T('tail.held_back', count=count)}"
                     for who, text, count in entries)


def stream_group(group: launch.ProcessGroup, status: object, on_line: object = None) -> Tail:
    """Show a group's lines in `status` as they come (and how many processes have joined, with the time); call
    `on_line(line)` for each line; return what was shown."""
    bar, timer, tail, shown = status.progress(0.0), status.empty(), status.empty(), Tail()
    joined = 0
    for line in group.lines():
        if line is not None:
            shown.add(line)
            if line.process >= 0 and line.text.startswith(launch.JOINED):
                joined += 1
            if on_line is not None:
                on_line(line)
            tail.code(tail_text(shown.entries), language=None)
        bar.progress(joined / (group.processes + 1), text=T("progress.joined", joined=joined,
                                                             processes=group.processes))
        timer.caption(T("status.elapsed.bench", elapsed=group.elapsed(), limit=group.timeout_s))
    return shown


def ui_json(text: str) -> dict | None:
    lines = text.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
