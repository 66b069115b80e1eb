"""`python -m pmap_core train --model transformer` as a user runs it: a subprocess, one JSON object on stdout."""

import json
import math

from harness.processes import run_python


def test_train_transformer_prints_a_result(tmp_path):
    done = run_python(["-m", "pmap_core", "train", "--model", "transformer", "--devices", "2", "--steps", "4",
                       "--json", "--no-tracking"], cwd=tmp_path, devices=2, timeout=180)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["model"], result["devices"], result["steps"], result["global_batch"]) == ("transformer", 2, 4, 256)
    assert (result["d_model"], result["heads"], result["seq_len"], result["vocab"]) == (32, 4, 32, 32)
    assert math.isfinite(result["final_loss"]) and result["run_id"] is None
    assert "step 4/4" in done.stderr
