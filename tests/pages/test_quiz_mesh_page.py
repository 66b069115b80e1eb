"""The 2-D mesh questions on the Interview page, in English and 中文: each opens from its link, runs its code
when checked, and says whether the prediction was right, with no exception and no error box."""

import pytest
from conftest import assert_clean, open_lab

from pmap_core.practice.quiz import mesh, registry
from tests.apptest_support import give_prediction


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_mesh_question_runs_and_answers_on_the_page(lang):
    for question in mesh.QUESTIONS:
        at = open_lab("interview", lang=lang, question=question.id)
        assert_clean(at)
        give_prediction(at, f"interview.{question.id}.guess")
        at.button(key="interview.check").click().run()
        assert_clean(at)
        result = at.session_state["interview.results"][question.id]
        assert result["answer"] == registry.answer(question.id)  # what the page ran is what the quiz computes
        assert [s.value for s in at.success] + [w.value for w in at.warning], (lang, question.id)
