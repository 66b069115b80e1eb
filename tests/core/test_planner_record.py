"""A plan recorded as an MLflow run with one child run per checked layout, and read back, on a real sqlite store."""

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.concepts.planner import HARDWARE, MODELS, Workload, check, plan
from pmap_core.concepts.planner.record import PLAN_EXPERIMENT, StoredRun, log_plan, read_plan
from pmap_core.validation import LabInputError

ROOT = Path(__file__).resolve().parents[2]
MODEL, HW = MODELS["llama3-8b"], HARDWARE["h100"]
WORKLOAD = Workload(sequences=64, seq_len=4096)


@pytest.fixture(scope="module")
def result():
    return plan(MODEL, HW, 16, WORKLOAD)


def test_a_plan_run_holds_the_setting_the_chosen_layout_and_its_predictions(tmp_path, result):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    run_id = log_plan(result, uri)
    stored = read_plan(run_id, uri)
    first = result.plans[0].prediction
    assert stored.status == "FINISHED" and stored.children == ()
    assert stored.tags["lab"] == "planner" and stored.tags["kind"] == "plan"
    params = stored.params
    assert (params["model"], params["hardware"], params["devices"]) == ("llama3-8b", "h100", "16")
    assert params["model_source"] == MODEL.source and params["hardware_source"] == HW.source
    assert (params["seq_len"], params["sequences"], params["global_batch_tokens"]) == ("4096", "64", str(64 * 4096))
    assert params["precision"] == "mixed" and params["assume.overlap"] == "0.5"
    assert params["assume.achievable"] == "by operation"
    assert stored.layout() == first.layout and params["layout.label"] == first.layout.label()
    assert params["chosen_fits"] == "True" and params["verdict.bound"] == result.verdict.bound
    metrics = stored.metrics
    assert metrics["plans_fitting"] == len(result.plans) and metrics["plans_unfit"] == len(result.unfit)
    for name in ("params", "grads", "optimizer", "activations", "logits"):
        assert metrics[f"memory.{name}"] == pytest.approx(getattr(first.memory, name))
    assert metrics["memory.total"] == pytest.approx(first.memory.total)
    for name in ("step_s", "compute_s", "bubble", "mfu", "hfu"):
        assert metrics[name] == pytest.approx(getattr(first, name)), name
    assert first.comm, "the chosen layout communicates over some axis"
    for comm in first.comm:
        assert metrics[f"comm.{comm.axis}.bytes"] == pytest.approx(comm.bytes)
        assert metrics[f"comm.{comm.axis}.seconds"] == pytest.approx(comm.seconds)
        assert params[f"comm.{comm.axis}.level"] == comm.level and params[f"comm.{comm.axis}.link"] == comm.link
    # apart from the training runs the Experiments page compares
    client = MlflowClient(uri)
    assert client.get_experiment(client.get_run(run_id).info.experiment_id).name == PLAN_EXPERIMENT


def test_checked_layouts_are_child_runs_that_read_back_under_their_plan(tmp_path):
    """The lab's transformer planned on this runtime's 8 devices, its top three layouts compiled here
    (`check.check_top`), each logged as a child run of the plan's and read back."""
    uri = new_tracking_store(tmp_path / "mlflow.db")
    result = check.lab_plan(8)
    checks = list(check.check_top(8))
    assert [c.layout for c in checks] == [p.layout for p in result.plans[:3]]
    run_id = log_plan(result, uri, checks)
    stored = read_plan(run_id, uri)
    assert stored.tags["checks"] == "3" and len(stored.children) == 3
    other = log_plan(result, uri)  # a second plan in the store: its run has no children, nor takes these
    assert read_plan(other, uri).children == ()
    for rank, (child, checked) in enumerate(zip(stored.children, checks, strict=True), start=1):
        assert isinstance(child, StoredRun) and child.status == "FINISHED"
        assert child.tags["mlflow.parentRunId"] == run_id and child.tags["kind"] == "plan_check"
        assert child.params["rank"] == str(rank) and child.layout() == checked.layout
        assert child.params["reasons"] == "; ".join(checked.reasons)
        m = child.metrics
        assert m["predicted.memory.total"] == pytest.approx(checked.prediction.memory.total)
        assert m["predicted.step_s"] == pytest.approx(checked.prediction.step_s)
        for axis, sent in checked.predicted_bytes.items():
            assert m[f"predicted.bytes.{axis}"] == pytest.approx(sent)
        for axis, sent in checked.hlo_bytes.items():
            assert m[f"hlo.bytes.{axis}"] == pytest.approx(sent)
            assert m[f"ratio.bytes.{axis}"] == pytest.approx(checked.axis_ratios[axis])
        if checked.compiled_peak_bytes is None:
            assert "compiled.peak_bytes" not in m and "ratio.memory" not in m
        else:
            assert m["compiled.peak_bytes"] == checked.compiled_peak_bytes
            assert m["ratio.memory"] == pytest.approx(checked.memory_ratio)
    # README says what these child runs hold: predictions beside the compiler's figures, none of them measured.
    held = {name for child in stored.children for name in child.metrics}
    said = readme_check_sentence()
    for prefix in ("predicted.", "compiled.peak_bytes", "hlo.bytes."):
        assert f"`{prefix}" in said and any(name.startswith(prefix) for name in held), prefix
    assert "compiler-reported" in said and "HLO" in said and "measured" not in said


def readme_check_sentence() -> str:
    """README's sentence on what `plan --check --track` records, as one line."""
    text = " ".join((ROOT / "README.md").read_text().split())
    start = text.index("with `--check`, each compiled layout")
    return text[start:text.index(". ", start)]


def test_a_plan_nothing_fits_records_the_least_memory_layout(tmp_path):
    nothing = plan(MODELS["llama3-405b"], HARDWARE["h100"], 8, Workload(sequences=8, seq_len=8192))
    assert not nothing.plans and nothing.verdict is None
    uri = new_tracking_store(tmp_path / "mlflow.db")
    stored = read_plan(log_plan(nothing, uri), uri)
    assert stored.params["chosen_fits"] == "False" and stored.metrics["plans_fitting"] == 0
    assert stored.layout() == nothing.unfit[0].layout and stored.metrics["fits"] == 0


def test_read_plan_refuses_an_id_the_store_does_not_hold(tmp_path):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    for run_id in ("0" * 32, "x' or '1'='1"):
        with pytest.raises(LabInputError) as refused:
            read_plan(run_id, uri)
        assert refused.value.code == "plan_run"
