"""The context- and expert-parallelism pages in real Chromium at D = 1 (English) and D = 3 (中文): each
opens on its defaults with no exception and no error, says the mesh its core chose for that D (the caption
formatted from the core's own settings), and says why nothing splits at D = 1; the context page draws the
ring's schedule where D splits the sequence (the expert page draws nothing before a prediction).
test_browser.py opens every page once, at the server's 8 devices and in one language; the captions at more
device counts, in both languages, are the AppTests' (tests/pages/test_context_parallel_page.py,
test_expert_parallel_page.py)."""

from __future__ import annotations

import pytest

from harness import browser as bs
from labs.registry import LABS
from labs.texts import table as text_table
from pmap_core.concepts import context as cp
from pmap_core.concepts import experts as ce
from pmap_core.train import transformer

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

# (D, language): one device, and an odd count that splits, a language each.
POINTS = ((1, "en"), (3, "zh"))
CHART = '[data-testid="stVegaLiteChart"]'
ERROR = '[data-testid="stAlertContentError"]'
URL_PATH = {lab.script: lab.url_path for lab in LABS}


def context_caption(devices: int, lang: str) -> str:
    """The context page's mesh caption on its defaults at `devices`, from the core's settings."""
    dims = transformer.Dims()
    s = cp.check_settings(cp.default_batch(devices), cp.default_seq_len(devices), dims.d_model, dims.heads, 2,
                          devices, "contiguous")
    return text_table("context_parallel")["mesh"][lang].format(p=s.devices, block=s.block, s=s.dims.seq_len,
                                                                b=s.batch)


def expert_caption(devices: int, lang: str) -> str:
    """The expert page's mesh caption on its defaults at `devices`, from the core's settings."""
    n_experts = ce.default_experts(devices)
    s = ce.check_settings(ce.default_batch(devices), n_experts, 2, 1.25, devices, ce.expert_axis(devices, n_experts))
    return text_table("expert_parallel")["mesh"][lang].format(
        d=s.devices, y=s.expert, x=s.data, e=s.dims.experts, per=s.dims.experts // s.expert,
        rows=s.batch // s.devices, b=s.batch, t=s.dims.seq_len)


CAPTIONS = {"context_parallel": context_caption, "expert_parallel": expert_caption}


@pytest.fixture(scope="module")
def tab():
    if _missing:  # only under CI: a missing browser is a broken CI image, not a skip
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    context = bs.shared_browser().new_context(viewport=bs.VIEWPORT)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize(("devices", "lang"), POINTS)
@pytest.mark.parametrize("script", sorted(CAPTIONS))
def test_the_page_opens_at_each_device_count(tab, script, devices, lang):
    texts = text_table(script)
    bs.open_app_page(tab, bs.page_url(bs.shared_server(), URL_PATH[script], lang=lang, devices=devices))
    main = tab.locator(bs.MAIN)
    shown = main.inner_text()
    where = (script, devices, lang)
    assert not bs.exception_texts(tab), where
    assert tab.locator(ERROR).count() == 0, (where, tab.locator(ERROR).all_inner_texts())
    assert texts["title"][lang] in shown, where
    assert CAPTIONS[script](devices, lang) in shown, where
    one_device = texts["one_device"][lang]
    assert (one_device in shown) == (devices == 1), where
    # The ring's timeline and the work per device are drawn on opening; the expert page draws nothing
    # before a prediction (its charts are measurements).
    assert main.locator(CHART).count() == (2 if script == "context_parallel" and devices > 1 else 0), where
