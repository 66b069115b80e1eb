"""A withheld sheet in Chromium against `streamlit run`: three students predict on a sheet, the teacher
withholds it from the Class page, and a Class page opened without the key (from the link that keeps the
class code) shows no right or wrong of that sheet anywhere: not in its tables, not in the CSV it
downloads. The page redraws by itself when a student's prediction arrives; the teacher key's field draws
nothing of what is typed, not even its length."""

import csv
import io
import pathlib
import re
import time

import pytest
from test_browser_class_predictions import check_until, open_controls, predict, server_uri, shown_or_fail, type_into

from harness import browser as bs
from labs.ui.teacher import CONTROLS_TTL_S
from pmap_core.tracking import class_controls, classroom, predictions

if reason := bs.chromium_missing_reason():
    pytestmark = pytest.mark.skip(reason=reason)

KEY = "the withheld sheet's teacher key"
CODE = "withheld-class"
SHEET, STEP = "1_shards", "pad_per_device"  # 3 is right
STUDENTS = (("Ada", "3"), ("Grace", "2"), ("Alan", "2"))
VISITOR = "203.0.113.7"  # the address a proxy on the server's host says the visitor has


def received(page) -> list[bytes]:
    """Every message the server sends the page over its websocket, from now on, as it arrives: the tables'
    cells are drawn on a canvas, so what reached the page is read here (Arrow keeps text as UTF-8 bytes)."""
    frames: list[bytes] = []

    def listen(socket) -> None:
        socket.on("framereceived", lambda payload: frames.append(
            payload if isinstance(payload, bytes) else payload.encode("utf-8")))

    page.on("websocket", listen)
    return frames


def holds(frames: list[bytes], text: str) -> bool:
    return any(text.encode("utf-8") in frame for frame in frames)


def arrives(page, frames: list[bytes], text: str, timeout_s: float = 120) -> bool:
    """Whether `text` reaches the page within `timeout_s`: on a loaded machine a table's message can
    come after the caption the test waited for (`bs.wait_until`: the frames are collected while it waits)."""
    return bs.wait_until(page, lambda: holds(frames, text), timeout_s)


def test_what_the_browser_receives_while_a_test_waits_reaches_the_tests_listener():
    """`arrives` waits with `bs.wait_until`: a message the page gets after the wait began is collected. With a
    `time.sleep` between the checks nothing reached the listener, and under load a table that came after its
    caption was never seen."""
    context = bs.shared_browser().new_context()
    try:
        page, said = context.new_page(), []
        page.on("console", lambda message: said.append(message.text))
        page.evaluate("() => setTimeout(() => console.log('later'), 300)")
        assert bs.wait_until(page, lambda: "later" in said, timeout_s=30)
    finally:
        context.close()


def released(uri: str, student: str) -> None:
    """A right prediction of `student` on a sheet the teacher has not withheld, as the Worksheet records it."""
    tags = dict([predictions.prediction_tag("psum_value", 1, 6.0, 6.0, True)])
    classroom.record_exercise("2_collectives", {"psum_value": True}, classroom.class_tags(student, CODE), uri=uri,
                              attempts=tags)


def test_a_withheld_sheet_shows_no_right_or_wrong_without_the_key(tmp_path):
    server = bs.start_server({"PMAP_LAB_TEACHER_KEY": KEY})
    contexts = []
    try:
        browser = bs.shared_browser()
        for name, guess in STUDENTS:
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            predict(contexts[-1].new_page(), server, CODE, name, guess, SHEET, STEP)
        uri = server_uri(server)
        assert len(classroom.read_class(CODE, uri).predictions) == 3

        released(uri, "Grace")  # and Grace's prediction on a sheet that is not withheld, before any page reads

        # The teacher withholds the sheet from the Class page.
        contexts.append(browser.new_context(viewport=bs.VIEWPORT))
        teacher = contexts[-1].new_page()
        to_teacher = received(teacher)
        bs.open_app_page(teacher, bs.page_url(server, "class-view", lang="en"))
        type_into(teacher, "class_view.code", CODE)
        open_controls(teacher, KEY)
        teacher.get_by_text("Withhold the answers and explanations of this sheet").click()
        teacher.get_by_role("button", name="Save for the class").click()
        bs.wait_ready(teacher, rerun=True)
        assert class_controls.read_controls(CODE, uri).withheld == {SHEET}
        assert holds(to_teacher, f"{SHEET}/{STEP}")  # the teacher's Exercises table: the sheet's column


        # A page without the key, opened from the link that keeps the code.
        # As through nginx on this host (docs/DEPLOY.md), which appends the address it saw.
        contexts.append(browser.new_context(viewport=bs.VIEWPORT, accept_downloads=True,
                                            extra_http_headers={"X-Forwarded-For": f"198.51.100.7, {VISITOR}"}))
        visitor = contexts[-1].new_page()
        to_visitor = received(visitor)
        bs.open_app_page(visitor, bs.page_url(server, "class-view", lang="en", code=CODE))
        main = visitor.locator(bs.MAIN)
        main.get_by_text("not in the CSV").first.wait_for(timeout=60_000)
        assert visitor.locator(".st-key-class_view-code input").input_value() == CODE
        bs.wait_ready(visitor)
        # The released sheet arrives …
        assert arrives(visitor, to_visitor, "Grace") and arrives(visitor, to_visitor, "psum_value")
        assert not holds(to_visitor, SHEET) and not holds(to_visitor, STEP)  # … nothing of the withheld sheet
        with visitor.expect_download(timeout=60_000) as download:
            visitor.locator(".st-key-class_view-download button").click()
        rows = list(csv.reader(io.StringIO(pathlib.Path(download.value.path()).read_text(encoding="utf-8"))))
        assert len(rows) > 1 and not [row for row in rows if any(SHEET in cell or STEP in cell for cell in row)], rows
        assert not bs.exception_texts(visitor), bs.exception_texts(visitor)

        # Another prediction on the released sheet arrives: the open page shows it without a click.
        main.get_by_text("1 students, 1 rows").wait_for(timeout=30_000)
        released(uri, "Alan")
        main.get_by_text("2 students, 2 rows").wait_for(timeout=120_000)  # a refresh: every few s, slower under load
        assert arrives(visitor, to_visitor, "Alan") and not holds(to_visitor, SHEET)

        # The key's field: what is typed is not drawn, so 5 characters and 30 look the same.
        field = visitor.locator(".st-key-class_view-teacher_key input")
        assert same_picture(visitor, field, "12345", "x" * 30)
        assert field.evaluate("e => getComputedStyle(e).color") == "rgba(0, 0, 0, 0)"
        # The caret would show where the text ends; it is not drawn either (a blinking caret is left out of
        # the screenshots above, so that they compare what is typed and nothing else).
        assert field.evaluate("e => getComputedStyle(e).caretColor") == "rgba(0, 0, 0, 0)"
        assert "/200" not in visitor.locator(".st-key-class_view-teacher_key").inner_text()
        visitor.get_by_role("button", name="Open the teacher controls").click()
        bs.wait_ready(visitor, rerun=True)
        assert field.input_value() == ""  # a tried key does not stay in the field
        assert visitor.get_by_text("not this server's teacher key").count()
        # The server's log names where the wrong key came from, never what was typed. Streamlit reads the
        # address from the WebSocket handshake: Chromium 150 sent a context's extra headers with page requests
        # only, and the server saw this host; Chromium 156 sends them with the handshake too, and the server sees
        # the visitor as the proxy on this host named it. Either way one address, and the count, is logged
        # (tests/pages/test_teacher_address.py covers the rule for every header and peer).
        log = server.log_tail(20_000)
        logged = [f"a wrong teacher key from {address} (1 from this session, 1 from this address)"
                  for address in (VISITOR, "127.0.0.1")]
        assert sum(line in log for line in logged) == 1, log
        assert "x" * 30 not in log
        bs.save_screenshot(visitor, "class-withheld-visitor")
    finally:
        for context in contexts:
            context.close()
        bs.stop_server(server)


def same_picture(page, field, text: str, other: str, tries: int = 5) -> bool:
    """Whether `field` looks the same holding `text` and `other`. The page refreshes the class table every few
    seconds, and a rerun fades the page's elements while it runs: each picture is taken with no rerun running,
    and a pair that differs is taken again, a few times. A field that draws what is typed differs every time."""
    for _ in range(tries):
        pictures = []
        for typed in (text, other):
            field.fill(typed)
            bs.wait_ready(page)
            pictures.append(settled_screenshot(field))
        if pictures[0] == pictures[1]:
            return True
    return False


def settled_screenshot(locator, tries: int = 20) -> bytes:
    """The element's picture once two shots in a row agree: a loaded machine may still be drawing its focus."""
    last = locator.screenshot(animations="disabled", caret="hide")
    for _ in range(tries):
        shot = locator.screenshot(animations="disabled", caret="hide")
        if shot == last:
            return shot
        last = shot
    return last


OTHER = "another-class"  # a class that withholds nothing: its code shows no more than none


def page_says(page, text: str) -> bool:
    return text in page.locator(bs.MAIN).inner_text()


def assert_no_answer(page, frames: list[bytes]) -> None:
    """Nothing of the step's computed answer or right/wrong reached the page, nor a link to its lab."""
    for shown in ("the code computed", "Right: you said", "Not this time", "Open the Parallel basics"):
        assert not holds(frames, shown) and not page_says(page, shown), shown
    assert page_says(page, "has not revealed this sheet's answers")
    assert not bs.exception_texts(page), bs.exception_texts(page)


@pytest.fixture(scope="module")
def server():
    started = bs.start_server({"PMAP_LAB_TEACHER_KEY": KEY})
    yield started
    bs.stop_server(started)


def test_no_visitor_sees_a_withheld_steps_answer_and_the_lab_counts_as_seeing_it(server):
    """Sheet 1 is withheld by a class: a visitor with no class code, one with another class's code and one
    who opens the step's lab (by the link saved while the sheet was released) see no answer and no right or
    wrong on the Worksheet; the one who opened the lab has their prediction recorded as made after seeing the
    answer. On a released sheet, the step's own link button opens the lab and marks the step the same way."""
    contexts = []
    try:
        browser = bs.shared_browser()
        uri = server_uri(server)
        worksheet_url = bs.page_url(server, "worksheet", lang="en", sheet=SHEET, step=STEP)

        # The follower keeps the step's lab link while the sheet is still released.
        contexts.append(browser.new_context(viewport=bs.VIEWPORT))
        follower = contexts[-1].new_page()
        bs.open_app_page(follower, worksheet_url)
        lab_link = follower.get_by_role("link", name=re.compile("Open the Parallel basics")).get_attribute("href")
        assert "batch=10" in lab_link and "policy=pad" in lab_link, lab_link

        class_controls.set_withheld(CODE, SHEET, True, uri)  # the class's teacher withholds the sheet
        # … in the store, as a teacher on another server of the class would: this server reads the sheets
        # withheld at most CONTROLS_TTL_S old (its own Class page forgets them at once), and the follower's
        # page has just read them.
        time.sleep(CONTROLS_TTL_S + 0.5)

        # A visitor with no class code, and one with another class's code.
        for code in ("", OTHER):
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            page = contexts[-1].new_page()
            frames = received(page)
            if code:
                predict(page, server, code, "Grace", "1")
            else:
                bs.open_app_page(page, worksheet_url)
                type_into(page, f"worksheet.{SHEET}.{STEP}.guess", "1")
                check_until(page, "worksheet", page.get_by_text("Not recorded for a class").first)
            assert_no_answer(page, frames)

        # The follower opens the lab in another tab, then predicts in the class: no answer, and marked.
        lab = contexts[0].new_page()
        bs.open_app_page(lab, lab_link if lab_link.startswith("http") else f"{server.url}/{lab_link.lstrip('/')}")
        assert not bs.exception_texts(lab), bs.exception_texts(lab)
        frames = received(follower)
        predict(follower, server, CODE, "Ada", "3")
        follower.get_by_text("made after seeing the answer").first.wait_for(timeout=30_000)
        assert_no_answer(follower, frames)

        recorded = classroom.read_class(CODE, uri).predictions
        assert recorded[["student", "first", "after_answer"]].values.tolist() == [["Ada", False, True]]
        assert classroom.read_class(OTHER, uri).predictions[["student", "first", "after_answer"]].values.tolist() \
            == [["Grace", True, False]]

        # A released sheet: its step's link button opens the lab, and the step counts as seen.
        contexts.append(browser.new_context(viewport=bs.VIEWPORT))
        clicker = contexts[-1].new_page()
        bs.open_app_page(clicker, bs.page_url(server, "worksheet", lang="en", sheet="2_collectives",
                                              step="all_gather_shape"))
        with contexts[-1].expect_page(timeout=60_000) as opened:
            clicker.get_by_role("link", name=re.compile("Open the Collectives")).click()
        bs.wait_ready(opened.value)
        assert "op=all_gather" in opened.value.url
        type_into(clicker, "worksheet.student", "Alan")
        type_into(clicker, "worksheet.class_code", CODE)
        type_into(clicker, "worksheet.2_collectives.all_gather_shape.guess", "(4, 2)")
        check_until(clicker, "worksheet", clicker.get_by_text("made after seeing the answer").first)
        recorded = classroom.read_class(CODE, uri).predictions
        assert recorded[recorded["student"] == "Alan"][["first", "after_answer"]].values.tolist() == [[False, True]]
        bs.save_screenshot(follower, "class-withheld-follower")
    finally:
        for context in contexts:
            context.close()


FLAGS = "flags-class"


def interview_predict(page, server, name: str) -> None:
    """A prediction on the Interview (the question pmean_value), recorded for the class FLAGS."""
    bs.open_app_page(page, bs.page_url(server, "interview", lang="en", question="pmean_value"))
    type_into(page, "interview.student", name)
    type_into(page, "interview.class_code", FLAGS)
    type_into(page, "interview.pmean_value.guess", "3.5")
    check_until(page, "interview", page.get_by_text(re.compile(r"^1 of \d+ questions answered")).first)
    shown_or_fail(page, page.get_by_text("Your prediction is recorded for your class."), f"{name}'s Interview check")
    assert not bs.exception_texts(page), bs.exception_texts(page)


def test_students_who_go_on_in_a_second_browser_are_not_flagged_and_one_name_used_at_once_is(server):
    """Three students predict on the Worksheet, then each goes on to the Interview in a fresh browser
    context (a second device, a private window): no page warns them, and the teacher reads "from 2
    browsers" and nothing more. Two browsers that use one name at the same time at one step are flagged."""
    browser = bs.shared_browser()
    contexts, pages = [], []
    try:
        for name, guess in STUDENTS:
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            pages.append(contexts[-1].new_page())
            predict(pages[-1], server, FLAGS, name, guess)
        for name, _ in STUDENTS:
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            pages.append(contexts[-1].new_page())
            interview_predict(pages[-1], server, name)
        for guess in ("2", "4"):  # Zoe's name in two browsers, one after the other …
            contexts.append(browser.new_context(viewport=bs.VIEWPORT))
            pages.append(contexts[-1].new_page())
            predict(pages[-1], server, FLAGS, "Zoe", guess)
        type_into(pages[-2], f"worksheet.{SHEET}.{STEP}.guess", "3")  # … and the first is still at the step
        pages[-2].locator(".st-key-worksheet-check button").click()
        bs.wait_ready(pages[-2], rerun=True)
        uri = server_uri(server)
        deadline = time.monotonic() + 120
        while len(recorded := classroom.read_class(FLAGS, uri).predictions) < 9 and time.monotonic() < deadline:
            time.sleep(0.5)
        at_once = recorded.groupby("student")["at_once"].agg(["all", "any"])
        assert at_once.to_dict("index") == {"Ada": {"all": False, "any": False}, "Alan": {"all": False, "any": False},
                                            "Grace": {"all": False, "any": False}, "Zoe": {"all": True, "any": True}}
        assert predictions.browsers_per_name(recorded) == {"Ada": 2, "Alan": 2, "Grace": 2, "Zoe": 2}
        for page in pages[:6]:  # no student who went on in another browser is warned
            assert not page_says(page, "Another browser"), page_says(page, "")

        contexts.append(browser.new_context(viewport=bs.VIEWPORT))
        teacher = contexts[-1].new_page()
        frames = received(teacher)
        bs.open_app_page(teacher, bs.page_url(server, "class-view", lang="en", code=FLAGS))
        open_controls(teacher, KEY)  # the teacher's view: every sheet, whichever a class withholds
        assert arrives(teacher, frames, "recorded from 2 browsers")
        assert arrives(teacher, frames, "at the same step at the same time")
        assert not holds(frames, "took a name")
        assert not bs.exception_texts(teacher), bs.exception_texts(teacher)
        bs.save_screenshot(teacher, "class-flags-teacher")
    finally:
        for context in contexts:
            context.close()
