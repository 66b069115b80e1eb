"""This machine's roofline and what it predicts for the mesh_2d lab's MLP. Pure: C (one device's matmul FLOP/s,
timed) and W (the β of the ring model fitted to an all-reduce sweep), the Scaling Book's critical batch and
tensor-parallel bound from them beside the book's own machines, this MLP's bounds derived the same way, and which
data × model shape the α-β model predicts fastest (`predicted_winner`). `concepts.mesh_2d` re-exports every name.

Sources, cited next to every figure they give: the Scaling Book (Austin et al. 2025, "How to Scale Your Model",
jax-ml/scaling-book), Part 5 "How to Parallelize a Transformer for Training" (`training.md`: C/W, Y < F/(C/W), the
TPU v5p figures) and Part 12 "How to Think About GPUs" (`gpus.md`: the H100 figures).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pmap_core.costs import analytic, fit
from pmap_core.runtime import describe_runtime
from pmap_core.train import tensor
from pmap_core.validation import LabInputError, check_devices, check_float, check_int

VALUE_BYTES = 4            # this lab's MLP trains and communicates in float32
MATMUL_SIZE = 512          # the roofline's matmul: n × n by n × n, float32 (2n³ FLOPs)
BANDWIDTH_SIZES = (64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024)  # the all-reduce sweep's messages
SCALING_BOOK = "Scaling Book (Austin et al. 2025), Part 5 \"Training\""
SCALING_BOOK_GPUS = "Scaling Book (Austin et al. 2025), Part 12 \"GPUs\""


@dataclasses.dataclass(frozen=True)
class Roofline:
    """This machine's C (matmul FLOP/s of one device) and W (collective bandwidth, the β of the ring
    model fitted to an all-reduce sweep), and what the Scaling Book derives from them."""

    flops_per_s: float              # C: FLOPs (from `compiled.cost_analysis()`) / median seconds
    matmul_size: int
    matmul_flops: float
    matmul_s: float
    beta_bytes_per_s: float | None  # W: None at D = 1 (no collective to time) unless given
    alpha_s: float | None           # per-hop latency of the same fit
    bandwidth_source: str           # how W was found, or what it needs
    devices: int
    physical_cores: int
    simulated: bool
    value_bytes: int = VALUE_BYTES

    @property
    def intensity(self) -> float | None:
        """C / W: FLOPs per byte sent at which compute and communication take equal time."""
        return self.flops_per_s / self.beta_bytes_per_s if self.beta_bytes_per_s else None

    @property
    def critical_batch_per_device(self) -> float | None:
        """The Scaling Book's rule, for its transformer MLP: the per-device batch below which data parallelism
        is communication-bound. The book's C/W counts 2-byte values; a value of `value_bytes` bytes costs
        value_bytes/2 times as much to send (float32: 2·C/W). This MLP's own: `own_bounds`."""
        return self.intensity * self.value_bytes / 2 if self.intensity else None

    def tp_bound(self, hidden: int) -> float | None:
        """The book's tensor-parallel rule, for its transformer MLP: compute-bound while Y < F / (C/W), F the
        hidden width, C/W in the values sent (float32: F / (2·C/W)). This MLP's own: `own_bounds`."""
        critical = self.critical_batch_per_device
        return hidden / critical if critical else None

    def table(self, hidden: int) -> list[dict[str, Any]]:
        """This machine beside the Scaling Book's TPU v5p and H100; `whose` says who measured or stated
        each figure."""
        rows = [{"machine": f"this machine ({'simulated CPU devices' if self.simulated else 'devices'}, "
                            f"{self.physical_cores} physical cores)",
                 "flops_per_s": self.flops_per_s, "bandwidth_bytes_per_s": self.beta_bytes_per_s,
                 "value_bytes": self.value_bytes, "critical_batch_per_device": self.critical_batch_per_device,
                 "tp_bound": self.tp_bound(hidden),
                 "whose": f"measured here: a {self.matmul_size}² float32 matmul on one device; W = "
                          f"{self.bandwidth_source}",
                 "source": "pmap_core.concepts.mesh_2d.roofline; pmap_core.commbench + costs.fit"}]
        for name, flops, bandwidth, source in BOOK_MACHINES:
            critical = flops / bandwidth
            rows.append({"machine": name, "flops_per_s": flops, "bandwidth_bytes_per_s": bandwidth,
                         "value_bytes": analytic.SCALING_BOOK_VALUE_BYTES, "critical_batch_per_device": critical,
                         "tp_bound": hidden / critical, "whose": "the book's figures (bfloat16)", "source": source})
        return rows


# The Scaling Book's figures: TPU v5p C = 4.6e14 bf16 FLOP/s and W = 2 × 9e10 B/s over one ICI axis
# (Part 5: C/W ≈ 2550); H100 C = 9.9e14 and 450e9 B/s of NVLink egress per GPU within a node (Part 12:
# C/W ≈ 2200), 400e9 B/s beyond the node (≈ 2475).
BOOK_MACHINES = (
    ("TPU v5p, one ICI axis", 4.6e14, 1.8e11, SCALING_BOOK),
    ("H100, within a node (NVLink)", 9.9e14, 4.5e11, SCALING_BOOK_GPUS),
    ("H100, beyond a node", 9.9e14, 4.0e11, SCALING_BOOK_GPUS),
)


def matmul_flops_per_s(size: int = MATMUL_SIZE, repeats: int = 5) -> tuple[float, float, float]:
    """(FLOP/s, FLOPs, median seconds) of a jitted float32 `size` × `size` matmul on one device; the FLOPs
    are the compiled program's own count (`compiled.cost_analysis()`)."""
    from pmap_core.timing import time_call

    size = check_int("size", size, 16, 2048)
    a = jax.device_put(np.ones((size, size), np.float32), jax.devices()[0])
    compiled = jax.jit(jnp.matmul).lower(a, a).compile()
    analysis = compiled.cost_analysis()
    flops = float((analysis[0] if isinstance(analysis, list) else analysis)["flops"])
    seconds = time_call(compiled, a, a, repeats=check_int("repeats", repeats, 1, 50)).median_s
    return flops / seconds, flops, seconds


def allreduce_fit(devices: int, sizes: Sequence[int] = BANDWIDTH_SIZES, repeats: int = 3) -> fit.RingFit:
    """α and β of the ring model fitted to all-reduces (psum) of `sizes` bytes on `devices` devices,
    timed as the communication benchmark times them (`commbench`: the slope of a chained loop)."""
    from pmap_core import commbench

    shard = 4 * max(devices, 1)  # each size rounded down to whole float32 shards for D devices (D = 3, 5, …)
    sizes = [max(shard, size // shard * shard) for size in sizes]
    plan = commbench.plan_sweep(["psum"], [devices], sizes, repeats)  # refuses D < 2 and sweeps over budget
    rows = [commbench.measure_collective("psum", devices, size, plan.repeats) for size in plan.sizes]
    return fit.fit_ring("psum", [r.devices for r in rows], [r.bytes for r in rows], [r.seconds for r in rows])


def roofline(devices: int, beta_bytes_per_s: float | None = None, alpha_s: float = 0.0,
             matmul_size: int = MATMUL_SIZE, repeats: int = 5) -> Roofline:
    """This machine's roofline on `devices` devices: C measured (`matmul_flops_per_s`), W either given
    (a β the communication benchmark fitted, with its α) or measured by a quick all-reduce sweep
    (`allreduce_fit`, a few seconds). At D = 1 no collective can be timed: W stays None unless given,
    and `bandwidth_source` says so."""
    devices = check_devices(devices)
    flops_per_s, flops, seconds = matmul_flops_per_s(matmul_size, repeats)
    runtime = describe_runtime()
    if beta_bytes_per_s is not None:
        beta = check_float("beta_bytes_per_s", beta_bytes_per_s, 1.0, 1e15)
        alpha = check_float("alpha_s", alpha_s, 0.0, 1.0)
        source = "the β given (a fit of the communication benchmark)"
    elif devices < 2:
        beta, alpha, source = None, None, "none: an all-reduce needs at least 2 devices (D = 1)"
    else:
        ring = allreduce_fit(devices)
        beta, alpha = ring.beta_bytes_per_s, ring.alpha_s
        source = (f"β of the α-β fit to all-reduces of {len(BANDWIDTH_SIZES)} sizes on {devices} devices "
                  f"(worst ratio {ring.worst_ratio:.2f})")
    return Roofline(flops_per_s, matmul_size, flops, seconds, beta, alpha, source, devices,
                    runtime.physical_cores, runtime.simulated)


@dataclasses.dataclass(frozen=True)
class ShapePrediction:
    data: int
    model: int
    compute_s: float      # the step's FLOPs / (C × the devices' usable cores): the same for every shape
    send_s: float         # bandwidth alone: Σ 2(g−1)/g·bytes/β (what the book's rules weigh against compute)
    ring_comm_s: float    # the ring model per collective: Σ 2(g−1)·α + 2(g−1)/g·bytes/β
    comm_s: float         # the same with one latency term per rendezvous (see `predicted_winner`)
    comm_bytes: float     # bytes one device sends per step (`analytic.tensor_comm_bytes_per_step`)
    collectives: int      # all-reduces per step: the model axis's, the data axis's
    rendezvous: int       # the devices meet this often per step: one per operand on XLA:CPU

    @property
    def step_s(self) -> float:
        """No overlap: on simulated CPU devices a collective blocks every device until all arrive."""
        return self.compute_s + self.comm_s

    @property
    def ring_step_s(self) -> float:
        return self.compute_s + self.ring_comm_s


@dataclasses.dataclass(frozen=True)
class Prediction:
    shapes: tuple[ShapePrediction, ...]
    per_operand: bool     # latency counted per operand (simulated CPU devices) or per collective

    @property
    def winner(self) -> tuple[int, int]:
        """The shape predicted fastest on this machine (ties: fewer bytes)."""
        best = min(self.shapes, key=lambda s: (s.step_s, s.comm_bytes))
        return best.data, best.model

    @property
    def ring_winner(self) -> tuple[int, int]:
        """The shape the plain ring model (one latency per collective, as the book prices it) picks."""
        best = min(self.shapes, key=lambda s: (s.ring_step_s, s.comm_bytes))
        return best.data, best.model


def usable_flops_per_s(roofline: Roofline, devices: int) -> float:
    """C of one device as a step on `devices` devices sees it: simulated devices share the machine's usable
    cores (C × min(D, cores) / D), real ones each have their own."""
    if not roofline.simulated:
        return roofline.flops_per_s
    return roofline.flops_per_s * describe_runtime().hardware_ceiling(devices) / devices


@dataclasses.dataclass(frozen=True)
class OwnBounds:
    """This MLP's bounds, derived the way the Scaling Book derives its own (a step's FLOPs on a device against
    the bytes its all-reduces send at W, no overlap), for the MLP x[B, I] · w1[I, H] → tanh → · w2[H]."""

    devices: int
    flops_per_sample: float        # 4(IH + H) + H: forward 2(IH + H), backward the same plus B·H; x needs none
    device_flops_per_s: float      # `usable_flops_per_s`
    critical_batch_per_device: float  # data parallelism over all D devices is compute-bound above it
    tp_bound: float                # a model axis of Y devices is compute-bound while Y < this


def own_bounds(roofline: Roofline, features: int, hidden: int) -> OwnBounds | None:
    """This MLP's critical batch and model-axis bound on `roofline.devices` devices (None without a W):
    data parallelism over X = D sends 2(X−1)/X·4·(IH + 2H + 1) bytes per step (the gradient) against
    (B/X)·f FLOPs per device, f = 4(IH + H) + H, so it is compute-bound while B/X > 8(X−1)/X·(IH + 2H + 1)/f ·
    C/W; a model axis of Y all-reduces the B/X outputs, 2(Y−1)/Y·4·B/X bytes, against (B/X)·f/Y FLOPs, so it is
    compute-bound while Y − 1 < f/(8·C/W). C is a device's usable share (`usable_flops_per_s`). Where the book
    differs: its weights are D×F twice and its input needs a gradient (6 FLOPs per weight and sample, the
    backward's 4 weighed against the all-reduce), its TP all-reduces B·D activations, not B values."""
    if roofline.beta_bytes_per_s is None:
        return None
    devices = roofline.devices
    f = step_flops(1, features, hidden)
    c = usable_flops_per_s(roofline, devices)
    intensity = c / roofline.beta_bytes_per_s
    weights = features * hidden + 2 * hidden + 1
    critical = 2 * (devices - 1) / devices * VALUE_BYTES * weights / f * intensity
    return OwnBounds(devices, f, c, critical, 1 + f / (2 * VALUE_BYTES * intensity))


def step_flops(batch: int, features: int, hidden: int) -> float:
    """FLOPs of one training step of the MLP (forward 2·B·(DF + F), backward the same for the weights'
    gradients, plus B·F for the hidden layer's; x needs no gradient)."""
    return 4.0 * batch * (features * hidden + hidden) + batch * hidden


GRADIENT_OPERANDS = len(tensor.PARAM_SPECS) + 1  # w1, b1, w2, b2 and the loss: one tuple all-reduce


def _shape_pair(shape: Any) -> tuple[int, int]:
    """(data, model) of a shape given as a pair of whole numbers, or a LabInputError."""
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise LabInputError("unknown_mesh_shape", "a mesh shape is written data x model (4x2), got {shape!r}",
                            shape=shape)
    return check_int("data", shape[0], 1, 1 << 20), check_int("model", shape[1], 1, 1 << 20)


def predicted_winner(roofline: Roofline, shapes: Sequence[tuple[int, int]], sizes: tuple[int, int, int]
                     ) -> Prediction:
    """Which (data, model) shape the roofline predicts fastest for an MLP of `sizes` = (global batch,
    features, hidden). Every shape splits the same FLOPs over the same devices, so compute is equal and
    communication decides: per step, one all-reduce of the B/X partial outputs over the Y devices of
    `model` (2(Y−1) hops) and one of the gradient of 1/Y of the weights (with the loss) over the X devices
    of `data` (2(X−1) hops), priced at this machine's α and β. `ring_winner` counts one latency per
    collective, as the ring model (and the book) does; `winner` counts one per rendezvous, which on
    simulated CPU devices is one per operand: XLA:CPU runs each array of a tuple all-reduce as its own
    rendezvous (measured here: a pytree pmean of 4 arrays took 2.6× the time of one flat buffer), and
    the gradient's all-reduce carries GRADIENT_OPERANDS arrays. Ties go to fewer bytes. Check the winner
    against the measured sweep (`sweep_meshes`)."""
    if not shapes:
        raise LabInputError("no_mesh_shapes", "a prediction needs at least one (data, model) shape, got none")
    if roofline.beta_bytes_per_s is None:
        raise LabInputError("need_two_devices", "a collective needs at least 2 devices, got {devices}",
                            devices=[roofline.devices])
    if not isinstance(sizes, (tuple, list)) or len(sizes) != 3:
        raise LabInputError("mlp_sizes", "the MLP's sizes are (global batch, features, hidden), got {value!r}",
                            value=sizes)
    batch, features, hidden = (check_int(name, value, 1, 1 << 30)
                               for name, value in zip(("batch", "features", "hidden"), sizes, strict=True))
    check_float("flops_per_s", roofline.flops_per_s, 1e-30, math.inf)
    check_float("beta_bytes_per_s", roofline.beta_bytes_per_s, 1e-30, math.inf)
    alpha, beta = roofline.alpha_s or 0.0, roofline.beta_bytes_per_s
    rows = []
    for data, model in map(_shape_pair, shapes):
        devices = data * model
        ceiling = describe_runtime().hardware_ceiling(devices) if roofline.simulated else devices
        compute = step_flops(batch, features, hidden) / (roofline.flops_per_s * ceiling)
        weights = features * hidden / model + 2 * hidden / model + 1
        # (group, values all-reduced, operands) of the model axis's all-reduce, then the data axis's
        parts = [(g, values, operands) for g, values, operands in
                 ((model, batch / data, 1), (data, weights, GRADIENT_OPERANDS)) if g > 1]
        send = sum(2 * (g - 1) / g * values * VALUE_BYTES / beta for g, values, _ in parts)
        meets = [(g, operands if roofline.simulated else 1) for g, _, operands in parts]
        rows.append(ShapePrediction(
            data, model, compute, send, send + sum(2 * (g - 1) * alpha for g, _, _ in parts),
            send + sum(n * 2 * (g - 1) * alpha for g, n in meets),
            analytic.tensor_comm_bytes_per_step(batch, features, hidden, data, model), len(parts),
            sum(n for _, n in meets)))
    return Prediction(tuple(rows), roofline.simulated)
