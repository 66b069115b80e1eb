"""A settled page (`harness.app_pages`), which the page benchmark times a widget change on: the page opened and run,
with the work its first visit left to the background done, so that no job of that visit runs beside the change."""

from labs.texts import table as text_table


def test_a_settled_page_has_run_and_shows_its_background_work():
    from harness.app_pages import open_page, settled

    # Steps other than the default's: the run is not precomputed, it is a job of its own in the background.
    at = settled(open_page("demo", {"steps": "7"}))
    assert [h.value for h in at.header][:1] == [text_table("demo")["steps_heading"]["en"]]
    assert not [note.body for note in at.info if note.icon == "⏳"]
