"""The interview's answers at other device counts, each count computed in a process of its own (this one's here,
the others in child processes, all at once; one child per count answers every topic asked of that count):

- every question that is not heavy: every choice question offers its computed answer, and the answers follow
  the rules for that count;
- the 2-D mesh questions (pmap_core.practice.quiz.mesh) and the pipeline questions (…quiz.pipeline): every
  answer equals its reference for that count (tests/core/test_quiz_mesh.py, tests/core/test_quiz_pipeline.py)
  and is among the choices offered; at one device the measured pipeline question compiles one stage, and says
  both peaks are equal."""

import jax
import numpy as np
import pytest

from pmap_core.practice.quiz import registry as quiz
from tests.children.quiz_answers import answers
from tests.core.test_quiz_mesh import references as mesh_references
from tests.core.test_quiz_pipeline import references as pipeline_references

N = jax.local_device_count()

# The device count is fixed per process. 1 is where an app may start (and D divides the uneven batch D + 4),
# 3 is odd and does not divide it (D + 4 = 7), 8 is the default (this process), 16 is more than the default.
# The mesh and pipeline answers at 8 are tests/core's (test_quiz_mesh.py, test_quiz_pipeline.py).
QUIZ_DEVICE_COUNTS = (1, 3, 8, 16)
MESH_DEVICE_COUNTS = PIPELINE_DEVICE_COUNTS = (1, 3)
# The topics of tests.children.quiz_answers ("all": every question that is not heavy), each at its counts.
TOPIC_DEVICE_COUNTS = {"all": QUIZ_DEVICE_COUNTS, "mesh": MESH_DEVICE_COUNTS, "pipeline": PIPELINE_DEVICE_COUNTS}


# The first test sets up every count's answers (the children's own limit is 900 s): on 2 cores shared with other
# work they took longer than pytest's 300 s per test (pyproject.toml).
pytestmark = pytest.mark.timeout(900)


def topics_at(devices: int) -> list[str]:
    return [topic for topic, counts in TOPIC_DEVICE_COUNTS.items() if devices in counts]


@pytest.fixture(scope="module")
def answers_at_each_device_count() -> dict[int, dict[str, dict[str, list]]]:
    """{D: {topic: {question: [answer, options]}}}."""
    from harness.processes import json_at_device_counts

    counts = sorted({devices for counts in TOPIC_DEVICE_COUNTS.values() for devices in counts} - {N})
    here = {topic: answers(None if topic == "all" else topic) for topic in topics_at(N)}
    others = json_at_device_counts(lambda devices: ["-m", "tests.children.quiz_answers", *topics_at(devices)],
                                   counts, timeout=900)
    return {N: here, **others}


@pytest.fixture(scope="module")
def quiz_at_each_device_count(answers_at_each_device_count):
    return {devices: topics["all"] for devices, topics in answers_at_each_device_count.items() if "all" in topics}


@pytest.mark.parametrize("devices", QUIZ_DEVICE_COUNTS)
def test_every_choice_question_offers_its_computed_answer_at_each_device_count(quiz_at_each_device_count, devices):
    for question_id, (answer, offered) in quiz_at_each_device_count[devices].items():
        if quiz.get_question(question_id).kind == quiz.CHOICE:
            assert answer in offered, (devices, question_id, answer, offered)
            assert len(set(offered)) == len(offered) >= 2, (devices, question_id, offered)


@pytest.mark.parametrize("devices", QUIZ_DEVICE_COUNTS)
def test_answers_at_each_device_count_match_the_references(quiz_at_each_device_count, devices):
    got = {question_id: answer for question_id, (answer, _) in quiz_at_each_device_count[devices].items()}
    assert got["pmean_value"] == pytest.approx(np.mean(np.arange(devices)))
    assert got["ppermute_value"] == pytest.approx(10.0 * (devices - 1))
    assert got["output_shape"] == str((devices, 4))
    assert got["all_gather_tiled_shape"] == str((devices, 2 * devices))
    # What the explanation says: too long a leading axis fails, with ValueError when D divides it.
    assert got["uneven_batch"] == ("ValueError" if (devices + 4) % devices == 0 else "IndivisibleError")
    # The jit / shard_map questions (quiz_modern): by the rules, at every device count.
    assert got["collectives_sum_rows"] == ("all-reduce" if devices > 1 else "none")
    assert got["collectives_replicate"] == ("all-gather" if devices > 1 else "none")
    assert got["shard_map_body_shape"] == str((4, 3))
    assert got["replicated_output"] == float(devices)
    assert got["same_bytes_three_ways"] == "same"
    assert got["typeof_sharded"] == f"float32[{4 * devices}@data,3]"
    # Context parallelism (quiz_context_parallel): the ring sends what all-gather sends, compiled on min(D, 4) devices.
    assert got["cp_ring_bytes"] == "the same"
    # Expert parallelism (quiz_expert_parallel): the all-to-alls send the formula's bytes, compiled on 1, 2 or 4.
    assert got["ep_hlo_bytes"] == "the same"


@pytest.mark.parametrize("topic, devices, rel", [
    *(("mesh", devices, 1e-9) for devices in MESH_DEVICE_COUNTS),
    *(("pipeline", devices, 1e-12) for devices in PIPELINE_DEVICE_COUNTS),
])
def test_mesh_and_pipeline_answers_match_their_references_at_each_device_count(answers_at_each_device_count,
                                                                               topic, devices, rel):
    expected = {"mesh": mesh_references, "pipeline": pipeline_references}[topic](devices)
    got = answers_at_each_device_count[devices][topic]
    assert got, (topic, devices)
    for question_id, (answer, offered) in got.items():
        if isinstance(expected[question_id], float):
            assert answer == pytest.approx(expected[question_id], rel=rel), (devices, question_id)
        else:
            assert answer == expected[question_id], (devices, question_id)
            assert answer in offered and len(set(offered)) == len(offered) >= 2, (devices, question_id, offered)
