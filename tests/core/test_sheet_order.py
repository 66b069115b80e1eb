"""Sheets come in the order of the numbers their files start with: 10_… after 9_…, not after 1_…"""

from __future__ import annotations

import shutil

from pmap_core.practice import worksheets


def test_sheets_are_ordered_by_their_number_not_by_their_characters(tmp_path):
    for name in ("1_shards.toml", "2_collectives.toml"):
        shutil.copy(worksheets.WORKSHEETS_DIR / name, tmp_path / name)
    for copy, source in (("10_tenth.toml", "1_shards.toml"), ("9_ninth.toml", "2_collectives.toml"),
                         ("notes.toml", "1_shards.toml")):
        shutil.copy(worksheets.WORKSHEETS_DIR / source, tmp_path / copy)
    loaded = worksheets.load_sheets(tmp_path)
    assert [sheet.id for sheet in loaded.sheets] == ["1_shards", "2_collectives", "9_ninth", "10_tenth", "notes"]
    shipped = [sheet.id for sheet in worksheets.load_sheets().sheets]
    assert shipped[0] == "1_shards" and shipped == sorted(shipped, key=lambda i: int(i.split("_")[0]))
