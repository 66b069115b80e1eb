"""Teacher links: `lock=` shows a setting disabled with the link's value, `hide=` leaves it out while
its value still applies, and the share panel builds the link that brings both back."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from tests.apptest_support import assert_clean, open_lab, share_link


def _open_share_panel(at):
    at.session_state["share.collectives"] = True  # what opening the panel in the browser sets
    return at.run()


def _share_link(at) -> str:
    return share_link(at, "collectives")


def test_locked_and_hidden_settings_follow_the_link_through_reruns():
    at = open_lab("collectives", op="psum", devices=2, size=4, lock="devices,op", hide="size")
    assert_clean(at)
    devices, op = at.slider(key="collectives.devices"), at.selectbox(key="collectives.op")
    assert (devices.value, devices.disabled) == (2, True) and (op.value, op.disabled) == ("psum", True)
    assert not [w for w in at.slider if w.key == "collectives.size"]  # hidden: not drawn …
    assert any("(4,)" in c.value for c in at.caption)  # … yet its value ran: 4 values per device

    at.number_input(key="collectives.seed").set_value(5).run()  # another setting reruns the page
    assert_clean(at)
    assert {"devices": "2", "op": "psum", "size": "4", "seed": "5", "lock": "devices,op",
            "hide": "size"}.items() <= dict(at.query_params).items()
    assert at.slider(key="collectives.devices").disabled and at.selectbox(key="collectives.op").disabled


def test_share_panel_link_restores_settings_and_locks():
    at = _open_share_panel(open_lab("collectives", op="all_gather", devices=2, lock="devices"))
    assert at.checkbox(key="share.collectives.devices.lock").value  # the link's lock, already ticked
    at.checkbox(key="share.collectives.op.lock").check()
    at.checkbox(key="share.collectives.seed.hide").check().run()
    link = _share_link(at)
    assert urlsplit(link).path == "/collectives"
    query = dict(parse_qsl(urlsplit(link).query))
    assert query == {"op": "all_gather", "devices": "2", "size": "8", "seed": "0", "lang": "en",
                     "lock": "op,devices", "hide": "seed"}

    opened = _open_share_panel(open_lab("collectives", **{k: v for k, v in query.items() if k != "lang"}))
    assert_clean(opened)
    assert opened.slider(key="collectives.devices").value == 2 and opened.slider(key="collectives.devices").disabled
    assert opened.selectbox(key="collectives.op").value == "all_gather"
    assert opened.selectbox(key="collectives.op").disabled
    assert not [w for w in opened.number_input if w.key == "collectives.seed"]
    assert _share_link(opened) == link


def test_the_share_panel_is_sent_only_while_open_and_keeps_its_ticks_while_closed():
    at = open_lab("collectives", devices=2)
    assert not [w for w in at.checkbox if w.key.startswith("share.")]  # closed: none of its widgets is sent
    _open_share_panel(at)
    at.checkbox(key="share.collectives.op.lock").check().run()
    at.session_state["share.collectives"] = False
    at.run()
    assert not [w for w in at.checkbox if w.key.startswith("share.")]
    _open_share_panel(at)
    assert at.checkbox(key="share.collectives.op.lock").value
    assert dict(parse_qsl(urlsplit(_share_link(at)).query))["lock"] == "op"


def test_locked_value_out_of_range_falls_back_with_a_warning_and_stays_locked():
    at = open_lab("collectives", devices=999, lock="devices", lang="zh")
    assert not at.exception
    assert any("999" in w.value and "`devices`" in w.value for w in at.warning)
    devices = at.slider(key="collectives.devices")
    assert devices.disabled and devices.value == 4 and at.query_params["devices"] == "4"


def test_names_in_lock_and_hide_are_plain_text():
    nasty = "**bold**,<b>x</b>,[a](http://e.x),`tick"
    at = _open_share_panel(open_lab("collectives", lock=nasty, hide="![i](http://e.x/i.png)"))
    assert_clean(at)
    notes = [c.value for c in at.caption if "ignored" in c.value]
    assert len(notes) == 1
    for name in ("**bold**", "<b>x</b>", "[a](http://e.x)", "![i](http://e.x/i.png)"):
        assert f"` {name} `" in notes[0]  # each inside a code span: shown as its characters
    assert "`` `tick ``" in notes[0]
    assert not any(w.disabled for w in at.slider)  # unknown names lock nothing
    assert at.query_params["lock"] == nasty  # kept as the link gave it
