"""Back-to-back small collectives, none blocked until the end: each call waits on the previous one's result,
the pattern that aborts XLA's CPU runtime ("only 7 of them arrived on time") without the worker-pool fix in
pmap_core.runtime. Prints `ok <the last sum> <device count>`.

Run by tests/system/test_runtime.py on the default runtime (8 devices)."""

import pmap_core  # noqa: F401 - the device runtime, with its worker pool


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax

    halve_mean = jax.pmap(lambda x: lax.pmean(x, "d") * 0.5, axis_name="d")
    total = jax.pmap(lambda x: lax.psum(x, "d"), axis_name="d")
    x = jnp.ones((8,))
    for _ in range(2000):
        x = halve_mean(x)
    sums = [total(jnp.ones((8, 4))) for _ in range(300)]
    jax.block_until_ready((x, sums))
    print("ok", float(sums[-1][0, 0]), jax.device_count())


if __name__ == "__main__":
    main()
