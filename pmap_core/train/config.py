"""A training run's settings and the checks every run needs, whatever its program.

The page and the CLI call `train.plan.validate` (or `check_sweep`) on what the user asked for: it checks
each setting against its own choices and limits, then the run's program's checks (each program owns
them, in its registry entry), then `_check_run` here; everything below them (`loop.train`, `loop.sweep`)
trusts the config it is given. `TrainConfig`'s defaults are the one home of every default the page, the
CLI and export show. This module sits below the programs: it names none of them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import jax

from pmap_core.costs.analytic import GRAD_DTYPE_BYTES, OPTIMIZER_STATE_BYTES, ZERO_SHARDED
from pmap_core.runtime import device_ladder
from pmap_core.train import models
from pmap_core.train.mesh import DATA_AXIS, MESH_AXES
from pmap_core.train.program import Program, ProgramSpec
from pmap_core.train.settings import (
    axis_settings,
    check_value,
    declarations,
    defaults,
    nests_settings,
    setting,
    settings_of,
)
from pmap_core.validation import (
    MAX_BATCH,
    MAX_STEPS,
    LabInputError,
    check_devices,
    check_elements,
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
MAX_MESH_SEQ = 64
MAX_EXPERTS = 64
MIN_CAPACITY_FACTOR, MAX_CAPACITY_FACTOR = 0.05, 64.0
MAX_LAYERS = 16
MAX_MICROBATCHES = 64
# Forward multiply-adds over the whole run (steps × batch × model size): the transformer at its defaults (300 steps
# of 256 sequences) is 7.4e10, about 30 s on one of 2 cores; the heavy-job slots keep such runs one at a time.
MAX_WORK = 100_000_000_000
# The command line's limit: it runs on a practitioner's own machine, not on a server that visitors share, and a
# mixture of experts computes every slot of its capacity (8 experts at capacity factor 4: 3.7e11 at the defaults).
HEADLESS_MAX_WORK = 10 * MAX_WORK
MAX_D_MODEL = 512          # the transformer's width
MAX_HEADS = 32
MAX_SEQ_LEN = 256          # its attention is seq_len² per head and layer
MIN_VOCAB, MAX_VOCAB = 2, 512
TRANSFORMER_LEARNING_RATE = 0.05  # the transformer's default η with SGD (default_learning_rate says why)
BASE_LEARNING_RATE = 0.1  # the default η: linear regression's, and an MLP's up to BASE_WIDTH wide
BASE_WIDTH = 32           # TrainConfig's MLP width; a wider MLP starts from η·hidden = BASE_LEARNING_RATE·BASE_WIDTH


def axis_fields() -> dict[str, str]:
    """Each mesh axis beside data, with the setting of its size (declared by the program that splits over it, with
    `setting(..., axis=)`): `TrainConfig.mesh` reads each, and the CLI's `--mesh axis=N` sets it."""
    return axis_settings()


def setting_names() -> set[str]:
    """The names a `TrainConfig` is made with: its own fields and every lab program's declared settings."""
    return {f.name for f in dataclasses.fields(TrainConfig) if f.init} | set(declarations())


def _whole(*sizes: Any) -> bool:
    """Whether each of `sizes` is a whole number ≥ 1 (`validate` refuses the others; a config holds them till then)."""
    return all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sizes)


def mesh_label(mesh: Mapping[str, int]) -> str:
    """"data=2,stage=4": a mesh as `--mesh` takes it, its axes in the mesh's order."""
    return ",".join(f"{axis}={mesh[axis]}" for axis in MESH_AXES if axis in mesh)


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

    The transformer starts from 0.05, slower than it could, so that its default run stays below the edge of
    stability (Cohen et al. 2021, as `models.residual_scale` says for the MLP). Past that edge its loss starts to
    jump up and down, and a rounding difference of 1e-7 between two correct programs (one device against a 1 × 4
    ring, a remat policy against none) grows about fourfold a step, to 1e-3 within a dozen steps. Measured on
    the default task (B = 256, seed 0), the loss first rises (by more than 0.1% in a step) at step 187 at
    η = 0.1, 299 at 0.07, 470 at 0.05 and 629 at 0.04, later the smaller η, as the edge of stability has it;
    at B = 64, at step 91 at η = 0.1 and 207 at 0.05. At η = 0.05 the default 300 steps end at 3.30 (from
    3.47), and the ring and every remat policy end within 1e-7 of one device; at η = 0.1 at 3.04, 2e-3 apart."""
    if model == models.TRANSFORMER:
        return TRANSFORMER_LEARNING_RATE
    if model != "mlp" or not isinstance(hidden, int) or hidden <= BASE_WIDTH:  # `validate` refuses a bad width
        return BASE_LEARNING_RATE
    return BASE_LEARNING_RATE * BASE_WIDTH / hidden


@nests_settings
@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Every setting of a training run; `validate` (train.plan) checks it against the limits above and its
    program's own checks. A learning rate left out is the model's and width's default
    (`default_learning_rate`), fixed when the config is made: `dataclasses.replace` keeps it.

    The settings every run has are declared here, with their help, choices and limits (`train.settings.setting`).
    Those of the lab's own programs are declared once, by their owner (`zero.ShardedStateSettings`,
    `tensor.TensorSettings`, `pipeline.PipelineSettings`, `context.ContextSettings`, `experts.ExpertSettings`), and a
    run holds them as one nested value, `settings`: the instances of those classes it sets away from their defaults.
    It is made, read and `dataclasses.replace`d with them by name as before (`TrainConfig(strategy="zero3")`,
    `config.strategy`: `train.settings.nests_settings`). A program registered from outside the lab keeps its settings
    in `options`."""

    model: str = setting(
        "linear", "linear: y = 3x + 1; mlp: one hidden layer; transformer: a small decoder-only transformer "
        "(--layers blocks, --d-model, --heads, --seq-len, --vocab) predicting a random Markov chain's next token "
        "(default: {default}; mlp with --meshes)", choices=models.MODELS, cli_default=None, reported=True)
    devices: int = setting(8, "devices D (default: all devices of every process)", check=check_devices,
                           cli_default=None, reported=True)
    global_batch: int = setting(
        256, "samples per step over all devices, divisible by D ({low}–{high}; default: {default}, or the "
        "multiple of D nearest to it)", low=1, high=MAX_BATCH, cli_default=None, reported=True)
    learning_rate: float = setting(  # type: ignore[assignment]  # None: default_learning_rate(model, hidden)
        None, f"η (up to {{high}}; default: {BASE_LEARNING_RATE:g}, times {BASE_WIDTH}/--hidden for an MLP wider "
        f"than {BASE_WIDTH}, so wide MLPs stay stable; {TRANSFORMER_LEARNING_RATE:g} for the transformer). A run "
        "whose loss stops being finite stops there and exits with status 2", kind=float,
        low=MIN_LEARNING_RATE, high=MAX_LEARNING_RATE)
    steps: int = setting(300, "training steps ({low}–{high})", low=1, high=MAX_STEPS, reported=True)
    hidden: int = setting(32, "MLP width ({low}–{high})", low=1, high=MAX_HIDDEN)  # ignored by linear
    features: int = setting(8, "MLP input width ({low}–{high})", low=1, high=MAX_MODEL_FEATURES)
    seed: int = setting(0, "", check=check_seed)
    chunk: int = setting(25, "steps run inside one compiled call ({low}–{high})", low=1, high=MAX_CHUNK)
    scaling: str = setting("strong", "strong: D = 1 baseline on the same global batch; weak: on the same "
                           "per-device batch", choices=SCALING_MODES, reported=True)
    # How the step runs: an impl a program of train.programs answers (its own flag: the CLI lists them).
    impl: str = setting("pmap", flag=False, reported=True)
    layers: int = setting(
        2, "MLP layers: a hidden tanh layer of width --hidden, residual tanh layers h + tanh(hW + b)/L, then the "
        "output layer; the transformer's blocks ({low}–{high}; default: {default})", low=2, high=MAX_LAYERS,
        reported=True)
    d_model: int = setting(32, "transformer width ({low}–{high}; default: {default})", low=1, high=MAX_D_MODEL,
                           reported=models.TRANSFORMER)
    heads: int = setting(4, "transformer attention heads, dividing --d-model ({low}–{high}; default: {default})",
                         low=1, high=MAX_HEADS, reported=models.TRANSFORMER)
    seq_len: int = setting(32, "transformer tokens per sequence ({low}–{high}; default: {default})", low=1,
                           high=MAX_SEQ_LEN, reported=models.TRANSFORMER)
    vocab: int = setting(32, "transformer vocabulary ({low}–{high}; default: {default})", low=MIN_VOCAB,
                         high=MAX_VOCAB, reported=models.TRANSFORMER)
    remat: str = setting("none", "transformer: which block activations the backward pass recomputes instead of "
                         "keeping: none, selective (the attention's scores and softmax) or full (all but each "
                         "block's input) (default: {default})", choices=models.transformer.REMAT_POLICIES,
                         reported=models.TRANSFORMER)
    # The settings of a program registered from outside the lab, as sorted (name, value) pairs: hashable,
    # so a config stays a cache key. `validate` fills in its program's defaults.
    options: tuple[tuple[str, Any], ...] = ()
    # The lab programs' settings the run sets away from their defaults, one instance of each owner's class
    # (`train.settings.nested`): equal settings, equal configs.
    settings: tuple[Any, ...] = ()
    # The run's layout, {axis: devices along it}: the data axis and each other axis it splits over, in the mesh's
    # order (`train.mesh.MESH_AXES`); their product is D, the data axis taking what the others leave. Made from the
    # axes' sizes with the config (`dataclasses.replace` makes it again): every figure that names an axis reads it.
    mesh: dict[str, int] = dataclasses.field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.learning_rate is None:
            object.__setattr__(self, "learning_rate", default_learning_rate(self.model, self.hidden))
        others = {axis: getattr(self, name) for axis, name in axis_fields().items()}
        data = self.devices // max(1, math.prod(others.values())) if _whole(self.devices, *others.values()) else 0
        sizes = {**others, DATA_AXIS: data}
        object.__setattr__(self, "mesh", {axis: sizes[axis] for axis in MESH_AXES
                                          if axis == DATA_AXIS or sizes.get(axis, 1) != 1})

    @property
    def mesh_data(self) -> int:
        """Devices along the data axis: D over every other axis's size (a pipeline's stages included)."""
        return self.mesh[DATA_AXIS]

    def derived(self) -> dict[str, Any]:
        """The settings that follow from the others, as a run's record names them: the per-device batch, the mesh
        ("data=2,stage=4") and each axis's size (`mesh_data`, `mesh_stage`, ...; 1 for an axis it does not split)."""
        mesh = self.mesh
        return {"per_device_batch": self.per_device_batch, "mesh": mesh_label(mesh),
                **{f"mesh_{axis}": mesh.get(axis, 1) for axis in MESH_AXES}}

    @property
    def per_device_batch(self) -> int:
        return self.global_batch // self.devices

    @property
    def micro_batch(self) -> int:
        """Samples of one micro-batch on one device: B / (D·K)."""
        return self.global_batch // (self.devices * self.accum_steps)

    @property
    def sharded_state(self) -> bool:
        """True when a training-state setting (optimizer, strategy, accumulation, gradient dtype, precision, replica
        axis) differs from the seed's replicated SGD step: the run then holds the settings of the sharded state's
        program (`train.zero`, whose class declares `strategy`) and a sharded state."""
        owner = declarations()["strategy"]
        return any(isinstance(value, owner) for value in self.settings)

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
        return models.Dims(self.d_model, self.heads, self.seq_len, self.vocab, self.experts, self.top_k,
                           self.capacity_factor)

    def option(self, name: str, default: Any = None) -> Any:
        """The value of a registered program's setting `name` (`options`)."""
        return dict(self.options).get(name, default)

    def program_spec(self, steps: int, program: str = "") -> ProgramSpec:
        """What fixes the compiled program that runs `steps` of this config's steps in one call (`program`: the
        registry entry that runs it, where the caller chose it)."""
        dims = self.dims
        return ProgramSpec(self.impl, self.model, self.devices, self.per_device_batch, self.input_features,
                           self.hidden, steps, self.layers, dims.d_model, dims.heads, dims.seq_len, dims.vocab,
                           self.options, program, self.remat, settings=self.settings)


Registry = Mapping[str, Program]  # train.programs.REGISTRY, passed down: this module names no program


def select_program(registry: Registry, settings: Any) -> Program:
    """The entry that runs `settings` (a TrainConfig or a ProgramSpec): one that answers its impl for runs that
    change its settings, where the run changes one, else the entry of that name; a LabInputError
    (unknown_impl) where none answers it."""
    for entry in registry.values():
        if entry.impl and entry.impl == settings.impl and entry.settings and any(
                getattr(settings, field.name) != field.default for field in dataclasses.fields(entry.settings)):
            return entry
    if settings.impl not in registry:
        impls = ", ".join(dict.fromkeys(entry.impl or entry.name for entry in registry.values()))
        raise LabInputError("unknown_impl", "impl must be one of {options}, got {value!r}", options=impls,
                            value=settings.impl)
    return registry[settings.impl]


def check(config: TrainConfig, registry: Registry, max_work: int = MAX_WORK) -> TrainConfig:
    """`config` checked against `registry`'s programs (`train.plan.validate`): each setting against its choices
    and limits (TrainConfig's, every program's; a registered program's own settings completed with their
    defaults), then the check of the program it selects, then every other program's refusal of a run that
    sets its settings, then `_check_run` (with `max_work` multiply-adds at most)."""
    entry = select_program(registry, config)
    options = _program_options(config.options)
    checked = {field.name: check_value(field, getattr(config, field.name)) for field in settings_of(TrainConfig)}
    for owner in registry.values():
        for field in settings_of(owner.settings) if owner.settings else ():
            if field.name in checked:
                continue
            if hasattr(config, field.name):
                checked[field.name] = check_value(field, getattr(config, field.name))
            elif owner is entry:
                options[field.name] = check_value(field, options.get(field.name, field.default))
    unknown = sorted(set(options) - (set(defaults(entry.settings)) if entry.settings else set()))
    if unknown:
        raise LabInputError("unknown_program_setting", "impl {impl} has no setting {name}", impl=config.impl,
                            name=unknown[0])
    config = dataclasses.replace(config, **checked, options=tuple(sorted(options.items())))
    entry.check(config)
    _check_remat(config, entry, registry)
    own = {*(defaults(entry.settings) if entry.settings else ()), *entry.shares}
    for owner in registry.values():  # a setting only other programs own keeps its default; its owner says why
        if owner is entry or owner.settings is None or owner.refused_elsewhere is None:
            continue
        if any(name not in own and hasattr(config, name) and getattr(config, name) != default
               for name, default in defaults(owner.settings).items()):
            raise owner.refused_elsewhere(config)
    _check_run(config, max_work)
    return config


def _check_remat(config: TrainConfig, entry: Program, registry: Registry) -> None:
    """Rematerialisation is the transformer's (its blocks are what it recomputes), in the programs that run the
    whole model's loss on each device's rows (`Program.rematerialises`)."""
    if config.remat == "none":
        return
    if config.model != models.TRANSFORMER:
        raise LabInputError("remat_needs_transformer", "remat {remat} recomputes the transformer's blocks; "
                            "got model {model}", remat=config.remat, model=config.model)
    if not entry.rematerialises:
        impls = ", ".join(dict.fromkeys(e.selected_by for e in registry.values() if e.rematerialises))
        raise LabInputError("remat_needs_replicated", "remat {remat} runs with impl {impls}; got impl {impl}",
                            remat=config.remat, impls=impls, impl=config.impl)


def _program_options(options: Any) -> dict[str, Any]:
    """A registered program's settings as a run gives them, (name, value) pairs, or a LabInputError."""
    try:
        pairs = dict(options)
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or not all(isinstance(name, str) for name in pairs):
        raise LabInputError("program_settings_not_pairs",
                            "a program's own settings are (name, value) pairs, got {value!r}", value=options)
    return pairs


def _check_run(config: TrainConfig, max_work: int = MAX_WORK) -> None:
    """What every run needs whatever its program, once each setting is in range (`train.plan.validate` calls it
    last): a LabInputError (codes: block_not_divisible, mesh_not_dividing, distributed_devices, batch_not_divisible,
    micro_batch_not_divisible, too_large, too_much_work)."""
    _check_transformer(config)
    others = {axis: size for axis, size in config.mesh.items() if axis != DATA_AXIS}
    if config.devices % math.prod(others.values()):
        raise LabInputError("mesh_not_dividing", "the mesh's axes beside data ({axes}) take {used} devices, which "
                            "does not divide D = {devices}", axes=mesh_label(others), used=math.prod(others.values()),
                            devices=config.devices)
    if jax.process_count() > 1 and config.devices != jax.device_count():
        raise LabInputError("distributed_devices",
                            "a multi-process run trains on all {available} devices of its processes, got {devices}",
                            available=jax.device_count(), devices=config.devices)
    if config.global_batch % config.devices:
        raise LabInputError(
            "batch_not_divisible",
            "global_batch {batch} does not split evenly over {devices} devices; try {suggestion}",
            batch=config.global_batch, devices=config.devices,
            suggestion=max(config.devices, config.global_batch // config.devices * config.devices),
        )
    if config.global_batch % (config.devices * config.accum_steps):
        step = config.devices * config.accum_steps
        raise LabInputError(
            "micro_batch_not_divisible",
            "global_batch {batch} does not split into {devices} devices × {accum} micro-batches of equal size; "
            "try {suggestion}", batch=config.global_batch, devices=config.devices, accum=config.accum_steps,
            suggestion=max(step, config.global_batch // step * step))
    check_elements("training data", config.global_batch * config.input_features)
    work = config.steps * config.global_batch * models.multiply_adds_per_sample(
        config.model, config.input_features, config.hidden, config.layers, config.dims)
    if work > max_work:
        raise LabInputError("too_much_work",
                            "this run needs {work:,} multiply-adds, over the limit of {limit:,}; "
                            "use fewer steps, a smaller batch or a narrower model",
                            work=work, limit=max_work)


def baseline_config(config: TrainConfig, registry: Registry) -> TrainConfig:
    """The one-device run S(D) is measured against: the same global batch (strong) or the same per-device
    batch (weak), every mesh axis of size 1, with what the run's impl's program changes for it (a pipeline's: the
    model unsplit, impl jit)."""
    batch = config.global_batch if config.scaling == "strong" else config.global_batch // config.devices
    changes = {**dict.fromkeys(axis_fields().values(), 1), **registry[config.impl].baseline(config)}
    return dataclasses.replace(config, devices=1, global_batch=batch, **changes)


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """What one training run compiles and feeds, derived from its config in one place."""

    chunks: tuple[int, ...]             # steps of each compiled call, in order
    programs: dict[int, ProgramSpec]    # the program of each chunk length
    baseline: TrainConfig | None        # the one-device run S(D) is timed against (None: not timed apart)
    baseline_program: ProgramSpec | None
    features: int                       # input width of the model's data
    dims: models.Dims                   # the transformer's sizes
    program: Program                    # the registry entry that runs it (its analytic model, for the footprint)


def plan_run(config: TrainConfig, measure_scaling: bool, registry: Registry) -> RunPlan:
    """The programs a run needs (`registry`: train.programs.REGISTRY): one per chunk length, and, when its
    scaling is measured and one device is not the run itself, the one-device program of the same chunk;
    each spec names the entry that runs it."""
    chunks = tuple(chunk_lengths(config.steps, config.chunk))
    base = baseline_config(config, registry) if measure_scaling else None
    base = base if base != config else None
    program = select_program(registry, config)
    specs = {n: config.program_spec(n, program.name) for n in sorted(set(chunks))}
    base_spec = base.program_spec(chunks[0], select_program(registry, base).name) if base else None
    return RunPlan(chunks, specs, base, base_spec, config.input_features, config.dims, program)


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


def check_two_layers(config: TrainConfig) -> None:
    """For the programs that train only the two-layer MLP (or the transformer's blocks, two by default)."""
    if config.layers != 2:
        raise LabInputError("layers_need_replicated",
                            "{layers} layers train with impl pmap, shard_map or jit (SGD, float32) or pipeline; "
                            "got impl {impl!r}", layers=config.layers, impl=config.impl)


def steadier_learning_rate(config: TrainConfig) -> float:
    """An η to try after `config` diverged: its width's default where η was above it, else a tenth of η."""
    default = default_learning_rate(config.model, config.hidden)
    return default if config.learning_rate > default else max(config.learning_rate / 10, MIN_LEARNING_RATE)


def default_batch(devices: int, accum_steps: int = 1) -> int:
    """The global batch a run starts from on D devices with K micro-batches: TrainConfig's, or the
    multiple of D·K nearest to it where D·K does not divide it (255 on 3 devices), so no default fails."""
    step = max(1, devices * accum_steps)  # a count out of range is refused later, by `validate`
    return max(step, round(TrainConfig().global_batch / step) * step)


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
