"""The mistakes page on this process's device count (one, as the test runs it), at each entry that needs
two devices and at leading_axis, in English (run) and 中文 (shown unrun: AppTest cannot click past a
Chinese selectbox label). Prints four lines per entry and language, each `<entry> <lang> <WHAT> ...`:
INFO (the info boxes), CAPTION (the captions), SUCCESS n WARNING n (their counts), KIND (the markdown
that states an entry's kind, ` — ` in it).

Run by tests/system/test_pitfalls_devices.py with one device."""

from tests.children.apptest_setup import assert_clean, open_lab


def main() -> None:
    from pmap_core.practice.pitfalls import entries

    for entry in [*sorted(entries.NEEDS_TWO_DEVICES), "leading_axis"]:
        for lang in ("en", "zh"):
            at = open_lab("mistakes", lang=lang, entry=entry)
            if lang == "en":
                at.button(key="mistakes.run").click().run()
            assert_clean(at)
            print(entry, lang, "INFO", " | ".join(i.value for i in at.info))
            print(entry, lang, "CAPTION", " | ".join(c.value for c in at.caption))
            print(entry, lang, "SUCCESS", len(at.success), "WARNING", len(at.warning))
            print(entry, lang, "KIND", " | ".join(m.value for m in at.markdown if " — " in m.value))


if __name__ == "__main__":
    main()
