"""A process that imports only the training config makes and reads a run by a program's setting: the lab's programs
declare their settings when their modules are imported, and those modules import the config."""

import json

from harness.processes import run_python

CODE = """
import json
from pmap_core.train.config import TrainConfig
config = TrainConfig(devices=8, strategy="zero3", top_k=1)
print(json.dumps([config.strategy, config.top_k, TrainConfig().schedule]))
"""


def test_a_config_made_by_a_programs_setting_in_a_process_that_imported_only_the_config():
    done = run_python(CODE, devices=8, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["zero3", 1, "gpipe"]
