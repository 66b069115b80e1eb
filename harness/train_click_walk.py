"""The path of one Train click's settings through the core, as a reader following them would walk it.

Runs what the training page runs on a click (validate the settings, open a tracker and its callback,
train) and records, each time a setting is read (a field or property of `TrainConfig`, of the
`RunPlan` derived from it, or of a program's `ProgramSpec`), the core file that reads it. Consecutive
reads in one file are one stop. Printed: the walk, how often each file is entered, and how many
times the walk comes back to a file it had left.

    python -m benchmarks.train_click_walk [--impl jit --strategy zero3 --optimizer adam]
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import sys
import tempfile
from collections.abc import Callable, Iterator

import pmap_core  # first: it fixes the device runtime
from harness.walks import print_walk
from pmap_core.tracking import check_tracking_uri
from pmap_core.tracking.callback import TrackingCallback
from pmap_core.tracking.mlflow_backend import Tracker
from pmap_core.train import loop
from pmap_core.train.config import RunPlan, TrainConfig
from pmap_core.train.plan import validate
from pmap_core.train.program import ProgramSpec

CORE = pathlib.Path(pmap_core.__file__).resolve().parent
SETTINGS = (TrainConfig, RunPlan, ProgramSpec)


@contextlib.contextmanager
def recorded_reads(stops: list[str]) -> Iterator[None]:
    """While inside, every read of a setting by core code appends the reading file to `stops`
    (unless it is the last one there)."""
    originals = {cls: cls.__getattribute__ for cls in SETTINGS}

    def recording(original: Callable) -> Callable:
        def read(self, name):
            if not name.startswith("__"):
                path = pathlib.Path(sys._getframe(1).f_code.co_filename).resolve()
                if CORE in path.parents:
                    where = str(path.relative_to(CORE.parent))
                    if not stops or stops[-1] != where:
                        stops.append(where)
            return original(self, name)
        return read

    for cls, original in originals.items():
        cls.__getattribute__ = recording(original)
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.__getattribute__ = original


def train_click_walk(config: TrainConfig, store: pathlib.Path) -> list[str]:
    """The stops of one Train click's settings, tracked into the sqlite store at `store`."""
    stops: list[str] = []
    with recorded_reads(stops):
        checked = validate(config)
        tracker = Tracker(check_tracking_uri(f"sqlite:///{store}"))
        loop.train(checked, [TrackingCallback(tracker)])
    return stops


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="pmap")
    parser.add_argument("--strategy", default="dp")
    parser.add_argument("--optimizer", default="sgd")
    args = parser.parse_args(argv)
    defaults = TrainConfig()  # the page's defaults, with two calls' worth of steps
    config = TrainConfig(steps=2 * defaults.chunk, impl=args.impl, strategy=args.strategy, optimizer=args.optimizer)
    stops = train_click_walk(config, pathlib.Path(tempfile.mkdtemp(prefix="walk-")) / "mlflow.db")
    print_walk(stops)


if __name__ == "__main__":
    main()
