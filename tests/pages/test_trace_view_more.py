"""The profiler trace on the training, 2-D mesh, context and expert pages: the trained run's trace logged to its MLflow
run, each program's own collectives (the ring's permutes, the experts' all-to-alls) once the guess is in, and the
straggler experiment."""

import mlflow
import pytest

from pmap_core.concepts import context as cp
from pmap_core.concepts import experts as ce
from pmap_core.tracking import store_uri
from tests.apptest_support import assert_clean, button, open_lab
from tests.pages.test_trace_view import _page_trace


@pytest.mark.parametrize(("devices", "lang"), [(3, "zh")])
def test_a_trace_of_the_trained_run_is_shown_and_logged_to_it(store, devices, lang):
    at = open_lab("training", lang=lang, devices=devices, batch=12, steps=20)
    assert "training.trace" not in at.session_state  # nothing is traced before the visitor asks
    at.button(key="training.train").click().run()
    at.button(key="training.trace.button").click().run()
    assert_clean(at)
    shown = at.session_state["training.trace"]
    trace = shown["profile"].trace
    assert trace.devices == tuple(range(devices))
    assert shown["logged"] and shown["log_error"] is None
    run_id = at.session_state["training.last_run"].run_id
    client = mlflow.MlflowClient(store_uri(store))
    listed = client.list_artifacts(run_id, "profile/plugins/profile")
    assert len(listed) == 1
    files = {f.path.rsplit("/", 1)[-1] for f in client.list_artifacts(run_id, listed[0].path)}
    assert "perfetto_trace.json.gz" in files and any(name.endswith(".xplane.pb") for name in files)
    totals = next(frame.value for frame in at.dataframe if "设备" in frame.value.columns)
    assert list(totals["设备"]) == list(range(devices))


def test_the_mesh_page_shows_a_trace_of_its_program(store):
    profile = _page_trace("mesh_2d", devices=4, steps=20)
    assert profile.trace.devices == (0, 1, 2, 3) and all(m.matches for m in profile.hlo_match)


def test_the_straggler_experiment_shows_the_others_waiting(store):
    at = open_lab("training", devices=3, batch=12)
    at.button(key="training.straggler.button").click().run()
    assert_clean(at)
    points = at.session_state["training.straggler"]
    assert [p.work for p in points] == [0, 200, 800]


@pytest.mark.parametrize(("page", "query", "guess", "kind", "runs"), [
    # The ring's permutes sit in its loop over the P − 1 rotations: each runs once per rotation.
    ("context_parallel", {"devices": 3, "batch": 3, "seq_len": 12, "d_model": 8, "heads": 2, "layers": 2}, cp.MORE,
     "collective-permute", 3 - 1),
    ("expert_parallel", {"devices": 4}, ce.UNDER_HALF, "all-to-all", 1)])
def test_the_context_and_expert_pages_trace_their_program_once_the_guess_is_in(store, page, query, guess, kind, runs):
    at = open_lab(page, **query)
    assert not [b for b in at.button if b.key == f"{page}.trace.button"]  # no trace before the guess
    at.radio(key=f"{page}.guess").set_value(guess).run()
    button(at, f"{page}.measure").click().run()
    at.button(key=f"{page}.trace.button").click().run()
    assert_clean(at)
    profile = at.session_state[f"{page}.trace"]["profile"]
    assert profile.trace.devices == tuple(range(query["devices"]))
    own = next(m for m in profile.hlo_match if m.kind == kind)
    assert {count for step in own.per_step for count in step} == {own.hlo_instructions * runs}
    assert all(m.matches for m in profile.hlo_match if m.kind != kind)
