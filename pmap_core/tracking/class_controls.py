"""A teacher's controls of a class, kept where every app server of the class reads them: the tags of
an experiment of the class's own in the tracking store (`pmap-lab-class-<class key>`).

Per sheet, the teacher releases or withholds the answers and explanations (released unless
withheld), and may hold the class at one step so that students move together; for the whole class,
a reset: what was recorded before it no longer counts (nothing is deleted from the store).
Which teacher may change them is the app's business (`labs/ui/teacher.py`): this module reads and writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode

from pmap_core.tracking import classroom
from pmap_core.tracking.predictions import now_ms

EXPERIMENT_PREFIX = "pmap-lab-class-"  # + the class key (a digest: no user text in the name)
WITHHELD_TAG, HOLD_TAG, RESET_TAG = "withheld.", "hold.", "reset_ms"  # + sheet id for the first two
WITHHELD, RELEASED = "true", "false"


@dataclasses.dataclass(frozen=True)
class Controls:
    """The class's controls as read: sheets withheld, the step each held sheet is held at, the last reset."""

    withheld: frozenset[str] = frozenset()
    held: Mapping[str, str] = dataclasses.field(default_factory=dict)
    reset_ms: int = 0

    def released(self, sheet_id: str) -> bool:
        return sheet_id not in self.withheld

    def held_step(self, sheet_id: str) -> str | None:
        return self.held.get(sheet_id) or None

    def of_sheet(self, sheet_id: str) -> tuple[bool, str | None]:
        """What a teacher's form for one sheet shows and saves: withheld or not, and the step held (or None)."""
        return not self.released(sheet_id), self.held_step(sheet_id)


NO_CONTROLS = Controls()


def experiment_name(code: str) -> str:
    return EXPERIMENT_PREFIX + classroom.class_key(classroom.sanitize_code(code))


def parse(tags: Mapping[str, str]) -> Controls:
    """Controls from an experiment's tags; a value the lab did not write counts as not set."""
    withheld = frozenset(k[len(WITHHELD_TAG):] for k, v in tags.items() if k.startswith(WITHHELD_TAG) and v == WITHHELD)
    held = {k[len(HOLD_TAG):]: v for k, v in tags.items() if k.startswith(HOLD_TAG) and v}
    reset = tags.get(RESET_TAG, "")
    return Controls(withheld, held, int(reset) if reset.isdigit() and reset.isascii() else 0)


def read_controls(code: str, uri: str | None = None) -> Controls:
    """The class's controls; none set (everything released, nothing held, never reset) until a teacher sets one."""
    found = classroom._client(uri).get_experiment_by_name(experiment_name(code))
    return NO_CONTROLS if found is None else parse(found.tags)


def withheld_anywhere(uri: str | None = None) -> frozenset[str]:
    """The sheets that any class of the store withholds: a visitor of a server without the teacher key sees
    none of their answers, whatever class code they type (any other code would show them otherwise)."""
    client, found, token = classroom._client(uri), set(), None
    while True:
        page = client.search_experiments(filter_string=f"name LIKE '{EXPERIMENT_PREFIX}%'", page_token=token)
        for experiment in page:
            found |= parse(experiment.tags).withheld
        token = page.token
        if not token:
            return frozenset(found)


def _experiment(client, code: str) -> str:
    name = experiment_name(code)
    found = client.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    try:
        return client.create_experiment(name, tags={classroom.CLASS_TAG: classroom.sanitize_code(code),
                                                    classroom.CLASS_KEY_TAG: classroom.class_key(
                                                        classroom.sanitize_code(code))})
    except MlflowException as error:  # another server of the class created it since we looked: use theirs
        if error.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
            raise
        return client.get_experiment_by_name(name).experiment_id


def _set(code: str, key: str, value: str, uri: str | None) -> None:
    client = classroom._client(uri)
    client.set_experiment_tag(_experiment(client, code), key, value)


def set_withheld(code: str, sheet_id: str, withheld: bool, uri: str | None = None) -> None:
    """Withhold (or release) the answers and explanations of one sheet for the class."""
    _set(code, WITHHELD_TAG + sheet_id, WITHHELD if withheld else RELEASED, uri)


def hold(code: str, sheet_id: str, step_id: str | None, uri: str | None = None) -> None:
    """Hold the class at one step of a sheet (None lets every student choose again)."""
    _set(code, HOLD_TAG + sheet_id, step_id or "", uri)


def save(code: str, sheet_id: str, read: tuple[bool, str | None], withhold: bool, step_id: str | None,
         uri: str | None = None) -> bool:
    """Save one sheet's controls as a teacher's form set them (`withhold`, the step held), but only over
    the state the form was drawn with (`read`, `Controls.of_sheet`): when the store holds another one (a
    teacher in another tab or on another server changed it since, or the form belongs to another
    class), nothing is written and False is returned, so that no form overwrites a state it never showed.
    The store has no compare-and-set: two saves within one read of each other can still cross."""
    stored = read_controls(code, uri).of_sheet(sheet_id)
    if stored != tuple(read):
        return False
    if withhold != stored[0]:
        set_withheld(code, sheet_id, withhold, uri)
    if (step_id or None) != stored[1]:
        hold(code, sheet_id, step_id or None, uri)
    return True


def reset(code: str, uri: str | None = None, at_ms: int | None = None) -> int:
    """From now on (or `at_ms`), the class counts only what is recorded after this moment; returns it."""
    moment = now_ms() if at_ms is None else int(at_ms)
    _set(code, RESET_TAG, str(moment), uri)
    return moment
