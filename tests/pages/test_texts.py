"""Every text of every lab, in both languages: complete, with the same placeholders and code, and the same words.

What a reader sees in one language must say what the other says: same {placeholders} (else a page
raises or shows a raw brace), same `code spans` (code and JAX's verbatim messages are not translated),
no Chinese in English texts, and the glossary's term for each concept (labs/texts/glossary.toml).
"""

import re
import string

import pytest

from labs.texts import ALIAS, COMMON_PREFIX, GLOSSARY, raw_entries
from labs.texts import pages as text_pages
from labs.texts import table as text_table

MODULES = text_pages()
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
CODE_SPAN = re.compile(r"`([^`]+)`")


def all_texts():
    for module in MODULES:
        for key, entry in text_table(module).items():
            yield module, key, entry


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_texts_module_is_found():
    assert {"common", "demo", "mistakes", "interview", "worksheet"} <= set(MODULES) and "glossary" not in MODULES


def test_every_key_has_both_languages_and_nothing_else():
    for module, key, entry in all_texts():
        assert set(entry) == {"en", "zh"}, (module, key)
        assert entry["en"].strip() and entry["zh"].strip(), (module, key)


def test_placeholders_are_the_same_in_both_languages():
    for module, key, entry in all_texts():
        assert placeholders(entry["en"]) == placeholders(entry["zh"]), (module, key)


def test_code_spans_are_the_same_in_both_languages():
    for module, key, entry in all_texts():
        assert sorted(CODE_SPAN.findall(entry["en"])) == sorted(CODE_SPAN.findall(entry["zh"])), (module, key)


def test_english_texts_hold_no_chinese():
    for module, key, entry in all_texts():
        assert not CJK.search(entry["en"]), (module, key, CJK.findall(entry["en"]))


def _prose(text: str) -> str:
    """The text without code spans: code is English in both languages."""
    return CODE_SPAN.sub(" ", text)


@pytest.mark.parametrize("entry", GLOSSARY, ids=[e["en"] for e in GLOSSARY])
def test_glossary_terms_are_used_as_listed(entry):
    # Names with capitals (ZeRO, PartitionSpec) are matched as written; plain words in any case.
    pattern = re.compile(entry["en_pattern"], 0 if re.search(r"[A-Z]", entry["en_pattern"]) else re.IGNORECASE)
    for module, key, text in all_texts():
        named = bool(pattern.search(_prose(text["en"])))
        if named or entry.get("banned_where") != "term":
            zh = _prose(text["zh"])
            assert not [b for b in entry.get("banned_zh", ()) if b in zh], (module, key, entry["en"], zh)
        if named:  # the English text names the concept: the Chinese uses its term
            assert any(form in text["zh"] for form in entry["zh_forms"]), (module, key, entry["en"], text["zh"])


def test_no_translated_quote_stands_in_for_a_jax_message():
    """JAX's messages are English: shown verbatim in code, explained in Chinese, never a calque in quotes."""
    for module, key, text in all_texts():
        assert "挤掉" not in text["zh"], (module, key)


def test_the_glossary_lists_design_terms_with_their_chinese():
    by_en = {e["en"]: e["zh"] for e in GLOSSARY}
    assert by_en["dispatch (overhead)"] == "派发（开销）"
    assert by_en["lower / lowering (to HLO)"] == "lower 到 HLO（lowering）"
    assert by_en["all-reduce"] == "全归约" and by_en["reduce-scatter"] == "归约散射"


def test_each_text_is_written_once():
    """Two keys that show the same words in both languages share one entry (`same_as`), so a fix to
    the wording or the translation reaches both."""
    written: dict[tuple[str, str], str] = {}
    twice = []
    for module in MODULES:
        for key, entry in raw_entries(module).items():
            if ALIAS in entry:
                assert set(entry) == {ALIAS}, (module, key)
                continue
            pair = (entry["en"], entry["zh"])
            if pair in written:
                twice.append(f"{module}:{key} = {written[pair]}")
            written.setdefault(pair, f"{module}:{key}")
    assert not twice, twice


def test_a_same_as_entry_shows_the_text_it_names():
    for module in MODULES:
        for key, entry in raw_entries(module).items():
            if ALIAS in entry:
                name = entry[ALIAS]
                source = text_table("common") if name.startswith(COMMON_PREFIX) else text_table(module)
                assert text_table(module)[key] == source[name.removeprefix(COMMON_PREFIX)], (module, key)


PEAK = re.compile(r"peak|memory_analysis|峰值")
SENTENCE = re.compile(r"[^.,;:!?。，；：！？]+")  # a clause


def test_no_compiler_figure_is_called_measured():
    """`memory_analysis()` says what the compiler plans to allocate, not what a run used: a clause about a
    peak calls it compiler-reported (or says it is not measured), never measured."""
    called_measured = []
    for module, key, entry in all_texts():
        for lang, word, denial in (("en", "measur", "not measured"), ("zh", "实测", "不是运行时实测")):
            for sentence in SENTENCE.findall(entry[lang]):
                if PEAK.search(sentence) and word in sentence.replace(denial, ""):
                    called_measured.append(f"{module}:{key} [{lang}] {sentence.strip()}")
    assert not called_measured, called_measured
