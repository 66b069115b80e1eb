"""A store whose runs hold odd values, written straight to it with MLflow's own client (as any other
program on a shared server may): digits that `str.isdigit` accepts and `int` refuses ("²", "①"),
numbers too long for an int64 or for `int` itself, blanks, missing params and tags, and names and
codes a spreadsheet or a page could misread. The Experiments and Class pages must show such runs
(their odd values as text) or skip them, never fail."""

from __future__ import annotations

import time

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from pmap_core.tracking import EXPERIMENT, classroom
from pmap_core.tracking.mlflow_backend import experiment_id

CODE = "odd-class"
# Each would break a reader that trusts `isdigit()`, `int()` or an int64 column.
ODD_NUMBERS = ["²", "①", "１２", "-3", "0", "1e3", " ", "", "9" * 40, "9" * 5000, "12abc", "nan"]
ODD_FIGURES = [float("nan"), float("inf"), -float("inf"), -1.0, 0.0]
# Names and values a spreadsheet might run as a formula once a leading blank is trimmed.
ODD_TEXTS = [" =1+2", "\u00a0=1+2", "\n=1+2", "\u2028=1+2", "\t@SUM(A1)", "=HYPERLINK(1)"]


def odd_store(uri: str) -> dict[str, list[str]]:
    """Training runs in the lab's experiment and worksheet runs, one per odd value, all tagged with the
    class `CODE`; returns their run ids by kind: "numbers" (odd settings), "figures" (odd metrics of
    valid settings), "training" (both), "exercise"."""
    client = MlflowClient(uri)
    tags = classroom.class_tags("odd", CODE)
    training = experiment_id(client, EXPERIMENT)
    sheets = experiment_id(client, classroom.EXERCISE_EXPERIMENT)
    now = int(time.time() * 1000)
    made: dict[str, list[str]] = {"numbers": [], "figures": [], "exercise": []}
    for i, odd in enumerate(ODD_NUMBERS):
        text = ODD_TEXTS[i % len(ODD_TEXTS)]
        run = client.create_run(training, run_name=f"odd-{i}",
                                tags={**tags, classroom.STUDENT_TAG: text, "lab": "training"})
        params = {"model": "linear", "global_batch": odd, "devices": odd, "num_processes": odd,
                  "scaling": text, "impl": "pmap" if i % 2 else text, "accum_steps": odd}
        if odd == "":
            del params["global_batch"]  # a param may also be missing
        client.log_batch(run.info.run_id, params=[Param(k, v) for k, v in params.items()],
                         metrics=[Metric(name, value, now, 0) for name, value in
                                  {"throughput": 100.0 + i, "steady_throughput": 120.0 + i,
                                   "scaling_ratio": 1.0, "efficiency": 0.5, "final_loss": 0.1}.items()])
        client.set_terminated(run.info.run_id, "FINISHED")
        made["numbers"].append(run.info.run_id)
    for i, odd in enumerate(ODD_FIGURES):  # valid settings, figures no training measures
        run = client.create_run(training, run_name=f"odd-figure-{i}", tags={**tags, "lab": "training"})
        client.log_batch(run.info.run_id, params=[Param(k, v) for k, v in
                                                  {"model": "linear", "global_batch": "32", "devices": "2",
                                                   "impl": "jit" if i % 2 else "pmap", "scaling": "strong"}.items()],
                         metrics=[Metric(name, odd, now, 0) for name in
                                  ("throughput", "steady_throughput", "scaling_ratio", "efficiency", "final_loss")])
        client.set_terminated(run.info.run_id, "FINISHED")
        made["figures"].append(run.info.run_id)
    made["training"] = made["numbers"] + made["figures"]
    for i, text in enumerate(ODD_TEXTS):
        run = client.create_run(sheets, run_name=f"odd-sheet-{i}", tags={**tags, classroom.STUDENT_TAG: text})
        if i % 2:  # a worksheet run without its sheet tag, and one with an odd one
            client.log_batch(run.info.run_id, tags=[RunTag("sheet", text)])
        client.log_batch(run.info.run_id, metrics=[Metric(f"{classroom.STEP_METRIC}odd {i}", 1.0, now, 0),
                                                   Metric(f"{classroom.STEP_METRIC}²", 0.0, now, 0)])
        client.set_terminated(run.info.run_id, "FINISHED")
        made["exercise"].append(run.info.run_id)
    return made
