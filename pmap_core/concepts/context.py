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

For the page (`labs/context_parallel.py`), its worksheet and its interview questions: `check_settings` (the page's
limits, then the run as the CLI checks it), `measured` (`measure` of those settings, kept), the ring's attention bytes
against all-gather's (`attention_bytes`, `ring_vs_allgather`), the residuals traced over `sweep_seq_lens` and their
s² coefficient against one device's (`sweep_residuals`, `quadratic_share`), Ulysses's cap asked of the program's
check (`ulysses_devices`), and the ring's overlap condition on cited hardware (`Overlap`, `overlaps`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding

from pmap_core.costs import analytic
from pmap_core.train import config as train_config
from pmap_core.train import context, models, transformer
from pmap_core.train.config import TrainConfig
from pmap_core.train.footprint import BytesBeside, comm_per_step, compiled_memory, peak_bytes
from pmap_core.train.plan import validate
from pmap_core.train.program import abstract
from pmap_core.validation import LabInputError, check_int

SCHEMES, LAYOUTS = context.SCHEMES, context.LAYOUTS
RingSchedule, ring_schedule, layout_positions = context.RingSchedule, context.ring_schedule, context.layout_positions

__all__ = ["FEWER", "LAYOUTS", "MORE", "ONE_DEVICE", "SAME", "SCHEMES", "Measurement", "Overlap", "ResidualSweep",
           "RingSchedule", "SchemeStep", "Settings", "attention_bytes", "check_settings", "compare", "default_batch",
           "default_seq_len", "formula_bytes", "formula_terms", "layout_positions", "loss_gap", "measure",
           "measured", "one_device", "overlap", "overlap_block", "overlaps", "quadratic_share", "residual_bytes",
           "ring_schedule", "ring_vs_allgather", "run_config", "scheme_step", "schemes_for", "sent_bytes",
           "sweep_residuals", "sweep_seq_lens", "ulysses_devices", "ulysses_max_devices", "work_per_device",
           "work_ratio"]


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
class SchemeStep(BytesBeside):
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
    """One value-and-gradient step of each of `schemes` on a `data` × `seq` mesh (`scheme_step`); the settings are
    checked first, as the CLI checks them (with all-gather, which every mesh that splits the positions runs), and a
    scheme of another name is refused."""
    _config(dims, layers, batch, data, seq, SCHEMES[0], layout)
    for scheme in schemes:
        if scheme not in SCHEMES:
            raise LabInputError("unknown_context", "{field} must be one of {options}, got {value!r}",
                                field="context", options=", ".join(SCHEMES), value=scheme)
    steps, refused = {}, {}
    for scheme in schemes:
        try:
            steps[scheme] = scheme_step(dims, layers, batch, data, seq, scheme, layout, seed)
        except LabInputError as error:
            refused[scheme] = error
    return Measurement(one_device(dims, layers, batch, seed)[0], steps, refused)


# ---- for the page, its worksheet and its questions: the settings, the sweep, the trade-offs ----

ONE_DEVICE = "one"   # the unsplit model, beside the schemes in a sweep
VOCAB = transformer.Dims().vocab
MIN_LAYERS = 2       # TrainConfig's least for the transformer
# A compile of three schemes in seconds on 2 cores, and a sweep of traces in seconds, at the largest of each.
MAX_BATCH, MAX_SEQ_LEN, MAX_D_MODEL, MAX_HEADS, MAX_LAYERS, MAX_DEVICES = 16, 64, 64, 8, 4, 8
SWEEP_POINTS, SWEEP_SHORTEST = 4, 8  # the sweep's lengths: the first four multiples of a step of at least 8
ATTENTION = "attention"  # what a scheme's own collectives send (everything but the gradient's all-reduce)
FEWER, SAME, MORE = "ring sends fewer", "the same", "ring sends more"
SAME_WITHIN = 0.02   # "the same" bytes: within 2%
# The ring's overlap condition on real hardware: bfloat16 K and V blocks (2 bytes a value).
OVERLAP_VALUE_BYTES = 2


@dataclasses.dataclass(frozen=True)
class Settings:
    """A page's run: `batch` sequences, `layers` blocks, P = `devices` on the seq axis (data 1), a layout."""

    batch: int
    layers: int
    devices: int
    layout: str
    dims: transformer.Dims

    @property
    def block(self) -> int:
        """Tokens of each sequence a device holds: seq_len / P."""
        return self.dims.seq_len // self.devices


def check_settings(batch: int, seq_len: int, d_model: int, heads: int, layers: int, devices: int,
                   layout: str = "contiguous") -> Settings:
    """The page's sizes within its limits, then the run as the CLI checks it (`train.plan.validate`: heads dividing
    d_model, the seq axis dividing the batch and the sequence, twice over for zig-zag); a LabInputError of one line
    that says which otherwise. Ulysses's own limit (P dividing the heads) is the scheme's, not the settings'."""
    batch = check_int("batch", batch, 1, MAX_BATCH)
    seq_len = check_int("seq_len", seq_len, 2, MAX_SEQ_LEN)
    d_model = check_int("d_model", d_model, 1, MAX_D_MODEL)
    heads = check_int("heads", heads, 1, MAX_HEADS)
    layers = check_int("layers", layers, MIN_LAYERS, MAX_LAYERS)
    devices = check_int("devices", devices, 1, MAX_DEVICES)
    dims = transformer.Dims(d_model, heads, seq_len, VOCAB)
    _config(dims, layers, batch, 1, devices, "allgather", layout)
    return Settings(batch, layers, devices, layout, dims)


def schemes_for(settings: Settings) -> dict[str, LabInputError | None]:
    """Each scheme, with the error the program refuses it with at these settings (Ulysses: P must divide the
    heads), or None where it runs."""
    found: dict[str, LabInputError | None] = {}
    for scheme in SCHEMES:
        try:
            _config(settings.dims, settings.layers, settings.batch, 1, settings.devices, scheme, settings.layout)
            found[scheme] = None
        except LabInputError as error:
            found[scheme] = error
    return found


def default_seq_len(devices: int) -> int:
    """The page's first sequence length on P devices: the shortest of at least 32 tokens that both layouts split
    (a multiple of 2P)."""
    chunks = 2 * max(devices, 1)
    return min(chunks * -(-32 // chunks), MAX_SEQ_LEN)


def default_batch(devices: int) -> int:
    """The page's first batch on P devices: the fewest sequences, at least 4, that split over them."""
    devices = max(devices, 1)
    return min(devices * -(-4 // devices), MAX_BATCH)


def run_config(settings: Settings, scheme: str = "ring") -> TrainConfig:
    """The page's run with `scheme` as `train` takes it (data 1, P on the seq axis): what its trace steps."""
    return _config(settings.dims, settings.layers, settings.batch, 1, settings.devices, scheme, settings.layout)


@functools.lru_cache(maxsize=16)
def _measured_step(settings: Settings, scheme: str) -> SchemeStep:
    return scheme_step(settings.dims, settings.layers, settings.batch, 1, settings.devices, scheme, settings.layout)


@functools.lru_cache(maxsize=8)
def _reference_loss(settings: Settings) -> float:
    return one_device(settings.dims, settings.layers, settings.batch)[0]


def measured(settings: Settings, on_scheme=None) -> Measurement:
    """`measure` of the page's settings (every scheme, data 1), each step kept for the next click of the same
    settings; `on_scheme(name)` before each scheme that runs and before one device's loss (ONE_DEVICE)."""
    steps, refused = {}, {}
    for scheme, error in schemes_for(settings).items():
        if error is not None:
            refused[scheme] = error
            continue
        if on_scheme is not None:
            on_scheme(scheme)
        steps[scheme] = _measured_step(settings, scheme)
    if on_scheme is not None:
        on_scheme(ONE_DEVICE)
    return Measurement(_reference_loss(settings), steps, refused)


def attention_bytes(by_kind: dict[str, float]) -> float:
    """Bytes per device a step's scheme itself sends: every collective but the gradient's (and the loss's)
    all-reduce, which every scheme sends alike."""
    return sum(value for kind, value in by_kind.items() if kind != "all-reduce")


def compare(ring: float, allgather: float) -> str:
    """FEWER, SAME (within SAME_WITHIN of all-gather's) or MORE: the ring's attention bytes against all-gather's."""
    if abs(ring - allgather) <= SAME_WITHIN * max(abs(allgather), 1.0):
        return SAME
    return FEWER if ring < allgather else MORE


def ring_vs_allgather(measurement: Measurement) -> str:
    """What the compiled steps say of the ring's attention bytes against all-gather's (`compare`)."""
    ring, gathered = (attention_bytes(measurement.steps[s].comm_by_kind) for s in ("ring", "allgather"))
    return compare(ring, gathered)


def loss_gap(measurement: Measurement) -> float:
    """The largest |loss − one device's| / one device's over the schemes that ran."""
    reference = measurement.reference_loss
    return max((abs(step.loss - reference) / reference for step in measurement.steps.values()), default=0.0)


def work_ratio(seq_len: int, devices: int, layout: str = "contiguous") -> float:
    """The busiest device's causal work over the least busy one's (`work_per_device`)."""
    work = work_per_device(seq_len, devices, layout)
    return max(work) / min(work)


def sweep_seq_lens(devices: int, layout: str = "contiguous") -> tuple[int, ...]:
    """SWEEP_POINTS sequence lengths a layout of P devices can split: multiples of a step that is itself a multiple
    of its chunk count (P, or 2P for zig-zag) and at least SWEEP_SHORTEST."""
    chunks = context.chunk_count(devices, layout)
    step = chunks * -(-SWEEP_SHORTEST // chunks)
    return tuple(step * k for k in range(1, SWEEP_POINTS + 1))


def residual_bytes(dims: transformer.Dims, layers: int, batch: int, seq: int, scheme: str,
                   layout: str = "contiguous") -> int:
    """The activations one device keeps for its backward pass (JAX's residuals, each by its shard), traced on a
    1 × `seq` mesh over abstract arguments: nothing is compiled or run. `scheme` ONE_DEVICE: the unsplit model."""
    params = transformer.init_params(dims, layers, 0)
    if scheme == ONE_DEVICE:
        x = jax.ShapeDtypeStruct((batch, dims.seq_len), np.int32)
        return models.residual_bytes(models.saved_residuals(
            lambda p, x_, y_: transformer.loss(p, x_, y_), params, x, x))
    mesh = context.context_mesh(1, seq)
    args = ({name: abstract(mesh, np.shape(value), context.WHOLE) for name, value in params.items()},
            *(abstract(mesh, (batch, dims.seq_len), context.TOKENS, np.int32) for _ in range(2)))
    return context.residual_bytes_per_device(mesh, scheme, layout, *args)


@dataclasses.dataclass(frozen=True)
class ResidualSweep:
    """One scheme's (or ONE_DEVICE's) residual bytes per device at each sequence length, and their fit
    c0 + c1·s + c2·s² (least squares)."""

    scheme: str
    seq_lens: tuple[int, ...]
    residual_bytes: tuple[int, ...]

    @property
    def fit(self) -> tuple[float, float, float]:
        c2, c1, c0 = np.polyfit(np.asarray(self.seq_lens, float), np.asarray(self.residual_bytes, float), 2)
        return float(c0), float(c1), float(c2)


def sweep_residuals(settings: Settings, on_scheme=None) -> tuple[ResidualSweep, ...]:
    """One device's residuals and each scheme's that runs at these settings, at `sweep_seq_lens` (the settings'
    own sequence length aside); `on_scheme(name)` before each."""
    lens = sweep_seq_lens(settings.devices, settings.layout)
    names = [ONE_DEVICE, *(s for s, refused in schemes_for(settings).items() if refused is None)]
    found = []
    for name in names:
        if on_scheme is not None:
            on_scheme(name)
        found.append(ResidualSweep(name, lens, tuple(
            residual_bytes(dataclasses.replace(settings.dims, seq_len=s), settings.layers, settings.batch,
                           settings.devices, name, settings.layout) for s in lens)))
    return tuple(found)


def quadratic_share(batch: int, d_model: int, heads: int, layers: int, devices: int, scheme: str,
                    layout: str = "contiguous") -> float:
    """A scheme's fitted s² coefficient of residual bytes per device over one device's (`sweep_residuals`, at
    `sweep_seq_lens`): 1/P where the score-sized residuals split evenly over the seq axis."""
    lens = sweep_seq_lens(devices, layout)
    settings = check_settings(batch, lens[0], d_model, heads, layers, devices, layout)
    fits = {}
    for name in (ONE_DEVICE, scheme):
        fits[name] = ResidualSweep(name, lens, tuple(
            residual_bytes(dataclasses.replace(settings.dims, seq_len=s), layers, batch, devices, name, layout)
            for s in lens)).fit[2]
    return fits[scheme] / fits[ONE_DEVICE]


@functools.lru_cache(maxsize=16)
def _step(batch: int, seq_len: int, d_model: int, heads: int, layers: int, devices: int, scheme: str,
          layout: str) -> SchemeStep:
    return scheme_step(transformer.Dims(d_model, heads, seq_len, VOCAB), layers, batch, 1, devices, scheme, layout)


def sent_bytes(batch: int, seq_len: int, d_model: int, heads: int, layers: int, devices: int, scheme: str,
               layout: str = "contiguous") -> float:
    """Bytes per device per step the scheme's own collectives send (`attention_bytes`), read from the compiled HLO
    of one step on a 1 × P mesh; 0 on one device."""
    return attention_bytes(_step(batch, seq_len, d_model, heads, layers, devices, scheme, layout).comm_by_kind)


def formula_attention_bytes(scheme: str, dims: transformer.Dims, layers: int, batch: int, seq: int) -> float:
    """The formula's bytes for the same (`formula_bytes`, data 1, the all-reduce left out)."""
    return attention_bytes(formula_bytes(scheme, dims, layers, batch, 1, seq))


def ulysses_devices(heads: int, most: int = MAX_DEVICES) -> tuple[int, ...]:
    """The seq axes of at most `most` devices on which the program runs Ulysses with `heads` heads (asked of the
    program's own check, `train.context.check`)."""
    heads = check_int("heads", heads, 1, train_config.MAX_HEADS)  # the program's limits, not the page's
    most = check_int("devices", most, 1, train_config.MAX_MESH_SEQ)
    allowed = []
    for seq in range(1, most + 1):
        config = TrainConfig(model="transformer", impl="context", devices=seq, global_batch=seq, heads=heads,
                             seq_len=seq, mesh_seq=seq, context="ulysses")
        try:
            context.check(config)
            allowed.append(seq)
        except LabInputError:
            pass
    return tuple(allowed)


def ulysses_max_devices(heads: int) -> int:
    """The most devices the seq axis may have for Ulysses with `heads` heads (`ulysses_devices`)."""
    return max(ulysses_devices(heads, max(heads, 1) * 2))


@dataclasses.dataclass(frozen=True)
class Overlap:
    """The ring's overlap on one accelerator and link (`costs.analytic`'s cited figures): each ring step a device
    multiplies its Q block by the K/V block it holds while it passes that block on. With t tokens a block, b
    sequences and width d, the step computes 4·b·t²·d FLOPs (QKᵀ and the product with V, every pair, masked or
    not) and sends 2·b·t·d values (K and V) of `value_bytes`: the transfer hides behind the compute when
    4bt²d / F ≥ 2btd·w / β, that is t ≥ w·F / (2β) (the condition of Liu et al. 2023, arXiv 2310.01889, §3:
    a block's compute time at least its transfer time; the counts are this lab's)."""

    accelerator: str
    link: str
    flops_per_s: float
    bytes_per_s: float
    value_bytes: float

    @property
    def min_block(self) -> float:
        """The fewest tokens a block at which the transfer hides: w·F / (2β)."""
        return self.value_bytes * self.flops_per_s / (2 * self.bytes_per_s)

    def times(self, block: int, batch: int, d_model: int) -> tuple[float, float]:
        """(compute, transfer) seconds of one ring step of one layer at `block` tokens."""
        return (4 * batch * block ** 2 * d_model / self.flops_per_s,
                2 * batch * block * d_model * self.value_bytes / self.bytes_per_s)


def overlap(accelerator: str, link: str, value_bytes: float = OVERLAP_VALUE_BYTES) -> Overlap:
    """`Overlap` of `analytic.ACCELERATORS[accelerator]` over `analytic.LINKS[link]`."""
    chip, wire = analytic.ACCELERATORS[accelerator], analytic.LINKS[link]
    return Overlap(accelerator, link, chip.peak_tflops * 1e12, wire.bandwidth_gbps * 1e9, value_bytes)


def overlap_block(accelerator: str, link: str, value_bytes: float = OVERLAP_VALUE_BYTES) -> float:
    """The fewest tokens per device a ring block needs for its transfer to hide behind its compute (`Overlap`)."""
    return overlap(accelerator, link, value_bytes).min_block


# Accelerators over the links they are built with (`costs.analytic`'s names): H100s inside a node (NVLink 4) and
# across nodes (InfiniBand NDR, 100 GbE); A100s and V100s over PCIe 4.0 and InfiniBand.
OVERLAP_PAIRS = (("h100", "nvlink4_h100"), ("h100", "ib_ndr"), ("h100", "eth_100g"), ("a100", "pcie4_x16"),
                 ("a100", "ib_ndr"), ("v100", "pcie4_x16"))


def overlaps(value_bytes: float = OVERLAP_VALUE_BYTES) -> tuple[Overlap, ...]:
    """`Overlap` of each of OVERLAP_PAIRS."""
    return tuple(overlap(chip, wire, value_bytes) for chip, wire in OVERLAP_PAIRS)
