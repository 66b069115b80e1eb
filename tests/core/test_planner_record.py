"""A plan recorded as an MLflow run with one child run per checked layout, and read back, on a real sqlite store."""

import dataclasses

import pytest
from mlflow.tracking import MlflowClient

from harness.processes import new_tracking_store
from pmap_core.concepts.planner import HARDWARE, MODELS, Layout, Prediction, Workload, plan
from pmap_core.concepts.planner.predict import predict
from pmap_core.concepts.planner.record import PLAN_EXPERIMENT, StoredRun, log_plan, read_plan
from pmap_core.validation import LabInputError

MODEL, HW = MODELS["llama3-8b"], HARDWARE["h100"]
WORKLOAD = Workload(sequences=64, seq_len=4096)


@dataclasses.dataclass(frozen=True)
class Checked:
    """The fields of check.CheckedPlan that a child run records (the real one is built from compiled programs)."""

    layout: Layout
    prediction: Prediction
    compiled_peak_bytes: int | None
    predicted_bytes: dict[str, float]
    hlo_bytes: dict[str, float]
    reasons: tuple[str, ...] = ()

    @property
    def memory_ratio(self) -> float | None:
        return None if self.compiled_peak_bytes is None else self.compiled_peak_bytes / self.prediction.memory.total

    @property
    def axis_ratios(self) -> dict[str, float | None]:
        return {axis: (self.hlo_bytes[axis] / sent if sent else None) for axis, sent in self.predicted_bytes.items()
                if axis in self.hlo_bytes}


def _checked(layout: Layout, peak: int | None, factor: float | None, reasons=()) -> Checked:
    """A layout as if compiled: its HLO sending `factor` times the predicted bytes on every axis (None: not read)."""
    prediction = predict(MODEL, layout, WORKLOAD, HW)
    predicted = {c.axis: c.bytes for c in prediction.comm}
    measured = {axis: sent * factor for axis, sent in predicted.items()} if factor is not None else {}
    return Checked(layout, prediction, peak, predicted, measured, tuple(reasons))


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
    assert params["precision"] == "mixed" and params["assume.achievable"] == "0.6" and params["assume.overlap"] == "0.5"
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


def test_checked_layouts_are_child_runs_that_read_back_under_their_plan(tmp_path, result):
    uri = new_tracking_store(tmp_path / "mlflow.db")
    layouts = [plan_of.layout for plan_of in result.plans[:3]]
    checks = [_checked(layouts[0], 40_000_000_000, 1.1),
              _checked(layouts[1], None, None, reasons=("the compiled program's memory is not known on this backend",)),
              _checked(layouts[2], 30_000_000_000, 0.9)]
    assert checks[0].hlo_bytes and checks[2].axis_ratios
    run_id = log_plan(result, uri, checks)
    stored = read_plan(run_id, uri)
    assert stored.tags["checks"] == "3" and len(stored.children) == 3
    other = log_plan(result, uri)  # a second plan in the store: its run has no children, nor takes these
    assert read_plan(other, uri).children == ()
    for rank, (child, check) in enumerate(zip(stored.children, checks, strict=True), start=1):
        assert isinstance(child, StoredRun) and child.status == "FINISHED"
        assert child.tags["mlflow.parentRunId"] == run_id and child.tags["kind"] == "plan_check"
        assert child.params["rank"] == str(rank) and child.layout() == check.layout
        assert child.params["reasons"] == "; ".join(check.reasons)
        m = child.metrics
        assert m["predicted.memory.total"] == pytest.approx(check.prediction.memory.total)
        assert m["predicted.step_s"] == pytest.approx(check.prediction.step_s)
        for axis, sent in check.predicted_bytes.items():
            assert m[f"predicted.bytes.{axis}"] == pytest.approx(sent)
        for axis, sent in check.hlo_bytes.items():
            assert m[f"measured.bytes.{axis}"] == pytest.approx(sent)
            assert m[f"ratio.bytes.{axis}"] == pytest.approx(check.axis_ratios[axis])
        if check.compiled_peak_bytes is None:
            assert "measured.peak_bytes" not in m and "ratio.memory" not in m
        else:
            assert m["measured.peak_bytes"] == check.compiled_peak_bytes
            assert m["ratio.memory"] == pytest.approx(check.memory_ratio)


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
