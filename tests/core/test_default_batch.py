"""The default global batch at every device count: TrainConfig's where D·K divides it, else the multiple
of D·K nearest to it, for the pages, the CLI and export alike, so no default is refused."""

import pytest

from pmap_core import export
from pmap_core.train.config import TrainConfig, default_batch
from pmap_core.train.plan import validate


@pytest.mark.parametrize("devices, accum, batch", [(1, 1, 256), (3, 1, 255), (5, 1, 255), (6, 1, 258), (7, 1, 259),
                                                   (8, 1, 256), (16, 1, 256), (64, 1, 256), (3, 4, 252), (5, 2, 260)])
def test_the_default_batch_splits_into_d_times_k_equal_parts(devices, accum, batch):
    assert default_batch(devices, accum) == batch
    assert validate(TrainConfig(devices=min(devices, 8), global_batch=default_batch(min(devices, 8), accum),
                                accum_steps=accum, impl="jit"))


def test_an_exported_script_starts_from_the_default_batch_of_its_device_count():
    assert "devices=3, impl=pmap, batch=255," in export.script_for("training", {"devices": "3"})
    assert "devices=8, impl=pmap, batch=256," in export.script_for("training", {})
