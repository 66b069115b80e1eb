"""The planner: every parallel axis at once for a model on a cluster, predicted from the lab's own formulas
(`predict.predict`), ranked (`search`), against published runs (`presets.PUBLISHED`)."""

from pmap_core.concepts.planner.predict import REMAT, Assumptions, AxisComm, Layout, Memory, Prediction, Workload
from pmap_core.concepts.planner.presets import HARDWARE, MODELS, PUBLISHED, Hardware, ModelShape, PublishedRun
from pmap_core.concepts.planner.search import Plan, PlanResult, Verdict, evaluate_published, plan, step_parts

__all__ = ["HARDWARE", "MODELS", "PUBLISHED", "REMAT", "Assumptions", "AxisComm", "Hardware", "Layout", "Memory",
           "ModelShape", "Plan", "PlanResult", "Prediction", "PublishedRun", "Verdict", "Workload",
           "evaluate_published", "plan", "step_parts"]
