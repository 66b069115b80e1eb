"""The pipeline interview questions at other device counts, each count in a child process of its own: every
answer equals its reference for that count (tests/core/test_quiz_pipeline.py) and is among the choices
offered; at one device the measured question compiles one stage, and says both peaks are equal."""

import pytest

from tests.core.test_quiz_pipeline import references

DEVICE_COUNTS = (1, 2, 3, 5)


@pytest.fixture(scope="module")
def answers():
    from harness.processes import json_at_device_counts

    return json_at_device_counts(["-m", "tests.children.quiz_answers", "pipeline"], DEVICE_COUNTS)


@pytest.mark.parametrize("devices", DEVICE_COUNTS)
def test_pipeline_answers_match_their_references_at_each_device_count(answers, devices):
    expected = references(devices)
    for question_id, (answer, offered) in answers[devices].items():
        if isinstance(expected[question_id], float):
            assert answer == pytest.approx(expected[question_id], rel=1e-12), (devices, question_id)
        else:
            assert answer == expected[question_id], (devices, question_id)
            assert answer in offered and len(set(offered)) == len(offered) >= 2, (devices, question_id, offered)
