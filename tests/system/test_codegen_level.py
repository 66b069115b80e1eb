"""The suite compiles XLA:CPU's generated code at LLVM's level 0 (tests/conftest.py). The same run compiled
at XLA's default level, as the app and the command line run it, must agree: the same compiled program
(bytes on the wire, compiler-reported peak, FLOPs) and the same loss but for the last bits."""

import json
import os

import pytest

from harness.processes import SUITE_CODEGEN_FLAG, run_python

RUN = ["-m", "pmap_core", "train", "--model", "transformer", "--devices", "4", "--mesh", "data=2,model=2",
       "--steps", "10", "--json", "--no-tracking"]
SAME_PROGRAM = ("comm_bytes_per_step", "peak_bytes_per_device", "flops_per_step", "residual_bytes_per_device")


def _train(tmp_path, xla_flags: str) -> dict:
    done = run_python(RUN, cwd=tmp_path, devices=4, env={"XLA_FLAGS": xla_flags}, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_suite_s_codegen_level_changes_no_figure_and_only_the_last_bits_of_the_loss(tmp_path):
    others = [flag for flag in os.environ.get("XLA_FLAGS", "").split() if "xla_backend_optimization_level" not in flag]
    suite, default = _train(tmp_path, " ".join([*others, SUITE_CODEGEN_FLAG])), _train(tmp_path, " ".join(others))
    assert {key: suite[key] for key in SAME_PROGRAM} == {key: default[key] for key in SAME_PROGRAM}
    assert suite["final_loss"] == pytest.approx(default["final_loss"], rel=1e-6, abs=0)
