"""The demo page on this process's device count, D chosen as many (5 steps): prints its info boxes, one a
line; fails on an exception or error box.

Run by tests/system/test_demo_page_devices.py with 16 devices (the tutorial's batch runs on 8 of them)."""

from tests.children.apptest_setup import assert_clean, open_lab


def main() -> None:
    import jax

    from tests.apptest_support import until_done

    at = until_done(open_lab("demo", devices=jax.device_count(), steps=5))  # its run, done in the background
    assert_clean(at)
    print("\n".join(i.value for i in at.info))


if __name__ == "__main__":
    main()
