"""The sharded data parallel lab and the ZeRO interview questions on this process's device count: the page
trains and measures at every device (a small model), and each ZeRO question is answered and checked.

Prints `PAGE <the run's D> <the device counts measured>`, then `QUESTION <id> <answer>` for each ZeRO
question; fails on an exception or error box. Run by tests/system/test_sharded_dp_devices.py at 1, 3 and
16 devices, one process each."""

from tests.children.apptest_setup import assert_clean, give_prediction, open_lab


def main() -> None:
    import jax

    from pmap_core.practice.quiz import zero

    devices = jax.device_count()
    at = open_lab("sharded_dp", devices=devices, batch=48, steps=2, hidden=8, features=4, measure_max=1)
    assert_clean(at)
    for button in ("sharded_dp.train", "sharded_dp.measure"):
        at.button(key=button).click().run()
        assert_clean(at)
    run = at.session_state["sharded_dp.last_run"][0].result
    measured = sorted({f.devices for f in at.session_state["sharded_dp.footprints"]})
    print("PAGE", run.config.devices, measured, flush=True)
    for question in zero.QUESTIONS:
        at = give_prediction(open_lab("interview", question=question.id), f"interview.{question.id}.guess")
        at.button(key="interview.check").click().run()
        assert_clean(at)
        print("QUESTION", question.id, at.session_state["interview.results"][question.id]["answer"], flush=True)


if __name__ == "__main__":
    main()
