"""A class predicting together, in Chromium against `streamlit run`: three students, each in a browser
context of their own, predict on one worksheet step; the Class page shows the teacher controls only once
the server's teacher key is typed, and then three first predictions against the computed answer; when the
teacher holds the class at the next step, the students' open pages move there by themselves."""

import browser_support as bs  # the module the other browser tests share: one Playwright per process
import pytest

from pmap_core.tracking import classroom

if reason := bs.chromium_missing_reason():
    pytestmark = pytest.mark.skip(reason=reason)

KEY = "a teacher key for the test"  # 26 characters: at least the 20 the app asks for
CODE = "browser-class"
STUDENTS = (("Ada", "3"), ("Grace", "2"), ("Alan", "2"))  # sheet 1_shards, step pad_per_device: 3 is right


def type_into(page, key: str, value: str) -> None:
    box = page.locator(f".st-key-{key.replace('.', '-')} input")
    box.fill(value)
    box.press("Enter")
    bs.wait_ready(page, rerun=True)


def open_controls(page, key: str) -> None:
    """Type the teacher key into its form and press the form's button."""
    page.locator(".st-key-class_view-teacher_key input").fill(key)
    page.get_by_role("button", name="Open the teacher controls").click()
    bs.wait_ready(page, rerun=True)


def test_three_students_predict_and_the_teacher_view_shows_their_first_predictions(tmp_path):
    server = bs.start_server({"PMAP_LAB_TEACHER_KEY": KEY})
    contexts = []
    try:
        browser = bs.shared_browser()
        students = []
        for name, guess in STUDENTS:
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            page = contexts[-1].new_page()
            students.append(page)
            bs.open_app_page(page, bs.page_url(server, "worksheet", lang="en", sheet="1_shards",
                                               step="pad_per_device"))
            type_into(page, "worksheet.student", name)
            type_into(page, "worksheet.class_code", CODE)
            type_into(page, "worksheet.1_shards.pad_per_device.guess", guess)
            page.locator(".st-key-worksheet-check button").click()
            bs.wait_ready(page, rerun=True)
            page.get_by_text("Recorded for your class.", exact=True).wait_for(timeout=60_000)
            assert not bs.exception_texts(page), bs.exception_texts(page)

        contexts.append(browser.new_context(viewport=bs.VIEWPORT))
        teacher = contexts[-1].new_page()
        bs.open_app_page(teacher, bs.page_url(server, "class-view", lang="en"))
        type_into(teacher, "class_view.code", CODE)
        main = teacher.locator(bs.MAIN)
        main.get_by_text("3 first predictions, 33% within").wait_for(timeout=60_000)
        heading = main.locator('[data-testid="stHeading"]').filter(has_text="Teacher controls")
        assert not heading.count()  # no key typed: no control anywhere
        assert not teacher.locator(".st-key-class_view-reset").count()
        open_controls(teacher, "not the key")
        assert main.get_by_text("not this server's teacher key").count()
        assert not teacher.locator(".st-key-class_view-reset").count()

        open_controls(teacher, KEY)
        heading.first.wait_for(timeout=30_000)
        assert teacher.locator(".st-key-class_view-reset").count() == 1
        assert not bs.exception_texts(teacher), bs.exception_texts(teacher)
        # The first predictions against the computed answer: the summary row, and the chart with its rule.
        summary = main.locator('[data-testid="stDataFrame"]').filter(has_text="first predictions").first
        summary.wait_for(timeout=30_000)
        assert main.locator('[data-testid="stVegaLiteChart"]').count() >= 2
        bs.save_screenshot(teacher, "class-predictions-teacher")

        # What the page drew is what the store holds: three first predictions, one right.
        recorded = classroom.read_class(CODE, server_uri(server)).predictions
        assert sorted(zip(recorded["student"], recorded["prediction"], recorded["first"], strict=True)) == sorted(
            (name, guess, True) for name, guess in STUDENTS)
        assert recorded["answer"].tolist() == ["3"] * 3 and recorded["result"].sum() == 1

        # The teacher holds the class at step 2: the students' open pages move there, without a click.
        hold = teacher.locator('[class*="st-key-class_view-hold-1_shards"]')
        hold.locator('[role="combobox"]').click()
        teacher.locator('[role="option"]').filter(has_text="2. pad_count").click()
        teacher.get_by_role("button", name="Save for the class").click()
        bs.wait_ready(teacher, rerun=True)
        assert not bs.exception_texts(teacher), bs.exception_texts(teacher)
        for page in students:
            page.get_by_text("Your teacher holds the class at step 2").wait_for(timeout=60_000)
            assert page.locator('[data-testid="stHeading"]').filter(has_text="2. ").count()
    finally:
        for context in contexts:
            context.close()
        bs.stop_server(server)


def server_uri(server) -> str:
    """The throwaway store `bs.start_server` gave the server (its folder holds the log too)."""
    return f"sqlite:///{server.log_path.parent / 'mlflow.db'}"
