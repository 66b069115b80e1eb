"""jit composition: same compiled program, grad + pmean = full-batch gradient, trace-time side effects. A setting
the server's warm-up did not run compiles and runs in the background: the page answers before it, saying so."""



from tests.apptest_support import assert_clean, compiles_seen, until_done
from tests.apptest_support import open_lab as open_page


def open_lab(script: str, **query):
    """The page once what its first run started in the background shows."""
    return until_done(open_page(script, **query))

# --- the page ------------------------------------------------------------------

SMALL = {"rows": 16, "repeats": 2, "layers": 2}


def test_page_default_shows_identical_programs_and_fused_all_reduce():
    at = open_lab("jit_composition", **SMALL)
    assert_clean(at)
    assert any("same" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Same program after normalising"] == "yes"
    assert metrics["all-reduces as traced"] == "4" and metrics["all-reduces compiled"] == "1"
    assert metrics["jax.debug.callback runs"] == str(3 * 8)
    assert any("tracing impure" in t.value for t in at.text)


def test_page_changed_devices():
    at = open_lab("jit_composition", **SMALL)
    until_done(at.slider(key="jit_composition.devices").set_value(2).run())
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["jax.debug.callback runs"] == str(3 * 2)
    assert at.query_params["devices"] == "2"


def test_page_on_one_device_says_the_fused_all_reduce_moves_nothing():
    at = open_lab("jit_composition", devices=1, **SMALL)
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["all-reduces compiled"] == "1"
    assert any("over a group of one device: it moves no bytes" in c.value for c in at.caption)
    at = open_lab("jit_composition", devices=2, **SMALL)
    assert not any("group of one device" in c.value for c in at.caption)


def test_page_bad_url_value_is_refused_with_a_warning():
    at = open_page("jit_composition", rows=100_000, repeats=2, layers=2)  # the warning: on the first answer
    assert not at.exception
    assert any("rows" in w.value for w in at.warning)


def test_page_in_chinese():
    at = open_lab("jit_composition", lang="zh", **SMALL)
    assert_clean(at)
    assert "jit" in at.title[0].value
    assert any("纯函数" in m.value for m in at.markdown)


def test_the_first_answer_comes_before_any_compile():
    with compiles_seen() as compiled:
        at = open_page("jit_composition", devices=5, rows=24, repeats=2, layers=2)
        assert_clean(at)
        assert [i for i in at.info if i.icon == "⏳"] and not at.metric
        until_done(at)
        assert_clean(at)
        assert {m.label: m.value for m in at.metric}["jax.debug.callback runs"] == str(3 * 5)
        assert compiled and set(compiled) == {"pmap-lab-job"}
