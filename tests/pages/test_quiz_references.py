"""Every interview question has an independent reference (in tests/core/test_quiz.py,
tests/core/test_quiz_mesh.py, tests/core/test_quiz_pipeline.py, tests/core/test_quiz_activation_memory.py,
tests/core/test_quiz_context_parallel.py, tests/core/test_quiz_expert_parallel.py,
tests/core/test_quiz_planner.py, tests/pages/test_quiz_modern.py or
tests/pages/test_sharded_dp.py) or is measured. It reads modules that hold page tests too, so it runs with them."""

from pmap_core.practice.quiz import registry as quiz
from tests.core.test_quiz import REFERENCES
from tests.core.test_quiz_activation_memory import REFERENCES as REMAT_REFERENCES  # the activation-memory questions
from tests.core.test_quiz_context_parallel import REFERENCES as CONTEXT_REFERENCES  # the context-parallel questions
from tests.core.test_quiz_expert_parallel import REFERENCES as EXPERT_REFERENCES  # the expert-parallel questions
from tests.core.test_quiz_mesh import REFERENCES as MESH_REFERENCES  # the 2-D mesh questions
from tests.core.test_quiz_pipeline import REFERENCES as PIPELINE_REFERENCES  # the pipeline questions
from tests.core.test_quiz_planner import REFERENCES as PLANNER_REFERENCES  # the planning questions


def test_every_question_has_a_reference_or_is_measured():
    from tests.pages.test_quiz_modern import REFERENCES as MODERN_REFERENCES  # the jit / shard_map questions
    from tests.pages.test_sharded_dp import REFERENCES as ZERO_REFERENCES  # the ZeRO / FSDP questions

    assert (set(quiz.question_ids()) - set(REFERENCES) - set(MODERN_REFERENCES) - set(ZERO_REFERENCES)
            - set(MESH_REFERENCES) - set(PIPELINE_REFERENCES) - set(REMAT_REFERENCES) - set(CONTEXT_REFERENCES)
            - set(EXPERT_REFERENCES) - set(PLANNER_REFERENCES)
            == {"measured_speedup"})
