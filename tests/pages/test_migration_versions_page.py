"""The migration page's section "From JAX 0.10.2 to 0.12" in English and 中文 at D = 1 and 3: the table of
steps as the core runs them (tests/core/test_migration_versions.py checks the steps), the computed count,
JAX's messages as plain text, and no exception."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from labs.texts import table as text_table
from pmap_core.concepts import migration_steps
from tests.apptest_support import assert_clean, open_lab, unfold, until_done

TEXTS = text_table("migration")


@pytest.mark.parametrize(("devices", "lang"), [(1, "en"), (1, "zh"), (3, "en"), (3, "zh")])
def test_the_section_shows_every_step_beside_0_10_2_with_the_computed_count(devices, lang):
    at = until_done(open_lab("migration", devices=devices, lang=lang))
    assert_clean(at)
    assert TEXTS["steps.heading"][lang] in [s.value for s in at.subheader]
    runs = migration_steps.run_steps(devices)
    changed = sum(run.changed for run in runs)

    table = next(frame.value for frame in at.dataframe if "verdict" in frame.value.columns)
    assert list(table["step"]) == [TEXTS[f"step.{name}.title"][lang] for name in migration_steps.STEP_NAMES]
    assert list(table["now"]) == [migration_steps.summary(run.facts, run.headline) for run in runs]
    assert list(table["recorded"]) == [migration_steps.summary(run.recorded, run.headline) for run in runs]
    verdicts = list(table["verdict"])
    assert verdicts == [TEXTS["verdict.changed" if run.changed else "verdict.same"][lang] for run in runs]
    assert verdicts.count(TEXTS["verdict.changed"][lang]) == changed >= 4
    count = TEXTS["steps.count"][lang].format(changed=changed, total=len(runs))
    assert count in [i.value for i in at.info]

    # What JAX gave, verbatim and as plain text: in the code blocks, never in markdown.
    code = [c.value for c in unfold(at).code]  # each step's facts are folded until the reader opens it
    for run in runs:
        assert migration_steps.listing(run.facts) in code, run.name
        assert migration_steps.listing(run.recorded) in code, run.name
    cross = next(run for run in runs if run.name == "cross").facts["jnp.cross(a, b)"]
    assert cross.startswith("ValueError: ")
    markdown = " ".join(m.value for m in at.markdown)
    assert cross.split(": ", 1)[1] not in markdown and "No module named" not in markdown
    three = next(run for run in runs if run.name == "three_maps")
    assert three.facts["pmap"] == migration_steps.show(2 * np.arange(2.0 * devices, dtype=np.float32))
    body = TEXTS["steps.body"][lang].format(version=jax.__version__, devices=devices, recorded="0.10.2")
    assert body in [m.value for m in at.markdown]
