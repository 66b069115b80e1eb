"""The interview's answers at other device counts, each count computed in a child process of its own:
every choice question offers its computed answer, and the answers follow the rules for that count."""

import jax
import numpy as np
import pytest

from pmap_core.practice.quiz import registry as quiz
from tests.children.quiz_answers import answers

N = jax.local_device_count()


# The device count is fixed per process: this one's count is computed here, each other count in a
# child process of its own, all at once. 1 is where an app may start, 3 does not divide the
# uneven batch (D + 4 = 7), 16 is more than the default 8.
QUIZ_DEVICE_COUNTS = (1, 2, 3, 8, 16)


@pytest.fixture(scope="module")
def quiz_at_each_device_count():
    from harness.processes import json_at_device_counts

    others = [d for d in QUIZ_DEVICE_COUNTS if d != N]
    return {N: answers(), **json_at_device_counts(["-m", "tests.children.quiz_answers"], others)}


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
