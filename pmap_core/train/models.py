"""The two models the lab trains, and their synthetic data, generated from a seed.

- "linear": y = w·x + b fitted to y = 3x + 1 (the tutorial's example, with the
  bias it forgot), x uniform in [-1, 1] plus a little noise.
- "mlp": one hidden tanh layer, fitted to a smooth random teacher function of
  `features` inputs.

Parameters are plain dicts of arrays (a pytree), so `jax.grad` and `lax.pmean`
work on them leaf by leaf.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

MODELS = ("linear", "mlp")
TRUE_W, TRUE_B = 3.0, 1.0
NOISE = 0.01


@dataclasses.dataclass(frozen=True)
class Dataset:
    """Host arrays of one global batch: x is (B, features), y is (B,)."""

    x: np.ndarray
    y: np.ndarray


def make_data(model: str, samples: int, features: int, seed: int) -> Dataset:
    """The same `samples` examples for the same seed, whatever the device count."""
    rng = np.random.default_rng(seed)
    if model == "linear":
        x = rng.uniform(-1.0, 1.0, size=(samples, 1)).astype(np.float32)
        y = TRUE_W * x[:, 0] + TRUE_B + NOISE * rng.standard_normal(samples)
        return Dataset(x, y.astype(np.float32))
    teacher = np.random.default_rng(seed + 1_000_003).standard_normal(features) / np.sqrt(features)
    x = rng.standard_normal((samples, features)).astype(np.float32)
    y = np.sin(2.0 * x @ teacher) + NOISE * rng.standard_normal(samples)
    return Dataset(x, y.astype(np.float32))


def init_params(model: str, features: int, hidden: int, seed: int) -> dict[str, np.ndarray]:
    """Initial parameters as host NumPy arrays (so every device count starts identically)."""
    if model == "linear":
        return {"w": np.zeros((), np.float32), "b": np.zeros((), np.float32)}
    rng = np.random.default_rng(seed + 7)
    return {
        "w1": (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32),
        "b1": np.zeros((hidden,), np.float32),
        "w2": (rng.standard_normal((hidden,)) / np.sqrt(hidden)).astype(np.float32),
        "b2": np.zeros((), np.float32),
    }


def linear_loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error of y ≈ w·x + b, for x and y of the same shape."""
    return jnp.mean((params["w"] * x + params["b"] - y) ** 2)


# The layers of each model, in the order the forward pass runs them, by the names of their parameters:
# the unit that a sharded strategy gathers whole just before it is used (train.zero).
LAYERS = {"linear": (("w", "b"),), "mlp": (("w1", "b1"), ("w2", "b2"))}


def apply_layer(model: str, layer: int, params: dict[str, jax.Array], h: jax.Array) -> jax.Array:
    """Layer `layer` of `model` on its input h, with that layer's parameters: the MLP's hidden tanh
    layer, then its output layer; linear regression's one layer. The last layer returns (b,)."""
    if model == "linear":
        return params["w"] * h[:, 0] + params["b"]
    if layer == 0:
        return jnp.tanh(h @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def predict(model: str, params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    """Model output for a batch x of shape (b, features): shape (b,), layer after layer."""
    h = x
    for layer in range(len(LAYERS[model])):
        h = apply_layer(model, layer, params, h)
    return h


def loss(model: str, params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error over the batch."""
    if model == "linear":
        return linear_loss(params, x[:, 0], y)
    return jnp.mean((predict(model, params, x) - y) ** 2)


def multiply_adds_per_sample(model: str, features: int, hidden: int) -> int:
    """Forward multiply-adds for one example: the unit of the work limit."""
    if model == "linear":
        return 1
    return features * hidden + hidden
