"""A training run's settings and the checks that guard a shared server: validated once, at the edge.

The page and the CLI call `validate` (or `check_sweep`) on what the user asked for; everything
below them (`loop.train`, `loop.sweep`) trusts the config it is given. `TrainConfig`'s defaults are
the one home of every default the page, the CLI and export show.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax

from pmap_core.costs.analytic import GRAD_DTYPE_BYTES, OPTIMIZER_STATE_BYTES, PRECISIONS, ZERO_SHARDED
from pmap_core.runtime import device_ladder
from pmap_core.train import models
from pmap_core.train.pipeline import SCHEDULES
from pmap_core.train.program import ProgramSpec
from pmap_core.train.programs import IMPLEMENTATIONS, PIPELINE_IMPL, PROGRAMS, SHARDED_STATE_IMPL, TENSOR_IMPL
from pmap_core.validation import (
    MAX_BATCH,
    MAX_STEPS,
    LabInputError,
    check_devices,
    check_elements,
    check_float,
    check_int,
    check_seed,
)

SCALING_MODES = ("strong", "weak")
OPTIMIZERS, STRATEGIES, GRAD_DTYPES = tuple(OPTIMIZER_STATE_BYTES), tuple(ZERO_SHARDED), tuple(GRAD_DTYPE_BYTES)
# Limits of one request, so a shared server stays responsive for a whole class.
MAX_HIDDEN = 1024
MAX_MODEL_FEATURES = 512
MAX_CHUNK = 500
MIN_LEARNING_RATE, MAX_LEARNING_RATE = 1e-6, 10.0
MAX_ACCUM_STEPS = 64
MAX_MESH_MODEL = 64
MAX_LAYERS = 16
MAX_MICROBATCHES = 64
# Forward multiply-adds over the whole run (steps × batch × model size): the transformer at its defaults (300 steps
# of 256 sequences) is 7.4e10, about 30 s on one of 2 cores; the heavy-job slots keep such runs one at a time.
MAX_WORK = 100_000_000_000
MAX_D_MODEL = 512          # the transformer's width
MAX_HEADS = 32
MAX_SEQ_LEN = 256          # its attention is seq_len² per head and layer
MIN_VOCAB, MAX_VOCAB = 2, 512
PIPELINE_MODELS = ("mlp", models.TRANSFORMER)  # the models impl pipeline splits into stages
TRANSFORMER_LEARNING_RATE = 0.1  # the transformer's default η with SGD (default_learning_rate says why)
BASE_LEARNING_RATE = 0.1  # the default η: linear regression's, and an MLP's up to BASE_WIDTH wide
BASE_WIDTH = 32           # TrainConfig's MLP width; a wider MLP starts from η·hidden = BASE_LEARNING_RATE·BASE_WIDTH


def default_learning_rate(model: str, hidden: int) -> float:
    """The η a run starts from when none is given: 0.1, and 0.1 · 32 / hidden for an MLP wider than 32.

    Why 1/width: the MLP is initialized in the standard way (weights of variance 1/fan-in), so one SGD step
    changes its output through the last layer by about η · hidden (that layer's gradient is the `hidden`
    activations, each of size about 1), and the largest η at which gradient descent stays stable falls as
    1/width. Infinite-width theory says so for this parametrization (Yang & Hu 2021, Tensor Programs IV,
    arXiv 2011.14522: above O(1/width) it blows up), and Haas et al. 2025 (arXiv 2505.22491) find it holds
    under a mean squared error, the lab's loss. Measured on the default data (B = 256, 8 features, 300 SGD
    steps, seed 0), the largest η of 0.4, 0.2, 0.1, … that still trains is 0.4 up to width 32, then 0.2 at 64,
    0.1 at 128, 0.05 at 256, 0.025 at 512 and 0.0125 at 1024: η · width = 12.8 from 64 on. The default keeps
    η · width at 3.2, a quarter of that bound, as the default width 32 has it; checked at widths 1–1024,
    D = 1, 3 and 8, seeds 0–3, 2 to 8 layers, SGD and Adam; tests/core/test_divergence.py trains the widest.

    The transformer starts from 0.1, slower than it could: measured with SGD on its default task (B = 64, seed 0),
    its loss falls from 3.47 to 2.52 in 200 steps at η = 0.1, and to 0.21 at η = 0.5. But two correct programs (pmap
    and jit, one device) agree only while the loss is above about 3.1: past it, as the model starts to use its
    attention, the training amplifies their rounding differences of 1e-7 about 200-fold every 20 steps (measured
    at η = 0.03, 0.05, 0.1 and 0.5, with 1 or 4 heads, d_model 16 or 32, and on a first-order chain too). At
    η = 0.1 that moment comes after about 90 steps, at η = 0.5 within 20: the lower η keeps the steps where the
    programs can be compared to 1e-5 (tests/core/test_transformer.py) long enough to see the loss fall."""
    if model == models.TRANSFORMER:
        return TRANSFORMER_LEARNING_RATE
    if model != "mlp" or not isinstance(hidden, int) or hidden <= BASE_WIDTH:  # `validate` refuses a bad width
        return BASE_LEARNING_RATE
    return BASE_LEARNING_RATE * BASE_WIDTH / hidden


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Every setting of a training run; `validate` checks it against the limits above. A learning rate
    left out is the model's and width's default (`default_learning_rate`), fixed when the config is made:
    `dataclasses.replace` keeps it."""

    model: str = "linear"        # one of models.MODELS
    devices: int = 8
    global_batch: int = 256
    learning_rate: float = None  # type: ignore[assignment]  # None: default_learning_rate(model, hidden)
    steps: int = 300
    hidden: int = 32             # MLP width (ignored by linear)
    features: int = 8            # MLP input width (linear regression has one input)
    seed: int = 0
    chunk: int = 25              # steps run inside one compiled call
    scaling: str = "strong"      # one of SCALING_MODES: same global batch | same per-device batch
    impl: str = "pmap"           # a name in train.programs.PROGRAMS: how the step runs
    optimizer: str = "sgd"       # one of zero.OPTIMIZERS (optax)
    strategy: str = "dp"         # one of zero.STRATEGIES: which training state each device holds whole
    accum_steps: int = 1         # K micro-batches per device per step, one gradient collective per K
    grad_dtype: str = "float32"  # one of GRAD_DTYPES: the dtype the gradient collective sends
    precision: str = "float32"   # one of PRECISIONS: float32, or mixed (bfloat16 params and grads, fp32 master)
    mesh_model: int = 1          # impl tensor: devices on the model axis; the data axis has devices / mesh_model
    layers: int = 2              # MLP layers: tanh, residual tanh layers (models.apply_layer), the output
    pipeline_stages: int = 1     # impl pipeline: stages P, one per device, layers / P layers each
    microbatches: int = 1        # impl pipeline: micro-batches M of the global batch per step
    schedule: str = "gpipe"      # impl pipeline: one of SCHEDULES, the order of forwards and backwards
    d_model: int = 32            # transformer width (`layers` blocks of it; train.transformer)
    heads: int = 4               # transformer attention heads, dividing d_model
    seq_len: int = 32            # transformer tokens per sequence
    vocab: int = 32              # transformer vocabulary: tokens of its Markov chain

    def __post_init__(self) -> None:
        if self.learning_rate is None:
            object.__setattr__(self, "learning_rate", default_learning_rate(self.model, self.hidden))

    @property
    def mesh_data(self) -> int:
        return self.devices // self.mesh_model

    def derived(self) -> dict[str, int]:
        """The settings that follow from the others, as a run's record names them."""
        return {"per_device_batch": self.per_device_batch, "mesh_data": self.mesh_data}

    @property
    def per_device_batch(self) -> int:
        return self.global_batch // self.devices

    @property
    def micro_batch(self) -> int:
        """Samples of one micro-batch on one device: B / (D·K)."""
        return self.global_batch // (self.devices * self.accum_steps)

    @property
    def sharded_state(self) -> bool:
        """True when a training-state setting (optimizer, strategy, accumulation, gradient dtype)
        differs from the seed's replicated SGD step: the run then holds a sharded state (`train.zero`)."""
        return (self.optimizer, self.strategy, self.accum_steps, self.grad_dtype, self.precision) != (
            "sgd", "dp", 1, "float32", "float32")

    @property
    def input_features(self) -> int:
        """Values in one row of x: 1 (linear), features (MLP), seq_len tokens (transformer)."""
        if self.model == models.TRANSFORMER:
            return self.seq_len
        return 1 if self.model == "linear" else self.features

    @property
    def dims(self) -> models.Dims:
        """The transformer's sizes (its defaults for the other models, which have none: one program each)."""
        if self.model != models.TRANSFORMER:
            return models.Dims()
        return models.Dims(self.d_model, self.heads, self.seq_len, self.vocab)

    def program_spec(self, steps: int) -> ProgramSpec:
        """What fixes the compiled program that runs `steps` of this config's steps in one call."""
        dims = self.dims
        return ProgramSpec(self.impl, self.model, self.devices, self.per_device_batch, self.input_features,
                           self.hidden, steps, self.optimizer, self.strategy, self.accum_steps, self.grad_dtype,
                           self.precision, self.sharded_state, self.mesh_model, self.layers,
                           self.pipeline_stages, self.microbatches, self.schedule,
                           dims.d_model, dims.heads, dims.seq_len, dims.vocab)


def validate(config: TrainConfig) -> TrainConfig:
    """The config with numbers normalised, or a LabInputError (codes: unknown_model,
    unknown_scaling, unknown_impl, unknown_optimizer, unknown_strategy, unknown_grad_dtype, unknown_precision,
    strategy_needs_jit, mesh_needs_tensor, tensor_needs_mlp_sgd, mesh_not_divisible, batch_not_divisible,
    micro_batch_not_divisible, too_much_work, out_of_range, not_whole_number, not_a_number, too_many_devices,
    too_large, distributed_devices, unknown_schedule, layers_need_replicated, stages_need_pipeline,
    pipeline_needs_mlp_sgd, pipeline_devices, layers_not_divisible, microbatches_not_divisible,
    block_not_divisible: the transformer's heads do not divide d_model)."""
    if config.model not in models.MODELS:
        raise LabInputError("unknown_model", "model must be one of {options}, got {value!r}",
                            options=", ".join(models.MODELS), value=config.model)
    if config.impl not in PROGRAMS:
        raise LabInputError("unknown_impl", "impl must be one of {options}, got {value!r}",
                            options=", ".join(PROGRAMS), value=config.impl)
    if config.scaling not in SCALING_MODES:
        raise LabInputError("unknown_scaling", "scaling must be one of {options}, got {value!r}",
                            options=", ".join(SCALING_MODES), value=config.scaling)
    for field, options in (("optimizer", OPTIMIZERS), ("strategy", STRATEGIES), ("grad_dtype", GRAD_DTYPES),
                           ("precision", PRECISIONS), ("schedule", SCHEDULES)):
        if getattr(config, field) not in options:
            raise LabInputError(f"unknown_{field}", "{field} must be one of {options}, got {value!r}",
                                field=field, options=", ".join(options), value=getattr(config, field))
    checked = dataclasses.replace(
        config,
        devices=check_devices(config.devices),
        global_batch=check_int("global_batch", config.global_batch, 1, MAX_BATCH),
        learning_rate=check_float("learning_rate", config.learning_rate, MIN_LEARNING_RATE, MAX_LEARNING_RATE),
        steps=check_int("steps", config.steps, 1, MAX_STEPS),
        hidden=check_int("hidden", config.hidden, 1, MAX_HIDDEN),
        features=check_int("features", config.features, 1, MAX_MODEL_FEATURES),
        seed=check_seed(config.seed),
        chunk=check_int("chunk", config.chunk, 1, MAX_CHUNK),
        accum_steps=check_int("accum_steps", config.accum_steps, 1, MAX_ACCUM_STEPS),
        mesh_model=check_int("mesh_model", config.mesh_model, 1, MAX_MESH_MODEL),
        layers=check_int("layers", config.layers, 2, MAX_LAYERS),
        pipeline_stages=check_int("pipeline_stages", config.pipeline_stages, 1, MAX_LAYERS),
        microbatches=check_int("microbatches", config.microbatches, 1, MAX_MICROBATCHES),
        d_model=check_int("d_model", config.d_model, 1, MAX_D_MODEL),
        heads=check_int("heads", config.heads, 1, MAX_HEADS),
        seq_len=check_int("seq_len", config.seq_len, 1, MAX_SEQ_LEN),
        vocab=check_int("vocab", config.vocab, MIN_VOCAB, MAX_VOCAB),
    )
    _check_transformer(checked)
    _check_mesh(checked)
    _check_pipeline(checked)
    if checked.sharded_state and checked.impl not in (SHARDED_STATE_IMPL, TENSOR_IMPL):
        raise LabInputError(
            "strategy_needs_jit",
            "optimizer {optimizer}, strategy {strategy}, {accum} accumulation step(s), {dtype} gradients and "
            "{precision} precision run in the jit implementation (sharded training state); got impl {impl!r}: "
            "use impl jit, or sgd, dp, 1, float32 and float32 for {impl}", optimizer=checked.optimizer,
            strategy=checked.strategy, accum=checked.accum_steps, dtype=checked.grad_dtype,
            precision=checked.precision, impl=checked.impl)
    if jax.process_count() > 1 and checked.devices != jax.device_count():
        raise LabInputError("distributed_devices",
                            "a multi-process run trains on all {available} devices of its processes, got {devices}",
                            available=jax.device_count(), devices=checked.devices)
    if checked.global_batch % checked.devices:
        raise LabInputError(
            "batch_not_divisible",
            "global_batch {batch} does not split evenly over {devices} devices; try {suggestion}",
            batch=checked.global_batch, devices=checked.devices,
            suggestion=max(checked.devices, checked.global_batch // checked.devices * checked.devices),
        )
    if checked.global_batch % (checked.devices * checked.accum_steps):
        step = checked.devices * checked.accum_steps
        raise LabInputError(
            "micro_batch_not_divisible",
            "global_batch {batch} does not split into {devices} devices × {accum} micro-batches of equal size; "
            "try {suggestion}", batch=checked.global_batch, devices=checked.devices, accum=checked.accum_steps,
            suggestion=max(step, checked.global_batch // step * step))
    check_elements("training data", checked.global_batch * checked.input_features)
    work = checked.steps * checked.global_batch * models.multiply_adds_per_sample(
        checked.model, checked.input_features, checked.hidden, checked.layers, checked.dims)
    if work > MAX_WORK:
        raise LabInputError("too_much_work",
                            "this run needs {work:,} multiply-adds, over the limit of {limit:,}; "
                            "use fewer steps, a smaller batch or a narrower model",
                            work=work, limit=MAX_WORK)
    return checked


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """What one training run compiles and feeds, derived from its config in one place."""

    chunks: tuple[int, ...]             # steps of each compiled call, in order
    programs: dict[int, ProgramSpec]    # the program of each chunk length
    baseline: TrainConfig | None        # the one-device run S(D) is timed against (None: not timed apart)
    baseline_program: ProgramSpec | None
    features: int                       # input width of the model's data
    dims: models.Dims = dataclasses.field(default_factory=models.Dims)  # the transformer's sizes


def plan_run(config: TrainConfig, measure_scaling: bool) -> RunPlan:
    """The programs a run needs: one per chunk length, and, when its scaling is measured and one
    device is not the run itself, the one-device program of the same chunk."""
    chunks = tuple(chunk_lengths(config.steps, config.chunk))
    base = baseline_config(config) if measure_scaling else None
    base = base if base != config else None
    return RunPlan(chunks, {n: config.program_spec(n) for n in sorted(set(chunks))}, base,
                   base.program_spec(chunks[0]) if base else None, config.input_features, config.dims)


def chunk_lengths(steps: int, chunk: int) -> list[int]:
    """`steps` split into calls of `chunk` steps, the last one shorter if needed."""
    full, rest = divmod(steps, chunk)
    return [chunk] * full + ([rest] if rest else [])


def _check_transformer(config: TrainConfig) -> None:
    """Multi-head attention cuts d_model into `heads` equal parts, one per head; the step's largest arrays stay
    within the memory budget. (The transformer trains with the data-parallel programs, impl tensor
    (`_check_mesh`) and in pipeline stages (`_check_pipeline`).)"""
    if config.model != models.TRANSFORMER:
        return
    # The largest arrays of a step, one per layer (the backward keeps them): the attention weights and the
    # MLP's hidden activations of the global batch (the work limit counts multiply-adds, not these).
    check_elements("attention scores", config.global_batch * config.heads * config.seq_len ** 2)
    check_elements("transformer activations",
                   config.global_batch * config.seq_len * models.transformer.MLP_RATIO * config.d_model)
    if config.d_model % config.heads == 0:
        return
    nearest = sorted({max(config.heads, config.d_model // config.heads * config.heads),
                      -(-config.d_model // config.heads) * config.heads})
    raise LabInputError("block_not_divisible",
                        "heads ({parts}) must divide d_model ({size}): each head gets d_model / heads dimensions; "
                        "d_model that do: {nearest}", spec="heads", dim="d_model", size=config.d_model,
                        parts=config.heads, nearest=", ".join(map(str, nearest)))


def _check_mesh(config: TrainConfig) -> None:
    """A data × model mesh (impl tensor) trains the MLP or the transformer with SGD in float32, its parameters
    replicated over data (dp) or sharded over it too (zero3: FSDP × TP), its model axis dividing the devices
    and the split widths (the MLP's hidden width; the transformer's heads and MLP width 4·d_model, and under
    zero3 its data axis d_model); every other impl runs on one axis."""
    if config.impl != TENSOR_IMPL:
        if config.mesh_model != 1:
            raise LabInputError("mesh_needs_tensor", "a model axis of {model} devices needs impl tensor, got {impl!r}",
                                model=config.mesh_model, impl=config.impl)
        return
    settings = (config.optimizer, config.accum_steps, config.grad_dtype, config.precision)
    plain = settings == ("sgd", 1, "float32", "float32")
    if config.model not in ("mlp", models.TRANSFORMER) or not plain or config.strategy not in ("dp", "zero3"):
        raise LabInputError("tensor_needs_mlp_sgd",
                            "impl tensor splits the MLP's or the transformer's weights and trains with SGD in float32 "
                            "(strategy dp or zero3, no accumulation); got model {model}, optimizer {optimizer}, "
                            "strategy {strategy}", model=config.model, optimizer=config.optimizer,
                            strategy=config.strategy)
    needs = [("model", config.mesh_model, "devices", config.devices)]
    if config.model == models.TRANSFORMER:  # the heads and the MLP's width split over model; zero3: d_model over data
        needs += [("model", config.mesh_model, "heads", config.heads),
                  ("model", config.mesh_model, "mlp width", models.transformer.MLP_RATIO * config.d_model)]
        if config.strategy == "zero3":
            needs.append(("data", config.devices // config.mesh_model, "d_model", config.d_model))
    else:
        needs.append(("model", config.mesh_model, "hidden", config.hidden))
        if config.strategy == "zero3":  # w1's rows split over data too
            needs.append(("data", config.devices // config.mesh_model, "features", config.features))
    for axis, count, name, size in needs:
        if size % count:
            raise LabInputError("mesh_not_divisible", "the {axis} axis ({count} devices) must divide {name} ({size})",
                                axis=axis, count=count, name=name, size=size)


def _check_pipeline(config: TrainConfig) -> None:
    """More than 2 layers train replicated (pmap, shard_map, jit with SGD) or pipelined; a pipeline
    (impl pipeline) trains the MLP or the transformer with SGD in float32 (strategy dp), one stage per device
    and D/P pipelines side by side (data parallelism over them), its layers (the transformer's blocks) splitting
    evenly into the stages and its global batch into D/P · M micro-batches."""
    pipelined = config.impl == PIPELINE_IMPL
    if config.layers != 2 and not pipelined and (config.impl not in IMPLEMENTATIONS or config.sharded_state):
        raise LabInputError("layers_need_replicated",
                            "{layers} layers train with impl pmap, shard_map or jit (SGD, float32) or pipeline; "
                            "got impl {impl!r}", layers=config.layers, impl=config.impl)
    if not pipelined:
        if (config.pipeline_stages, config.microbatches, config.schedule) != (1, 1, "gpipe"):
            raise LabInputError("stages_need_pipeline",
                                "pipeline stages, micro-batches and a schedule need impl pipeline, got impl {impl!r}",
                                impl=config.impl)
        return
    if config.model not in PIPELINE_MODELS or config.sharded_state:
        raise LabInputError("pipeline_needs_mlp_sgd",
                            "impl pipeline splits the layers of the MLP or the transformer and trains with SGD in "
                            "float32 (strategy dp, no accumulation); got model {model}, optimizer {optimizer}, "
                            "strategy {strategy}",
                            model=config.model, optimizer=config.optimizer, strategy=config.strategy)
    if config.devices % config.pipeline_stages:
        raise LabInputError("pipeline_devices", "impl pipeline runs one stage per device, D/P pipelines side by "
                            "side: {stages} stages need a multiple of {stages} devices, got {devices}",
                            stages=config.pipeline_stages, devices=config.devices)
    if config.layers % config.pipeline_stages:
        raise LabInputError("layers_not_divisible", "{layers} layers do not split evenly into {stages} stages",
                            layers=config.layers, stages=config.pipeline_stages)
    if config.global_batch % (config.devices // config.pipeline_stages * config.microbatches):
        step = config.devices // config.pipeline_stages * config.microbatches
        raise LabInputError("microbatches_not_divisible",
                            "global_batch {batch} does not split into {microbatches} micro-batches of equal size; "
                            "try {suggestion}", batch=config.global_batch, microbatches=step,
                            suggestion=max(step, config.global_batch // step * step))


def steadier_learning_rate(config: TrainConfig) -> float:
    """An η to try after `config` diverged: its width's default where η was above it, else a tenth of η."""
    default = default_learning_rate(config.model, config.hidden)
    return default if config.learning_rate > default else max(config.learning_rate / 10, MIN_LEARNING_RATE)


def default_batch(devices: int, accum_steps: int = 1) -> int:
    """The global batch a run starts from on D devices with K micro-batches: TrainConfig's, or the
    multiple of D·K nearest to it where D·K does not divide it (255 on 3 devices), so no default fails."""
    step = max(1, devices * accum_steps)  # a count out of range is refused later, by `validate`
    return max(step, round(TrainConfig().global_batch / step) * step)


def baseline_config(config: TrainConfig) -> TrainConfig:
    """The one-device run S(D) is measured against: the same global batch (strong) or the same
    per-device batch (weak). A pipeline's is the same model unsplit, on one device (impl jit)."""
    batch = config.global_batch if config.scaling == "strong" else config.per_device_batch
    unsplit = (dict(impl="jit", pipeline_stages=1, microbatches=1, schedule="gpipe")
               if config.impl == PIPELINE_IMPL else {})
    return dataclasses.replace(config, devices=1, global_batch=batch, mesh_model=1, **unsplit)


def sweep_configs(config: TrainConfig, device_counts: Sequence[int] | None = None,
                  impls: Sequence[str] | None = None) -> list[TrainConfig]:
    """One config per implementation and D (default: the config's own implementation; counts:
    `device_ladder(config.devices)`, D = 1 always first). Strong: the same global batch, keeping
    only the D it divides; weak: the config's per-device batch on every D."""
    counts = sorted({1, *(device_counts or device_ladder(config.devices))})
    configs = []
    for impl in impls or (config.impl,):
        for d in counts:
            batch = config.global_batch if config.scaling == "strong" else config.per_device_batch * d
            if config.scaling == "strong" and batch % (d * config.accum_steps):
                continue
            configs.append(dataclasses.replace(config, devices=d, global_batch=batch, impl=impl))
    return configs


def check_sweep(config: TrainConfig, device_counts: Sequence[int] | None = None,
                impls: Sequence[str] | None = None) -> None:
    """Check, once each, every run of a config's sweep (a weak sweep's larger D grows the batch)."""
    config = validate(config)  # the ladder below divides by its numbers
    for run in sweep_configs(config, device_counts, impls):
        if run != config:
            validate(run)
