"""Every interview answer comes from running its code, and agrees with an independent reference."""

import importlib

import jax
import numpy as np
import pytest

from pmap_core import LabInputError
from pmap_core.practice import quiz

N = jax.local_device_count()

# Independent references: NumPy or the shape rules, one per question (the speedup is measured, so only its sign).
REFERENCES = {
    "output_shape": str((N, 4)),
    "per_device_shape": str((4, 3)),
    "pmean_value": float(np.mean(np.arange(N))),
    "psum_of_one": float(N),
    "ppermute_value": 10.0 * (N - 1),
    "all_gather_shape": str((N, N, 2)),
    "all_gather_tiled_shape": str((N, 2 * N)),
    "psum_scatter_value": float(N),
    "uneven_batch": "IndivisibleError",
    "mean_of_means": "equal",
    "out_axes_none_value": 10.0,
    "distinct_random": 1.0,
    "fused_all_reduces": 1.0,
    "ring_bytes": 150.0,
}


def test_at_least_twelve_questions_with_texts_in_both_languages():
    assert len(quiz.QUESTIONS) >= 12
    table = importlib.import_module("labs.texts.interview").TEXTS
    for question_id in quiz.question_ids():
        for key in (f"w.question.{question_id}", f"q.{question_id}.text", f"q.{question_id}.explain"):
            assert table[key]["en"] and table[key]["zh"], key


@pytest.mark.parametrize("question_id", sorted(REFERENCES))
def test_answer_computed_by_the_code_matches_the_reference(question_id):
    answer = quiz.answer(question_id)
    assert answer == pytest.approx(REFERENCES[question_id]) if isinstance(answer, float) \
        else answer == REFERENCES[question_id]
    if quiz.get_question(question_id).kind == quiz.CHOICE:
        assert answer in quiz.options(question_id)
        assert len(set(quiz.options(question_id))) == len(quiz.options(question_id))


def test_every_question_has_a_reference_or_is_measured():
    from tests.pages.test_quiz_modern import REFERENCES as MODERN_REFERENCES  # the jit / shard_map questions
    from tests.pages.test_sharded_dp import REFERENCES as ZERO_REFERENCES  # the ZeRO / FSDP questions

    assert (set(quiz.question_ids()) - set(REFERENCES) - set(MODERN_REFERENCES) - set(ZERO_REFERENCES)
            == {"measured_speedup"})


def test_measured_speedup_is_a_positive_ratio():
    speedup = quiz.answer("measured_speedup")
    assert 0 < speedup < 4 * N


def test_scoring_uses_the_tolerance():
    assert quiz.is_correct("pmean_value", 3.5, 3.5)
    assert not quiz.is_correct("pmean_value", 3.6, 3.5)
    assert quiz.is_correct("measured_speedup", 1.3, 1.0)
    assert not quiz.is_correct("measured_speedup", 1.4, 1.0)
    assert quiz.is_correct("output_shape", "(8, 4)", "(8, 4)")
    assert not quiz.is_correct("output_shape", "(8,)", "(8, 4)")


def test_bad_predictions_and_questions_are_input_errors():
    with pytest.raises(LabInputError) as error:
        quiz.is_correct("pmean_value", float("inf"), 3.5)
    assert error.value.code == "not_a_number"
    with pytest.raises(LabInputError) as error:
        quiz.answer("no_such_question")
    assert error.value.code == "unknown_question"


def answers_and_options() -> dict[str, list]:
    """{question: [answer, options]} of every question computed here, as JSON gives them back."""
    import json

    answers = {q.id: [quiz.answer(q.id), quiz.options(q.id)] for q in quiz.QUESTIONS if not q.heavy}
    return json.loads(json.dumps(answers))


# The device count is fixed per process: this one's count is computed here, each other count in a
# child process of its own, all at once. 1 is where an app may start, 3 does not divide the
# uneven batch (D + 4 = 7), 16 is more than the default 8.
_CHILD = """
import json
import pmap_core  # noqa: F401 - fixes the device count from PMAP_LAB_DEVICES, before the test module asks
from tests.system.test_quiz import answers_and_options
print(json.dumps(answers_and_options()))
"""
QUIZ_DEVICE_COUNTS = (1, 2, 3, 8, 16)


@pytest.fixture(scope="module")
def quiz_at_each_device_count():
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    children = {
        devices: subprocess.Popen([sys.executable, "-c", _CHILD], cwd=root, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE,
                                  env={**os.environ, "PYTHONPATH": root, "PMAP_LAB_DEVICES": str(devices)})
        for devices in QUIZ_DEVICE_COUNTS if devices != N
    }
    results = {N: answers_and_options()}
    for devices, child in children.items():
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err[-2000:]
        results[devices] = json.loads(out.strip().splitlines()[-1])
    return results


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


def test_question_texts_ask_about_a_device_that_exists_for_every_device_count():
    import re

    table = importlib.import_module("labs.texts.interview").TEXTS
    for devices in range(1, 65):
        for lang in ("en", "zh"):
            for question_id in quiz.question_ids():
                for part in ("text", "explain"):
                    text = table[f"q.{question_id}.{part}"][lang].format(n=devices, answer="A",
                                                                         tolerance="35%")
                    named = re.findall(r"device (\d+)\b", text) if lang == "en" \
                        else re.findall(r"(?<![\w+−-])(\d+) ?号", text)
                    assert all(int(d) < devices for d in named), (devices, lang, question_id, text)
