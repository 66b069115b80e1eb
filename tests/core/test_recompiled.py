"""A training run says whether it compiled, about itself: another session compiling the same
program at the same time must not make this run report a recompile."""

import threading

from pmap_core.train import loop, models, programs
from pmap_core.train.config import TrainConfig

CONFIG = TrainConfig(devices=3, steps=14, chunk=7, global_batch=24, seed=11)


def test_another_session_compiling_the_same_program_does_not_flip_recompiled(monkeypatch):
    programs.build_planned.cache_clear()
    real_make_data = models.make_data
    other = {}

    def make_data(*args, **kwargs):
        # This run has started; before it asks for its program, another session compiles it.
        if threading.current_thread() is threading.main_thread() and not other:
            thread = threading.Thread(target=lambda: other.update(result=loop.train(CONFIG)))
            thread.start()
            thread.join(120)
        return real_make_data(*args, **kwargs)

    monkeypatch.setattr(models, "make_data", make_data)
    ours = loop.train(CONFIG)
    assert other["result"].recompiled is True  # the other session compiled the program
    assert ours.recompiled is False  # this run took it from the cache
    programs.build_planned.cache_clear()
    assert loop.train(CONFIG).recompiled is True
