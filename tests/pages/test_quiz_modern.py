"""The interview questions on jit shardings and shard_map: each computed answer against an independent reference.

References come from the rules (which collective a sharding needs, what a shard_map body sees), from
NumPy, or from counting bytes by hand (the MLP's parameters and loss), never from the question's code.
"""


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from labs.texts import table as text_table
from pmap_core import hlo
from pmap_core.practice.quiz import modern
from pmap_core.practice.quiz import registry as quiz
from pmap_core.train import programs
from pmap_core.train.program import ProgramSpec

N = jax.local_device_count()
MODERN = ("collectives_sum_rows", "collectives_replicate", "shard_map_body_shape", "replicated_output",
          "same_bytes_three_ways", "typeof_sharded")

# What the rules say, for N devices: a sum over the split axis adds partial sums across devices (all-reduce);
# replicating a split array gathers every block (all-gather); one device needs neither.
REFERENCES = {
    "collectives_sum_rows": "all-reduce" if N > 1 else "none",
    "collectives_replicate": "all-gather" if N > 1 else "none",
    "shard_map_body_shape": str((4, 3)),
    "replicated_output": float(N),
    "same_bytes_three_ways": "same",
    "typeof_sharded": f"float32[{4 * N}@data,3]",
}


def test_at_least_five_modern_questions_registered_with_texts():
    assert set(MODERN) <= set(quiz.question_ids()) and len(MODERN) >= 5
    table = text_table("interview")
    for question_id in MODERN:
        assert quiz.get_question(question_id).program.__module__ == modern.__name__
        for key in (f"w.question.{question_id}", f"q.{question_id}.text", f"q.{question_id}.explain"):
            assert table[key]["en"] and table[key]["zh"], key


@pytest.mark.parametrize("question_id", MODERN)
def test_computed_answer_matches_the_reference(question_id):
    answer = quiz.answer(question_id)
    assert answer == pytest.approx(REFERENCES[question_id]) if isinstance(answer, float) \
        else answer == REFERENCES[question_id]
    if quiz.get_question(question_id).kind == quiz.CHOICE:
        offered = quiz.options(question_id)
        assert answer in offered and len(set(offered)) == len(offered) >= 2


def test_the_sum_all_reduces_one_row_of_partial_sums_not_the_array():
    """Independent of the question's code: compile the same sum here and read its bytes."""
    mesh = jax.make_mesh((N,), ("data",))
    x = jax.device_put(np.ones((4 * N, 4), np.float32), NamedSharding(mesh, P("data")))
    found = hlo.collectives(jax.jit(lambda v: v.sum(axis=0)).lower(x).compile().as_text())
    if N > 1:
        assert [(c.kind, c.operand_bytes) for c in found] == [("all-reduce", 4 * 4)]  # 4 float32 partial sums
    else:
        assert found == []


def test_a_p_empty_output_is_whole_on_every_device():
    mesh = jax.make_mesh((N,), ("data",))
    out = jax.jit(lambda v: v + 1, out_shardings=NamedSharding(mesh, P()))(np.arange(6.0))
    assert len(out.addressable_shards) == N
    for shard in out.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), np.arange(6.0) + 1)


def _bytes_moved(impl: str) -> int:
    program = programs.build(ProgramSpec(impl, "mlp", N, 8, 4, 16, 1))
    return sum(c.operand_bytes for c in hlo.collectives(program.compiled.as_text()) if (c.group_size or N) > 1)


def test_each_program_all_reduces_every_gradient_and_not_the_loss():
    """By hand: an MLP of 4 features and 16 hidden units has 4·16 + 16 + 16 + 1 parameters; each step
    all-reduces that many float32 numbers (the loss stays on its device)."""
    expected = (4 * 16 + 16 + 16 + 1) * 4 if N > 1 else 0
    assert {impl: _bytes_moved(impl) for impl in ("pmap", "shard_map", "jit")} == dict.fromkeys(
        ("pmap", "shard_map", "jit"), expected)


def test_typeof_shows_the_sharding_only_over_explicit_axes():
    """What the explanation says about Auto axes, checked: there the type is a plain shape."""
    x = np.zeros((4 * N, 3), np.float32)
    auto = jax.make_mesh((N,), ("data",), axis_types=(AxisType.Auto,))
    assert str(jax.typeof(jax.device_put(x, NamedSharding(auto, P("data"))))) == f"float32[{4 * N},3]"
    explicit = jax.make_mesh((N,), ("data",))
    assert explicit.axis_types == (AxisType.Explicit,)
    assert str(jax.typeof(jax.device_put(x, NamedSharding(explicit, P("data"))))) == f"float32[{4 * N}@data,3]"


def test_a_shard_map_body_keeps_the_rank_and_pmap_drops_the_device_axis():
    seen = {}

    def record(name):
        def body(v):
            seen[name] = v.shape  # while tracing: the shape one device works on
            return v
        return body

    mesh = jax.make_mesh((N,), ("data",))
    x = jax.device_put(jnp.ones((4 * N, 3)), NamedSharding(mesh, P("data")))
    jax.shard_map(record("shard_map"), mesh=mesh, in_specs=P("data"), out_specs=P("data"))(x)
    jax.pmap(record("pmap"))(jnp.ones((N, 4, 3)))
    assert seen == {"shard_map": (4, 3), "pmap": (4, 3)}


def test_interview_page_scores_a_collectives_prediction_with_the_compiled_answer():
    from conftest import assert_clean, open_lab

    at = open_lab("interview", question="collectives_sum_rows")
    assert_clean(at)
    radio = at.radio(key="interview.collectives_sum_rows.guess")
    assert "all-reduce" in radio.options and "none" in radio.options
    radio.set_value(REFERENCES["collectives_sum_rows"]).run()
    at.button(key="interview.check").click().run()
    assert_clean(at)
    assert f"the code returned {REFERENCES['collectives_sum_rows']}" in " ".join(s.value for s in at.success)
    assert "def collectives_sum_rows" in " ".join(c.value for c in at.code)


def test_interview_page_in_chinese_asks_the_typeof_question():
    from conftest import assert_clean, open_lab

    at = open_lab("interview", lang="zh", question="typeof_sharded")
    assert_clean(at)
    assert f"jax.make_mesh(({N},), ('data',))" in " ".join(m.value for m in at.markdown)
    assert REFERENCES["typeof_sharded"] in at.radio(key="interview.typeof_sharded.guess").options
