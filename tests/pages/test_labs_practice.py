"""The practice labs in the app: demo, common mistakes, interview questions, applications and cost. The demo
shows its run once it is done: its default setting comes from the server's warm-up, other settings run in the
background (the page says so meanwhile)."""


import jax
import jax.monitoring
import pytest

from tests.apptest_support import assert_clean, compiles_seen, open_lab, until_done


def texts_of(elements):
    return " ".join(e.value for e in elements)


# --- demo -------------------------------------------------------------------------

def test_demo_default_trains_w_3_and_shows_the_tutorial_errors():
    at = until_done(open_lab("demo"))
    assert_clean(at)
    assert [m.value for m in at.metric][:2] == ["3.0000", "1.0000"]
    code = texts_of(at.code)
    assert "output_shape: (8, 8)" in code  # all_gather(tiled=True) on (8, 1)
    assert "axis 0 is out of bounds" in code  # all_gather on scalars, captured from JAX


def test_demo_on_four_devices_shows_the_tutorial_batch_failing():
    at = until_done(open_lab("demo", devices=4, per_device=2))
    assert_clean(at)
    code = texts_of(at.code)
    assert "output_shape: (4, 8)" in code
    assert code.count("cannot select an axis to squeeze out") >= 2  # (8,) and (8,) on 4 devices


def test_demo_changing_a_widget_reruns():
    at = until_done(open_lab("demo"))
    until_done(at.slider(key="demo.devices").set_value(2).run())  # the new setting runs in the background
    assert_clean(at)
    assert "output_shape: (2, 2)" in texts_of(at.code)
    assert at.query_params["devices"] == "2"


def test_demo_answers_before_it_runs_a_setting_the_warm_up_did_not():
    """A setting no one asked for before: the first run compiles nothing in the page's run and says the program
    runs; its steps then show, compiled and run off the page's run."""
    with compiles_seen() as compiled:
        at = open_lab("demo", devices=5, per_device=3, steps=7)
        assert_clean(at)
        assert [i for i in at.info if i.icon == "⏳"] and not at.metric
        until_done(at)
        assert_clean(at)
        assert "output_shape: (5, 15)" in texts_of(at.code)
        assert compiled and set(compiled) == {"pmap-lab-job"}


def test_demo_bad_inputs_give_clear_messages():
    at = until_done(open_lab("demo", devices=1, per_device=1))
    assert not at.exception
    assert "at least 2 samples" in texts_of(at.error)
    at = open_lab("demo", devices=99)
    assert not at.exception and "not allowed here" in texts_of(at.warning)


def test_demo_in_chinese():
    at = until_done(open_lab("demo", lang="zh"))
    assert_clean(at)
    assert at.title[0].value == "Python 演示"


# --- common mistakes ---------------------------------------------------------------

def test_mistakes_runs_the_shard_map_trap_and_confirms_it():
    at = open_lab("mistakes", entry="shard_map_trap")
    assert_clean(at)
    assert "check_vma" in texts_of(at.code)  # the source is shown before running
    at.button(key="mistakes.run").click().run()
    assert_clean(at)
    assert "ratio: 8" in texts_of(at.code)
    assert f"JAX {jax.__version__}" in texts_of(at.success)  # the claim was checked on this JAX


def test_mistakes_default_entry_captures_jax_error():
    at = open_lab("mistakes")
    at.button(key="mistakes.run").click().run()
    assert_clean(at)
    assert "ValueError: cannot select an axis to squeeze out" in texts_of(at.code)


def test_mistakes_leading_axis_shows_both_cases_live():
    """A leading axis longer than D fails; a shorter one runs on that many devices: both captured, not typed."""
    at = open_lab("mistakes", entry="leading_axis")
    at.button(key="mistakes.run").click().run()
    assert_clean(at)
    code = texts_of(at.code)
    assert "ValueError: cannot select an axis to squeeze out" in code  # 16 rows on 8 devices
    assert "short_axis_rows: 4" in code and "short_axis_ran_on_devices: 4" in code  # 4 rows on 8 devices
    assert "at most the number of devices" in texts_of(at.markdown)
    assert f"JAX {jax.__version__}" in texts_of(at.success)


def test_interview_uneven_batch_offers_the_answer_the_code_gives():
    at = open_lab("interview", question="uneven_batch")
    options = at.radio(key="interview.uneven_batch.guess").options
    assert "IndivisibleError" in options and "ValueError" in options  # 12 rows on 8 devices; and 16 on 8
    assert "the code returned IndivisibleError" in texts_of(checked(at, "uneven_batch", "IndivisibleError").success)


def checked(at, question: str, guess: str):
    """The interview page after `guess` is chosen for `question` and checked; no exception on it."""
    at.radio(key=f"interview.{question}.guess").set_value(guess).run()
    at.button(key="interview.check").click().run()
    assert_clean(at)
    return at


def test_mistakes_bad_entry_in_link_falls_back_with_a_warning():
    at = open_lab("mistakes", entry="no_such_mistake")
    assert not at.exception
    assert "not allowed here" in texts_of(at.warning)


def test_mistakes_in_chinese():
    at = open_lab("mistakes", lang="zh", entry="same_key")
    assert_clean(at)
    assert at.title[0].value == "常见误区"
    # A click re-sends every widget; the chosen entry keeps its Chinese label and the entry runs.
    at.button(key="mistakes.run").click().run()
    assert_clean(at)
    assert at.query_params["entry"] == "same_key"
    assert "实际发生了什么（捕获结果）" in [c.value for c in at.caption]


# --- interview questions -----------------------------------------------------------

def test_interview_scores_a_right_and_a_wrong_answer_and_resets():
    at = open_lab("interview", question="pmean_value")
    assert_clean(at)
    at.number_input(key="interview.pmean_value.guess").set_value(3.5).run()
    at.button(key="interview.check").click().run()
    assert "the code returned 3.5" in texts_of(at.success)
    assert at.metric[0].value == "1 / 1"
    at.number_input(key="interview.pmean_value.guess").set_value(4.0).run()
    at.button(key="interview.check").click().run()
    assert_clean(at)
    assert "the code returned 3.5" in texts_of(at.warning)
    assert at.metric[0].value == "0 / 1"
    at.button(key="interview.reset").click().run()
    assert at.metric[0].value == "0 / 0"


def test_interview_choice_question():
    at = checked(open_lab("interview", question="all_gather_tiled_shape"), "all_gather_tiled_shape", "(8, 2)")
    assert "the code returned (8, 16)" in texts_of(at.warning)


@pytest.mark.parametrize("question,guess", [("pipeline_bubble", 0.25), ("remat_score_growth", 4.0)])
def test_interview_explanations_that_name_the_tolerance_show_it(question, guess):
    # Both texts of these questions name {tolerance}: the explanation after a check must fill it in too.
    at = open_lab("interview", question=question)
    at.number_input(key=f"interview.{question}.guess").set_value(guess).run()
    at.button(key="interview.check").click().run()
    assert_clean(at)
    assert "(within 1%)" in texts_of(at.markdown)


def test_interview_bad_question_in_link_and_chinese():
    at = open_lab("interview", question="nope")
    assert not at.exception and "not allowed here" in texts_of(at.warning)
    at = open_lab("interview", lang="zh")
    assert_clean(at)
    assert at.title[0].value == "面试题"


# --- applications and cost -------------------------------------------------------------

def test_applications_default_and_a_changed_link():
    at = open_lab("applications")
    assert_clean(at)
    assert at.metric[0].value == "3 GB"  # GPT-2 1.5B in bf16
    slow = at.metric[1].value
    at.selectbox(key="applications.link").set_value("nvlink4_h100").run()
    assert_clean(at)
    assert at.metric[1].value != slow


@pytest.mark.parametrize("query, message", [
    ({"link": "custom", "bw": 0}, "must be greater than zero"),
    ({"model": "custom", "params_m": 0}, "must be greater than zero"),
])
def test_applications_refuses_zero_bandwidth_and_zero_params(query, message):
    at = open_lab("applications", **query)
    assert not at.exception
    assert message in texts_of(at.error)


def test_applications_device_count_past_the_limit_and_chinese():
    at = open_lab("applications", max_devices=100000)
    assert not at.exception and "not allowed here" in texts_of(at.warning)
    at = open_lab("applications", lang="zh", model="llama2_7b")
    assert_clean(at)
    assert "ZeRO" in texts_of(at.warning)  # 16 bytes per parameter does not fit in 80 GB
