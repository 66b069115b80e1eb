"""The 2-D mesh lab on this process's device count: prints one JSON line, {"devices", "problems" (the
exceptions and error boxes, where), "said" (the info boxes per language), "trained" (the run's mesh_data
and mesh_model params in the session's MLflow store), "sweep_disabled"}, and with more than one device,
after a prediction of 3x1 and a sweep, "swept" (the shapes measured), "verdict", "regime" and "dp" (the
data-parallel shape's predicted compute and communication, µs).

Run by tests/system/test_mesh_2d_and_pipeline_devices.py at 1 and 3 devices, with the other lab in the
same process (tests/children/mesh_2d_and_pipeline_pages.py)."""

import json

from tests.children.apptest_setup import SESSION_TRACKING_URI, open_lab


def main() -> dict:
    import jax
    from mlflow.tracking import MlflowClient

    from tests.apptest_support import until_done

    found = {"devices": jax.device_count(), "problems": [], "said": {}}

    def check(at, where):
        found["problems"] += [f"{where}: {e.value}" for e in [*at.exception, *at.error]]

    for lang in ("en", "zh"):
        at = until_done(open_lab("mesh_2d", lang=lang, steps=10))  # what it compiles in the background shown
        check(at, lang)
        found["said"][lang] = " ".join(i.value for i in at.info)
    at = open_lab("mesh_2d", steps=10)
    at.button(key="mesh_2d.train").click().run()
    check(at, "train")
    tracked = at.session_state["mesh_2d.last_run"]
    params = MlflowClient(SESSION_TRACKING_URI).get_run(tracked.run_id).data.params
    found["trained"] = [params["mesh_data"], params["mesh_model"]]
    found["sweep_disabled"] = at.button(key="mesh_2d.sweep").disabled
    if jax.device_count() > 1:
        at.radio(key="mesh_2d.guess").set_value("3x1").run()
        at.button(key="mesh_2d.sweep").click().run()
        check(at, "sweep")
        shown = at.session_state["mesh_2d.last_sweep"]
        found["swept"] = [f"{r.data}x{r.model}" for r in shown.sweep.runs]
        found["verdict"] = [m.value for m in at.markdown if "On this machine" in m.value]
        dp = next(p for p in shown.prediction.shapes if p.model == 1)
        found["regime"] = [m.value for m in at.markdown if "by bandwidth alone" in m.value]
        found["dp"] = [dp.compute_s * 1e6, dp.comm_s * 1e6]
    return json.loads(json.dumps(found))


if __name__ == "__main__":
    print(json.dumps(main()))
