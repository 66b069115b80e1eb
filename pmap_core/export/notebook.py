"""An exported lab as a Jupyter notebook: the script's own code, cut into cells at its `# %% key` lines,
each after its text (notes.NOTES) in the reader's language. The script and the notebook never disagree:
there is one code text."""

from __future__ import annotations

from pmap_core.export.notes import LANGUAGES, NOTES
from pmap_core.export.templating import REQUIREMENTS, Exported, cells
from pmap_core.validation import LabInputError


def check_language(lang: str) -> str:
    if lang not in LANGUAGES:
        raise LabInputError("unknown_language", "lang must be one of {options}, got {value!r}",
                            options=", ".join(LANGUAGES), value=lang)
    return lang


def note(lab: str, key: str, lang: str, values: dict[str, object]) -> str:
    """The text before cell `key` of `lab`: the lab's own (`lab.key`), else the shared one (`key`)."""
    entry = NOTES.get(f"{lab}.{key}") or NOTES[key]
    return entry[lang].format(**values)


def notebook_json(exported: Exported, lang: str = "en") -> str:
    """The notebook (nbformat 4) of `exported`, its texts in `lang`."""
    import nbformat
    from nbformat import v4

    lang = check_language(lang)
    values, lab = {**REQUIREMENTS, **exported.values}, exported.lab
    title = note(lab, "title", lang, values)
    opening = f"# {title}\n\n{note(lab, 'intro', lang, values)}\n\n{note(lab, 'rerun', lang, values)}"
    book = [v4.new_markdown_cell(opening)]
    for key, code in cells(exported.script):
        book += [v4.new_markdown_cell(note(lab, key, lang, values)), v4.new_code_cell(code)]
    nb = v4.new_notebook(cells=book, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    })
    for i, cell in enumerate(nb.cells):  # stable ids: the same settings give the same file
        cell["id"] = f"{lab}-{i}"
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"
