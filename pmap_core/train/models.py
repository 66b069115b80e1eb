"""The two models the lab trains, and their synthetic data, generated from a seed.

- "linear": y = w·x + b fitted to y = 3x + 1 (the tutorial's example, with the
  bias it forgot), x uniform in [-1, 1] plus a little noise.
- "transformer": a small decoder-only transformer (`train.transformer`, `layers` blocks) trained on next-token
  prediction of a random Markov chain drawn from the seed: x and y are (B, seq_len) int32 tokens.
- "mlp": `layers` layers (default 2: one hidden tanh layer, then the output layer; more: the first
  hidden tanh layer, L − 2 residual tanh layers h + tanh(h w + b) / L of width `hidden`, then the output
  layer), fitted to a smooth random teacher function of `features` inputs. Layer k's parameters are
  w{k} and b{k}.

Parameters are plain dicts of arrays (a pytree), so `jax.grad` and `lax.pmean`
work on them leaf by leaf.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.ad_checkpoint import saved_residuals  # the list print_saved_residuals prints

from pmap_core.train import transformer
from pmap_core.train.transformer import Dims

MODELS = ("linear", "mlp", "transformer")
TRANSFORMER = "transformer"
TRUE_W, TRUE_B = 3.0, 1.0
NOISE = 0.01


@dataclasses.dataclass(frozen=True)
class Dataset:
    """Host arrays of one global batch: x is (B, features), y is (B,); the transformer's x and y are
    (B, seq_len) int32 tokens, y the next token at each position of x."""

    x: np.ndarray
    y: np.ndarray


def make_data(model: str, samples: int, features: int, seed: int, dims: Dims | None = None) -> Dataset:
    """The same `samples` examples for the same seed, whatever the device count (`dims`: the
    transformer's sizes, default `Dims()`)."""
    if model == TRANSFORMER:
        return Dataset(*transformer.make_sequences(dims or Dims(), samples, seed))
    rng = np.random.default_rng(seed)
    if model == "linear":
        x = rng.uniform(-1.0, 1.0, size=(samples, 1)).astype(np.float32)
        y = TRUE_W * x[:, 0] + TRUE_B + NOISE * rng.standard_normal(samples)
        return Dataset(x, y.astype(np.float32))
    teacher = np.random.default_rng(seed + 1_000_003).standard_normal(features) / np.sqrt(features)
    x = rng.standard_normal((samples, features)).astype(np.float32)
    y = np.sin(2.0 * x @ teacher) + NOISE * rng.standard_normal(samples)
    return Dataset(x, y.astype(np.float32))


def init_params(model: str, features: int, hidden: int, seed: int, layers: int = 2,
                dims: Dims | None = None) -> dict[str, np.ndarray]:
    """Initial parameters as host NumPy arrays (so every device count starts identically). The MLP's
    weights are drawn layer after layer from one generator: its first two draws are the 2-layer model's.
    The transformer's (`layers` blocks of `dims`) are `transformer.init_params`'."""
    if model == TRANSFORMER:
        return transformer.init_params(dims or Dims(), layers, seed)
    if model == "linear":
        return {"w": np.zeros((), np.float32), "b": np.zeros((), np.float32)}
    rng = np.random.default_rng(seed + 7)
    params: dict[str, np.ndarray] = {}
    for k in range(1, layers + 1):
        fan_in = features if k == 1 else hidden
        shape = (fan_in,) if k == layers else (fan_in, hidden)
        params[f"w{k}"] = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        params[f"b{k}"] = np.zeros(() if k == layers else (hidden,), np.float32)
    return params


def linear_loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean squared error of y ≈ w·x + b, for x and y of the same shape."""
    return jnp.mean((params["w"] * x + params["b"] - y) ** 2)


def layer_names(model: str, layers: int = 2, experts: int = 0) -> tuple[tuple[str, ...], ...]:
    """The layers of `model`, in the order the forward pass runs them, by the names of their parameters:
    the unit that a sharded strategy gathers whole just before it is used (train.zero), and that a
    pipeline stage holds (train.pipeline). `experts`: the transformer's, > 0 for a mixture of experts."""
    if model == "linear":
        return (("w", "b"),)
    if model == TRANSFORMER:
        return transformer.layer_names(layers, experts)
    return tuple((f"w{k}", f"b{k}") for k in range(1, layers + 1))


# The layers of each model at its default depth.
LAYERS = {model: layer_names(model) for model in MODELS}


def stage_layers(model: str, layers: int, stages: int) -> tuple[tuple[int, ...], ...]:
    """[stage]: the positions in `layer_names(model, layers)` of the layers each of `stages` pipeline stages
    runs, in order. The repeated layers (the MLP's `layers` layers, the transformer's `layers` blocks) split
    evenly, `layers / stages` each; the transformer's embedding goes before the first stage's blocks and its
    head after the last stage's, as Megatron-LM and GPipe place them, so the first and last stages carry a
    little more work than the others."""
    first = 1 if model == TRANSFORMER else 0  # the embedding, before the blocks
    per = layers // stages
    split = [list(range(first + s * per, first + (s + 1) * per)) for s in range(stages)]
    split[0][:0] = range(first)
    split[-1].extend(range(first + layers, len(layer_names(model, layers))))  # the transformer's head
    return tuple(tuple(stage) for stage in split)


def activation_shape(model: str, rows: int, hidden: int, dims: Dims | None = None) -> tuple[int, ...]:
    """The shape of what one layer hands the next for `rows` rows (what a pipeline stage sends the next one):
    the MLP's (rows, hidden), the transformer's residual stream (rows, seq_len, d_model), both float32."""
    if model == TRANSFORMER:
        dims = dims or Dims()
        return rows, dims.seq_len, dims.d_model
    return rows, hidden


def depth(model: str, params: dict[str, Any]) -> int:
    """The number of layers of `model` whose parameters are `params` (the transformer's blocks)."""
    if model == TRANSFORMER:
        return transformer.depth(params)
    return 1 if model == "linear" else sum(1 for name in params if name.startswith("w"))


def residual_scale(layer: int, layers: int) -> float | None:
    """The weight 1/L of layer `layer`'s tanh branch when it is one of an L-layer MLP's residual layers (the
    hidden layers after the first: none at the default depth 2), else None.

    Why residual, and why 1/L: trained with SGD at the lab's η = 0.1, a plain stack of 4 tanh layers
    sharpens as its loss falls (the Hessian's largest eigenvalue, measured on the default data by power
    iteration: 8.5 at step 0, between 17.6 and 25.2 from step 125 on) until it reaches 2/η = 20, where
    gradient descent stops being stable along that direction (Cohen et al. 2021, "Gradient descent on
    neural networks typically occurs at the edge of stability"): the loss jumps up and down, and rounding
    differences of 1e-7 between two correct summation orders (one device against four, data against
    pipeline parallelism) grow to 1e-3 in 300 steps. A smaller or orthogonal initialization of the hidden
    layers delays that by a few dozen steps, no more (measured: every one ends at 2/η). Residual layers
    whose branch is scaled down by the depth keep a deep network close to its shallow part (Zhang et al.
    2019, Fixup; De & Smith 2020, SkipInit; Bordelon et al. 2023, 1/L branches): measured, the largest
    eigenvalue stays under 12 over 300 steps (seeds 0–3 at L = 4, 0–1 at L = 8; under 16 over 1,000 steps
    at seed 0), and one order of the sums against another ends within 1e-5 (tests/core/test_pipeline.py)."""
    return 1.0 / layers if 0 < layer < layers - 1 else None


def apply_layer(model: str, layer: int, params: dict[str, jax.Array], h: jax.Array, layers: int = 2) -> jax.Array:
    """Layer `layer` of an L = `layers`-layer `model` on its input h, with that layer's parameters: the MLP's
    first hidden tanh layer, its residual tanh layers (`residual_scale`), then its output layer (the one
    whose weight is a vector); linear regression's one layer. The last layer returns (b,). The transformer's
    layers are its embedding, its `layers` blocks and its head (`transformer.apply_layer`), the last returning
    logits."""
    if model == TRANSFORMER:
        return transformer.apply_layer(layer, params, h, layers)
    if model == "linear":
        return params["w"] * h[:, 0] + params["b"]
    w, b = params[f"w{layer + 1}"], params[f"b{layer + 1}"]
    if w.ndim == 1:
        return h @ w + b
    scale = residual_scale(layer, layers)
    if scale is None:
        return jnp.tanh(h @ w + b)
    return h + scale * jnp.tanh(h @ w + b)


def predict(model: str, params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    """Model output for a batch x of shape (b, features): shape (b,), layer after layer."""
    h, layers = x, depth(model, params)
    for layer in range(layers):
        h = apply_layer(model, layer, params, h, layers)
    return h


def loss(model: str, params: dict[str, jax.Array], x: jax.Array, y: jax.Array, remat: str = "none") -> jax.Array:
    """Mean squared error over the batch; the transformer's: next-token cross-entropy over batch and positions
    (`remat`: which of its blocks' activations the backward pass recomputes, `transformer.REMAT_POLICIES`)."""
    if model == "linear":
        return linear_loss(params, x[:, 0], y)
    if model == TRANSFORMER:
        return transformer.loss(params, x, y, remat=remat)
    return output_loss(model, predict(model, params, x), y)


def output_loss(model: str, output: jax.Array, y: jax.Array) -> jax.Array:
    """The loss of the last layer's output: mean squared error (linear, MLP), cross-entropy of the logits
    (transformer)."""
    if model == TRANSFORMER:
        return transformer.cross_entropy(output, y)
    return jnp.mean((output - y) ** 2)


def input_shapes(model: str, rows: int, features: int) -> tuple[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct]:
    """The shapes and dtypes of `rows` rows of x and y, `features` values in a row of x (`ProgramSpec.features`,
    `TrainConfig.input_features`): (rows, features) and (rows,) float32, or the transformer's (rows, seq_len)
    int32 tokens, both."""
    if model == TRANSFORMER:
        tokens = jax.ShapeDtypeStruct((rows, features), np.int32)
        return tokens, tokens
    return jax.ShapeDtypeStruct((rows, features), np.float32), jax.ShapeDtypeStruct((rows,), np.float32)


def multiply_adds_per_sample(model: str, features: int, hidden: int, layers: int = 2,
                             dims: Dims | None = None) -> int:
    """Forward multiply-adds for one example: the unit of the work limit (the transformer's:
    `transformer.multiply_adds_per_sample`, one sequence)."""
    if model == "linear":
        return 1
    if model == TRANSFORMER:
        return transformer.multiply_adds_per_sample(dims or Dims(), layers)
    return features * hidden + (layers - 2) * hidden * hidden + hidden


def saved_activation_bytes(model: str, rows: int, features: int, hidden: int, layers: int = 2,
                           dims: Dims | None = None, remat: str = "none") -> int:
    """Bytes of the activations the loss's forward pass saves for its backward on `rows` rows of one device:
    JAX's own list of the gradient's residuals (`jax.ad_checkpoint.print_saved_residuals` prints it), traced
    with abstract arrays, nothing run; the loss's arguments (parameters, the batch), which a step holds
    anyway, are left out."""
    params = init_params(model, features, hidden, 0, layers, dims)
    x, y = input_shapes(model, rows, features)
    shapes = jax.tree.map(lambda p: jax.ShapeDtypeStruct(p.shape, p.dtype), params)
    return residual_bytes(saved_residuals(lambda p, x_, y_: loss(model, p, x_, y_, remat), shapes, x, y))


def residual_bytes(found: list, per_device: bool = False) -> int:
    """Bytes of the residuals in `found` (`saved_residuals`' (aval, source) pairs), the loss's arguments left out;
    `per_device`: each counted by its shard on one device, as its type's sharding splits it."""
    def size(aval) -> int:
        shape = aval.sharding.shard_shape(aval.shape) if per_device else aval.shape
        return int(np.prod(shape)) * aval.dtype.itemsize

    return sum(size(aval) for aval, source in found if not source.startswith("from the argument"))
