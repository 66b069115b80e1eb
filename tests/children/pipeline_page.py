"""The pipeline lab on this process's device count: prints one JSON line, {"devices", "cores" (physical),
"problems" (the exceptions and error boxes, where), "said" (info, warnings and captions per language),
"data_button" (whether a button trains a data axis beside the pipeline), "stages", "cells" (the schedule's
time slots), and after a prediction and a measurement at hidden=8, "peaks" (both schedules' peak bytes) and
"timed" (the microbatch counts timed, or null)}.

Run by tests/system/test_mesh_2d_and_pipeline_devices.py at 1 and 3 devices, with the other lab in the
same process (tests/children/mesh_2d_and_pipeline_pages.py)."""

import json

from tests.children.apptest_setup import open_lab


def main() -> dict:
    import jax

    from pmap_core.runtime import physical_cores

    found = {"devices": jax.device_count(), "cores": physical_cores(), "problems": [], "said": {}}

    def check(at, where):
        found["problems"] += [f"{where}: {e.value}" for e in [*at.exception, *at.error]]

    for lang in ("en", "zh"):
        at = open_lab("pipeline", lang=lang)
        check(at, lang)
        found["said"][lang] = " ".join(m.value for m in [*at.info, *at.warning, *at.caption])
        found["data_button"] = any(b.key == "pipeline.train_data" for b in at.button)
    found["stages"] = at.session_state["pipeline.stages"]
    found["cells"] = len(at.dataframe[0].value.columns) - 1
    at = open_lab("pipeline", hidden=8)
    at.radio(key="pipeline.guess").set_value("same").run()
    at.button(key="pipeline.measure").click().run()
    check(at, "measure")
    measured = at.session_state["pipeline.last"]
    found["peaks"] = [row.peak_bytes for row in measured.memory]
    found["timed"] = None if measured.fit is None else [p.microbatches for p in measured.fit.points]
    return json.loads(json.dumps(found))


if __name__ == "__main__":
    print(json.dumps(main()))
