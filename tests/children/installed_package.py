"""What the installed package holds, seen from the interpreter of a virtual environment it was installed
in: prints one JSON line, {"pmap_core": the file imported, "sheets": the worksheets' ids, "broken": the
worksheets that did not load, "script": the length of the exported training script}.

Run by tests/system/test_package.py by its path (`python .../tests/children/installed_package.py`), not with
`-m`, away from the repository: nothing of the repository is on the path but this file's folder."""

import json

import pmap_core
from pmap_core.export import training_script
from pmap_core.practice.worksheets import load_sheets
from pmap_core.train.config import TrainConfig

if __name__ == "__main__":
    sheets = load_sheets()
    print(json.dumps({"pmap_core": pmap_core.__file__, "sheets": [s.id for s in sheets.sheets],
                      "broken": [str(e) for e in sheets.broken], "script": len(training_script(TrainConfig()))}))
