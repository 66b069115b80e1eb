"""On a runtime of real accelerators (a laptop with one GPU, a TPU host), the pages say nothing of simulated
devices: they say so only where the runtime's devices are simulated."""

import dataclasses

import pytest

from tests.apptest_support import assert_clean, open_lab


@pytest.fixture
def one_real_gpu(monkeypatch):
    from labs.ui import hardware

    real = dataclasses.replace(hardware.runtime_info(), backend="gpu", device_kind="NVIDIA H100", simulated=False)
    monkeypatch.setattr(hardware, "runtime_info", lambda: real)
    return real


def shown(at) -> str:
    """The page's own texts (the sidebar says what the runtime is, simulated or not)."""
    return " ".join(e.value for kind in ("markdown", "caption", "info", "warning", "success")
                    for e in getattr(at.main, kind))


@pytest.mark.parametrize("script", ["home", "basics", "device_mapping", "collectives", "manual_parallelism",
                                    "jit_composition", "training", "migration", "comm_benchmark", "demo",
                                    "mistakes", "interview", "applications"])
def test_pages_on_real_devices_do_not_call_them_simulated(one_real_gpu, script):
    at = open_lab(None if script == "home" else script)
    assert_clean(at)
    assert "simulated" not in shown(at).lower()


def test_the_comm_benchmark_says_it_measures_memory_copies_on_simulated_devices():
    at = open_lab("comm_benchmark")
    assert "On simulated CPU devices there are no links" in shown(at)
