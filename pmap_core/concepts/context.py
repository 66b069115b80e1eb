"""Context parallelism: the transformer's positions split over a `seq` axis (`train.context`), for a page that shows
its three schemes side by side.

- `ring_schedule(P, layout)`: which K/V block each device holds at each step of ring attention, and where it passes
  it — the schedule the ring program itself runs (`train.context.ring_schedule`, the same function).
- `work_per_device(seq_len, P, layout)`: the causal work of each device, counted from the mask: the unmasked
  (query, key) pairs of its queries. Contiguous blocks give the last device the most; the zig-zag layout gives every
  device the same count.
- `formula_bytes(scheme, …)`: the bytes each device sends per step, by collective, by the formula
  (`costs.analytic.context_comm_terms`, each term cited there); `formula_terms` the terms themselves.
- `measure(…)`: one value-and-gradient step per scheme compiled and run on a data × seq mesh: its bytes by
  collective read from the compiled HLO beside the formula's, the activations one device keeps for its backward pass
  (JAX's residuals, each by its shard), the compiler-reported peak, and the loss beside one device's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding

from pmap_core.costs import analytic
from pmap_core.train import context, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import comm_per_step, compiled_memory, peak_bytes
from pmap_core.train.plan import validate
from pmap_core.validation import LabInputError

SCHEMES, LAYOUTS = context.SCHEMES, context.LAYOUTS
RingSchedule, ring_schedule, layout_positions = context.RingSchedule, context.ring_schedule, context.layout_positions

__all__ = ["LAYOUTS", "SCHEMES", "Measurement", "RingSchedule", "SchemeStep", "formula_bytes", "formula_terms",
           "layout_positions", "measure", "one_device", "ring_schedule", "scheme_step", "work_per_device"]


def work_per_device(seq_len: int, devices: int, layout: str = "contiguous") -> tuple[int, ...]:
    """[device]: the (query, key) pairs its queries attend to under the causal mask (key position ≤ query position),
    counted from the mask itself; they sum to seq_len·(seq_len + 1)/2."""
    mask = np.tril(np.ones((seq_len, seq_len), bool))
    return tuple(int(mask[rows].sum()) for rows in layout_positions(seq_len, devices, layout))


def formula_terms(scheme: str, dims: transformer.Dims, layers: int, batch: int, data: int, seq: int
                  ) -> tuple[analytic.CommTerm, ...]:
    """Each term of a step's bytes per device (`costs.analytic.context_comm_terms`): `batch` sequences over `data`
    groups, the positions over `seq` devices, Ψ the transformer's parameters."""
    return analytic.context_comm_terms(scheme, batch, dims.seq_len, dims.d_model, layers,
                                       transformer.param_count(dims, layers), data, seq)


def formula_bytes(scheme: str, dims: transformer.Dims, layers: int, batch: int, data: int, seq: int
                  ) -> dict[str, float]:
    """The formula's bytes per device per step, by collective (the names compiled HLO gives them)."""
    return analytic.comm_by_collective(formula_terms(scheme, dims, layers, batch, data, seq))


@dataclasses.dataclass(frozen=True)
class SchemeStep:
    """One value-and-gradient step of a scheme on a data × seq mesh, per device."""

    scheme: str
    layout: str
    data: int
    seq: int
    loss: float
    grads: dict[str, np.ndarray]
    comm_by_kind: dict[str, float]      # ring bytes per collective, from the compiled HLO
    formula_by_kind: dict[str, float]   # the same by the formula
    residual_bytes: int                 # JAX's residuals, each by its shard on one device
    peak_bytes: int | None              # compiler-reported: arguments + outputs − aliases + temporaries
    hlo: str                            # the compiled program

    @property
    def comm_bytes(self) -> float:
        return sum(self.comm_by_kind.values())

    @property
    def formula_total(self) -> float:
        return sum(self.formula_by_kind.values())


def _config(dims: transformer.Dims, layers: int, batch: int, data: int, seq: int, scheme: str,
            layout: str) -> TrainConfig:
    """The run these settings are, checked as the CLI checks it: every refusal a LabInputError of one line."""
    return validate(TrainConfig(model="transformer", impl="context", devices=data * seq, global_batch=batch,
                                layers=layers, d_model=dims.d_model, heads=dims.heads, seq_len=dims.seq_len,
                                vocab=dims.vocab, mesh_seq=seq, context=scheme, context_layout=layout))


def _inputs(dims: transformer.Dims, layers: int, batch: int, seed: int):
    params = transformer.init_params(dims, layers, seed)
    x, y = transformer.make_sequences(dims, batch, seed)
    return params, x, y


def scheme_step(dims: transformer.Dims, layers: int, batch: int, data: int, seq: int, scheme: str,
                layout: str = "contiguous", seed: int = 0) -> SchemeStep:
    """`jax.value_and_grad` of `train.context.loss` for `batch` sequences, compiled on a `data` × `seq` mesh and run
    once on the seed's parameters and sequences."""
    _config(dims, layers, batch, data, seq, scheme, layout)
    mesh = context.context_mesh(data, seq)
    params, x, y = _inputs(dims, layers, batch, seed)
    placed = ({name: jax.device_put(value, NamedSharding(mesh, context.WHOLE)) for name, value in params.items()},
              *(jax.device_put(context.arrange(t, seq, layout), NamedSharding(mesh, context.TOKENS)) for t in (x, y)))
    step = jax.value_and_grad(lambda p, x_, y_: context.loss(p, x_, y_, mesh, scheme, layout))
    compiled = jax.jit(step).lower(*placed).compile()
    loss, grads = compiled(*placed)
    hlo = compiled.as_text()
    return SchemeStep(scheme, layout, data, seq, float(loss), {name: np.asarray(g) for name, g in grads.items()},
                      comm_per_step(hlo, 1).by_kind, formula_bytes(scheme, dims, layers, batch, data, seq),
                      context.residual_bytes_per_device(mesh, scheme, layout, *placed),
                      peak_bytes(compiled_memory(compiled)), hlo)


def one_device(dims: transformer.Dims, layers: int, batch: int, seed: int = 0) -> tuple[float, dict[str, np.ndarray]]:
    """The unsplit model's loss and gradients on one device, for the same parameters and sequences."""
    params, x, y = _inputs(dims, layers, batch, seed)
    loss, grads = jax.jit(jax.value_and_grad(lambda p: transformer.loss(p, jnp.asarray(x), jnp.asarray(y))))(params)
    return float(loss), {name: np.asarray(g) for name, g in grads.items()}


@dataclasses.dataclass(frozen=True)
class Measurement:
    """Every scheme's step at one mesh, beside one device's loss; a scheme the mesh refuses (Ulysses with a seq axis
    that does not divide the heads) is in `refused`, with its one-line reason."""

    reference_loss: float
    steps: dict[str, SchemeStep]
    refused: dict[str, LabInputError]


def measure(dims: transformer.Dims, layers: int, batch: int, seq: int, data: int = 1, layout: str = "contiguous",
            schemes: Sequence[str] = SCHEMES, seed: int = 0) -> Measurement:
    """One value-and-gradient step of each of `schemes` on a `data` × `seq` mesh (`scheme_step`)."""
    steps, refused = {}, {}
    for scheme in schemes:
        try:
            steps[scheme] = scheme_step(dims, layers, batch, data, seq, scheme, layout, seed)
        except LabInputError as error:
            refused[scheme] = error
    return Measurement(one_device(dims, layers, batch, seed)[0], steps, refused)
