"""`train --model transformer --remat none|selective|full --json`: what each policy keeps for the backward pass,
what the compiler allocates and counts, and the same training, as a user runs it (a subprocess per policy)."""

import json

import pytest

from harness.processes import run_python

STEPS = 20  # enough for the figures compared here; README gives the policies' losses at the default 300 steps
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = {}
    for remat in ("none", "selective", "full"):
        done = run_python(["-m", "pmap_core", "train", "--model", "transformer", "--remat", remat, "--devices", "2",
                           "--steps", str(STEPS), "--global-batch", "16", "--json", "--no-tracking"],
                          cwd=tmp_path_factory.mktemp(remat), devices=2, timeout=600)
        assert done.returncode == 0, done.stderr
        results[remat] = json.loads(done.stdout)
    return results


def test_each_policy_reports_its_residuals_peak_and_flops(runs):
    for remat, run in runs.items():
        assert run["remat"] == remat
        assert run["residual_bytes_per_device"] > 0 and run["peak_bytes_per_device"] > 0 and run["flops_per_step"] > 0
    residual = {remat: run["residual_bytes_per_device"] for remat, run in runs.items()}
    assert residual["full"] < residual["selective"] < residual["none"]
    assert runs["full"]["peak_bytes_per_device"] < runs["none"]["peak_bytes_per_device"]
    assert runs["full"]["flops_per_step"] > runs["selective"]["flops_per_step"] > runs["none"]["flops_per_step"]


def test_recomputing_changes_no_loss(runs):
    losses = [run["final_loss"] for run in runs.values()]
    assert max(losses) - min(losses) <= 1e-6 * min(losses), losses
