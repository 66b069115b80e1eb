"""Citations the pipeline and 2-D mesh labs give, checked against their sources: GPipe's bubble and
re-materialisation are in its §2.3; PipeDream-Flush (1F1B with one weight version) is Narayanan et al. 2021; the
Playbook gives the bubble over the ideal time, (p − 1)/m, so (P − 1)/(M + P − 1) of the step is GPipe's; JAX's
sharding documents live under docs/new_docs/ (first shipped in 0.11.0)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = [*(ROOT / "labs" / "texts").glob("*.toml"), *(ROOT / "worksheets").glob("*.toml"),
           *(ROOT / "pmap_core").rglob("*.py"), ROOT / "README.md"]


def _text(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8")


def test_gpipe_is_cited_at_section_2_3_and_pipedream_flush_at_2021():
    for path in SOURCES:
        text = _text(path)
        # GPipe at §2.2 on one line; another paper's §2.2 (Switch's capacity) elsewhere in a file is fine.
        assert not re.search(r"GPipe[^§\n。]{0,80}§2\.2", text), path
        assert not re.search(r"2019[,)]?\s*\(?PipeDream-Flush|2019/2021|2019，PipeDream-Flush", text), path


def test_the_step_share_of_the_bubble_is_not_attributed_to_the_playbook_alone():
    # A sentence that gives (P − 1)/(M + P − 1) and cites the Playbook also names GPipe (whose formula it is)
    # or says what the Playbook gives, (P − 1)/M.
    for path in SOURCES:
        for sentence in re.split(r"(?<=[.。])\s", _text(path)):
            if "(P − 1)/(M + P − 1)" in sentence and "Playbook" in sentence:
                assert "GPipe" in sentence or "(P − 1)/M" in sentence or "(p − 1)/m" in sentence, (path, sentence)


def test_jax_sharding_documents_are_named_where_they_live():
    for path in SOURCES:
        assert not re.search(r"`docs/(201|301)/", _text(path)), path
