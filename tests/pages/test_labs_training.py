"""The training and experiments pages: real runs tracked in a sqlite store, read back from it."""


import numpy as np
import pytest

from harness.processes import new_tracking_store
from pmap_core.tracking import experiments
from pmap_core.train import advice as impl_advice
from pmap_core.train.programs import IMPLEMENTATIONS
from tests.apptest_support import assert_clean, open_lab


def metrics(at):
    return {m.label: m.value for m in at.metric}


def test_training_page_waits_for_the_button(store):
    at = open_lab("training")
    assert_clean(at)
    assert "training.last_run" not in at.session_state
    assert any("press" in i.value for i in at.info)


def test_train_click_runs_tracks_and_reads_back(store):
    at = open_lab("training", batch=16, steps=200, lr=0.2, devices=4)
    at.button(key="training.train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    tracked = at.session_state["training.last_run"]
    run_id = tracked.run_id
    result = tracked.result
    assert result.config.devices == 4 and result.config.global_batch == 16
    assert result.losses[-1] < result.losses[0] / 10  # it learned
    assert abs(float(result.params["w"]) - 3.0) < 0.2 and abs(float(result.params["b"]) - 1.0) < 0.1
    assert any("identical" in s.value for s in at.success)
    shown = metrics(at)
    assert shown["learned w"] == f"{float(result.params['w']):.4f}"
    assert "Scaling ratio S(D)" in shown
    assert any(run_id in c.value and store in c.value for c in at.code)  # plain text, never markdown

    runs = experiments.load_runs(store)
    row = runs[runs["run_id"] == run_id].iloc[0]
    assert row["status"] == "FINISHED" and row["devices"] == 4 and row["global_batch"] == 16
    np.testing.assert_allclose(row["final_loss"], result.final_loss, rtol=1e-6)
    np.testing.assert_allclose(row["scaling_ratio"], tracked.scaling.scaling_ratio, rtol=1e-6)
    history = experiments.loss_histories([run_id], store)
    np.testing.assert_allclose(history["loss"], result.losses, rtol=1e-6)


def test_sweep_click_runs_every_device_count(store):
    at = open_lab("training", model="mlp", batch=32, steps=20, hidden=8)
    at.button(key="training.sweep").click().run()
    assert not at.exception, [e.value for e in at.exception]
    tracked = at.session_state["training.last_sweep"]
    parent_id = tracked.run_id
    assert [p.devices for p in tracked.sweep.points] == [1, 2, 4, 8]
    table = at.dataframe[-1].value
    assert list(table["D"]) == [1, 2, 4, 8]
    assert table["S(D)"].iloc[0] == 1.0
    runs = experiments.load_runs(store)
    children = experiments.sweep_runs(runs, parent_id)
    assert list(children["devices"]) == [1, 2, 4, 8]
    np.testing.assert_allclose(children["throughput"], [p.result.throughput for p in tracked.sweep.points], rtol=1e-6)


@pytest.mark.parametrize(("devices", "batch"), [(3, 255), (5, 255), (6, 258), (8, 256)])
def test_the_default_batch_is_the_multiple_of_d_nearest_the_config_default(store, devices, batch):
    """A device count that does not divide TrainConfig's batch opens on the nearest batch that splits."""
    at = open_lab("training", devices=devices)
    assert_clean(at)
    assert at.number_input(key="training.batch").value == batch
    assert f"b = {batch} / {devices} = {batch // devices} samples" in " ".join(c.value for c in at.caption)
    if devices == 3:
        at.button(key="training.train").click().run()
        assert_clean(at)
        assert at.session_state["training.last_run"].result.config.global_batch == 255


def test_the_sweep_button_names_the_device_counts_it_trains_on(store):
    at = open_lab("training", devices=4, batch=12)  # 12 splits over 1, 2 and 4, not over 8
    help_text = at.button(key="training.sweep").help
    assert "D = 1, 2, 4 " in help_text and "batch 12, which does not split evenly over D = 8" in help_text
    at = open_lab("training", batch=64)
    assert "D = 1, 2, 4, 8 " in at.button(key="training.sweep").help and "left out" not in \
        at.button(key="training.sweep").help


def test_a_run_on_one_device_has_no_replicas_to_compare_and_no_scaling_to_measure(store):
    at = open_lab("training", devices=1, steps=50)
    at.button(key="training.train").click().run()
    assert_clean(at)
    assert not any("identical" in s.value for s in at.success)
    assert any("only copy of the parameters" in i.value for i in at.info)
    assert any("its own one-device baseline" in m.value for m in at.markdown)
    assert "Scaling ratio S(D)" not in metrics(at) and "Efficiency E(D)" not in metrics(at)


def test_an_efficiency_of_one_reads_100_percent(store):
    import dataclasses

    at = open_lab("training", devices=2, steps=50)
    at.button(key="training.train").click().run()
    tracked = at.session_state["training.last_run"]
    perfect = dataclasses.replace(tracked.scaling, scaling_ratio=2.0, efficiency=1.0)
    at.session_state["training.last_run"] = dataclasses.replace(
        tracked, result=dataclasses.replace(tracked.result, scaling=perfect))
    at.run()
    assert_clean(at)
    assert metrics(at)["Efficiency E(D)"] == "100 %" and metrics(at)["Scaling ratio S(D)"] == "2×"


# The experiments page reads a store of its own (tracked_runs): a test here may run in another
# worker than the trainings above, or without them.
def test_experiments_page_shows_the_tracked_runs(tracked_runs):
    store = tracked_runs
    runs = experiments.load_runs(store)
    assert len(runs) == 6  # three trainings, a sweep's parent and its 2 children
    at = open_lab("experiments")
    assert_clean(at)
    table = at.dataframe[0].value
    assert set(runs["run_id"]) == set(table["run_id"])
    assert store in [c.value for c in at.code]  # the URI is plain text, never markdown
    assert any(c.value == experiments.ui_command(store) for c in at.code)
    assert len(at.multiselect(key="experiments.loss_runs").value) > 0


def test_experiments_filters_by_model_and_batch(tracked_runs):
    at = open_lab("experiments", model="mlp", batch=64)
    assert_clean(at)
    table = at.dataframe[0].value
    assert set(table["model"]) == {"mlp"} and set(table["global_batch"]) == {64}
    at.selectbox(key="experiments.model").set_value("linear").run()
    assert any("No run matches" in i.value for i in at.info)
    at = open_lab("experiments", batch=12_345)  # a batch no run used: refused, all batches shown
    assert not at.exception
    assert any("`batch`" in w.value for w in at.warning)
    assert at.selectbox(key="experiments.batch").value == "all"


def test_a_diverging_run_says_at_which_step_and_the_experiments_page_shows_it(store):
    at = open_lab("training", lr=10, steps=40, batch=32, devices=2)
    at.button(key="training.train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    said = [e.value for e in at.error]
    assert any("diverged at step 16 of 40" in e and "for example to 0.1" in e for e in said), said
    everything = " ".join(e.value for kind in (at.error, at.warning, at.success, at.info, at.markdown, at.caption)
                          for e in kind)
    assert "averaged" not in everything  # the replicas were never compared: the run stopped first
    assert "training.last_run" not in at.session_state and not metrics(at)

    runs = experiments.load_runs(store)
    failed = runs[runs["status"] == "FAILED"]
    assert len(failed) == 1 and failed["diverged_at_step"].iloc[0] == 16
    assert len(experiments.loss_histories(list(failed["run_id"]), store)) == 15  # every finite loss, no more
    at = open_lab("experiments")
    assert_clean(at)
    table = at.dataframe[0].value
    row = table[table["run_id"] == failed["run_id"].iloc[0]].iloc[0]
    assert row["status"] == "FAILED" and row["diverged_at_step"] == 16
    assert any("1 of these runs diverged" in c.value for c in at.caption)


def test_the_learning_rate_follows_the_width_until_one_is_typed(store):
    at = open_lab("training", model="mlp")
    lr = at.number_input(key="training.lr")
    assert lr.value == 0.1
    at.number_input(key="training.hidden").set_value(256).run()
    assert at.number_input(key="training.lr").value == 0.0125
    assert any("default η for width 256 is 0.0125" in c.value for c in at.caption)
    at.number_input(key="training.lr").set_value(0.05).run()
    at.number_input(key="training.hidden").set_value(1024).run()
    assert at.number_input(key="training.lr").value == 0.05  # typed: it stays
    at = open_lab("training", model="mlp", hidden=1024)
    assert at.number_input(key="training.lr").value == 0.003125
    at = open_lab("training", model="mlp", hidden=1024, lr=0.1)  # a link's η stays what the link says
    assert at.number_input(key="training.lr").value == 0.1


def test_experiments_count_sweep_parents_apart_and_give_them_no_figures(tracked_runs):
    at = open_lab("experiments")
    assert_clean(at)
    assert any(c.value.startswith("5 training runs shown, and 1 sweep parents") for c in at.caption)
    table = at.dataframe[0].value
    parent = table[table["run_name"].str.startswith("sweep-")].iloc[0]
    assert parent[["throughput", "steady_throughput", "scaling_ratio", "efficiency", "final_loss"]].isna().all()


def test_training_bad_inputs_are_explained(store):
    at = open_lab("training", batch=63)
    assert not at.exception
    assert any("does not split evenly" in e.value and "56" in e.value for e in at.error)
    assert at.button(key="training.train").disabled
    at = open_lab("training", lr=-1, steps=99_999)
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    assert "`lr`" in warned and "`steps`" in warned


def test_training_page_in_chinese(store):
    at = open_lab("training", lang="zh", model="mlp")
    assert_clean(at)
    assert at.title[0].value == "训练实战"
    assert at.number_input(key="training.hidden").label == "隐藏层宽度（模型规模）"


def test_experiments_empty_store_in_chinese(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/empty.db")
    at = open_lab("experiments", lang="zh")
    assert_clean(at)
    assert any("还没有运行记录" in i.value for i in at.info)


def test_experiments_unreadable_store_is_a_clear_error(tmp_path, monkeypatch):
    broken = tmp_path / "broken.db"
    broken.write_text("this is not a database\n" * 100)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{broken}")
    at = open_lab("experiments")
    assert not at.exception
    assert any("cannot be used" in e.value for e in at.error)
    assert any(c.value.endswith("is not a sqlite database") for c in at.code)


def test_unreachable_server_falls_back_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the fallback store is created in the working directory
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")  # nothing listens on port 9
    at = open_lab("training", batch=8, steps=10, devices=2)
    at.button(key="training.train").click().run()
    assert not at.exception
    tracked = at.session_state["training.last_run"]
    run_id = tracked.run_id
    assert tracked.fell_back_to and "mlflow-fallback.db" in tracked.fell_back_to
    assert any(tracked.fell_back_to in w.value for w in at.warning)
    runs = experiments.load_runs(tracked.fell_back_to)
    assert list(runs["run_id"]) == [run_id]  # the run id shown is the one in the fallback store
    at = open_lab("experiments")
    assert any("does not answer" in e.value and "mlflow-fallback.db" in e.value for e in at.error)


def test_sweep_of_every_implementation_compares_them_and_advises(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", new_tracking_store(tmp_path / "mlflow.db"))
    at = open_lab("training", batch=32, steps=20, compare="true")
    at.button(key="training.sweep").click().run()
    assert_clean(at)
    points = at.session_state["training.last_sweep"].sweep.points
    assert sorted((p.result.config.impl, p.devices) for p in points) == sorted(
        (impl, d) for impl in IMPLEMENTATIONS for d in (1, 2, 4, 8))
    assert sorted(set(at.dataframe[-1].value["Implementation"])) == sorted(IMPLEMENTATIONS)
    # The advice shown is the one computed from the sweep's own figures.
    behind = [a for a in impl_advice.advise(impl_advice.from_points(points)) if not a.default_ok]
    shown = [m.value for m in at.info if "was fastest here" in m.value]
    assert len(shown) == len(behind)
    for advice, message in zip(behind, shown, strict=True):
        assert message.startswith(f"At D = {advice.devices}, {advice.fastest} was fastest here")
    kept = [m.value for m in at.success if "is within 10% of the fastest" in m.value]
    assert len(kept) == (0 if behind else 1)
