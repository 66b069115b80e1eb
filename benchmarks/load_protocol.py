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
    .venv/bin/python -m benchmarks.load_protocol --predict 30        # 30 students predict on one step at once
    .venv/bin/python -m benchmarks.load_protocol --predict 30 --mlflow-server   # … on a real `mlflow server`

With --predict, each session opens the Worksheet on one step, gives a name and the class code and types
its prediction, then all press *Run the code and check* at the same moment; the figures are the checks'
latency at the server (p50, p95, max; and p95 of the reruns that typed the predictions) and errors, and
every prediction is read back from the server's store: each once, as a first attempt (exit status 1
otherwise, or when p95 is over --p95-limit seconds).

Same steps, table, CSV and Altair chart as `benchmarks.load_sessions`, written to --out
(default benchmark-output/load-protocol/). Loopback only; every level stops at --max-minutes.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import sys
import time
import uuid

from benchmarks.load_sessions import (
    CONCEPT_LABS,
    OUT,
    class_arguments,
    class_arguments_refused,
    level_figures,
    report,
    server_cpu_s,
    soak_figures,
)
from harness import browser as bs
from harness.protocol import ProtocolSession, predicting_class, read_back, sample_rss, timed


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


def predict_main(students: int, timeout_s: float, p95_limit: float, out: pathlib.Path, as_json: bool,
                 mlflow_server: bool = False) -> int:
    """The predicting class on a sqlite store, or (`mlflow_server`) on a real `mlflow server` on 127.0.0.1."""
    import tempfile

    from harness.processes import MlflowServer

    load_before, code = os.getloadavg(), f"load-{uuid.uuid4().hex[:8]}"
    tracking = MlflowServer(pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-mlflow-"))) if mlflow_server else None
    env = {"MLFLOW_TRACKING_URI": tracking.uri, "MLFLOW_HTTP_REQUEST_TIMEOUT": "60"} if tracking else {}
    try:
        if tracking:
            tracking.wait_until_healthy()
        server = bs.start_server(env)
    except BaseException:
        if tracking:
            tracking.stop()
        raise
    try:
        async def go():
            home = ProtocolSession(server, "home")  # the server has served one page before anyone is timed
            await home.connect()
            await home.rerun()
            await home.close()
            return await predicting_class(server, students, timeout_s, code)

        figures = asyncio.run(go())
        store = tracking.uri if tracking else f"sqlite:///{server.log_path.parent / 'mlflow.db'}"
        figures.update(read_back(store, code, students))
    finally:
        bs.stop_server(server)
        if tracking:
            tracking.stop()
    figures.update(store="mlflow server" if tracking else "sqlite", load_before=load_before,
                   load_after=os.getloadavg(), cpu_count=os.cpu_count())
    out.mkdir(parents=True, exist_ok=True)
    (out / "predict.json").write_text(json.dumps(figures, indent=2, default=str))
    if as_json:
        print(json.dumps(figures, default=str))
    else:
        for key, value in figures.items():
            print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    ok = not figures["errors"] and figures["each_once"] and (figures["p95_s"] or 1e9) <= p95_limit
    return 0 if ok else 1


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
    parser.add_argument("--predict", type=int, default=0, metavar="N",
                        help="N students predict on one worksheet step at once (1..64) instead of the class levels")
    parser.add_argument("--p95-limit", type=float, default=3.0, help="with --predict: exit 1 when p95 is over this")
    parser.add_argument("--mlflow-server", action="store_true",
                        help="with --predict: the class's store is a real `mlflow server` on 127.0.0.1, not sqlite")
    args = parser.parse_args(argv)
    if args.predict:
        if not 1 <= args.predict <= 64:
            print("--predict takes 1..64 students", file=sys.stderr)
            return 2
        return predict_main(args.predict, args.timeout, args.p95_limit, args.out, args.json, args.mlflow_server)
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
