"""The 2-D mesh lab, then the pipeline lab, on this process's device count: prints one JSON line,
{"mesh_2d": what tests/children/mesh_2d_page.py finds, "pipeline": what tests/children/pipeline_page.py finds}.

Run by tests/system/test_mesh_2d_and_pipeline_devices.py at 1 and 3 devices, one process each (both labs in
one process: starting a process costs more than a page)."""

import json

from tests.children import mesh_2d_page, pipeline_page  # each imports tests.children.apptest_setup first

if __name__ == "__main__":
    print(json.dumps({"mesh_2d": mesh_2d_page.main(), "pipeline": pipeline_page.main()}))
