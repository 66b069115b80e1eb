"""Activation memory and rematerialisation: what a transformer layer keeps for its backward pass, predicted
from the paper's term list and read off JAX and the compiler, for the lab's transformer (`train.transformer`)
under each remat policy ("none", "selective", "full").

The prediction (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
arXiv 2205.05198, §4.1): one layer of s tokens, batch b, width h and a heads keeps sbh(34 + 5as/h) bytes with
16-bit activations, 1-byte dropout masks and an MLP of 4h. `TERMS` is that list, term by term, beside the
lab's own bytes (float32, no dropout, tanh-GELU, LayerNorm and softmax as JAX differentiates them); `predict`
sums it for a setting and gives the paper's Table 2 variants (tensor parallelism, sequence parallelism,
selective and full recomputation, §4.2–4.3). Sequence parallelism compiled on a data × model mesh, the page's
comparison, is in `concepts.sequence_parallel`.

Two readings of JAX, never to be confused with a measurement of memory in use:

- What autodiff saves: `saved_residuals` lists the residuals of the loss's forward pass for the backward
  (`jax.ad_checkpoint.print_saved_residuals` prints the same list) — shape, dtype, bytes and where each comes
  from. The parameters are arguments of the loss and are kept whatever the policy: they are listed but left
  out of the activation total.
- What the compiler allocates: `compiled_step` reads `memory_analysis()` (temporary bytes, and a peak of
  arguments + outputs − aliases + temporaries, `train.footprint.peak_bytes`) and `cost_analysis()` FLOPs of
  one jitted value-and-gradient step. Compiler-reported, not measured.

Where the lab's per-layer count departs from the paper's, for this model at the defaults: 4 bytes an activation,
no dropout (no masks, and V is weighted by the softmax output itself), and what JAX's derivative of this code
keeps beyond the list — LayerNorm and tanh-GELU internals (+64sbh) and, in the attention, exp of the scores, a
score-sized array of zeros and the broadcast causal mask beside the softmax output: 13as²b where the list,
in float32, would have 4as²b. Selective recomputation keeps exactly the list's 64sbh (the named tensors).

Recomputation costs FLOPs: full remat runs each block's forward again in the backward pass, "from 6ND to
roughly 8ND" (the JAX Scaling Book, "All the Transformer Math You Need to Know", gradient checkpointing: block
remat). Here XLA removes the recomputation whose result the backward does not read — each block's last product
(the MLP's second weight), whose output only feeds the next block — so the compiler reports each block's
forward less that product (`recomputed_flops`): about half the whole model's forward pass at the defaults.

XLA has its own rematerialisation pass, which may recompute inside one jit on its own when memory is short
(the JAX flag `jax_compiler_enable_remat_pass`, on by default, turns it off by disabling the HLO pass
"rematerialization"). `compiled_step(..., xla_remat=False)` passes the same option to one compile: the flag
itself is process-wide and not part of jit's in-memory compilation cache key, so flipping it between two
compiles of one program could return the first. On XLA:CPU both ways report the same figures here.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.ad_checkpoint import saved_residuals as _jax_saved_residuals  # print_saved_residuals's list

from pmap_core.train import transformer
from pmap_core.train.footprint import compiled_memory, peak_bytes
from pmap_core.validation import LabInputError, check_int

POLICIES = transformer.REMAT_POLICIES
SEQ_LENS = (16, 32, 48, 64)     # the sweep's sequence lengths
PAPER_BYTES, LAB_BYTES = 2, 4  # one activation: 16-bit in the paper, float32 here

_SECTION = "Korthikanti et al. 2022 §4.1"
_JAX = "JAX's derivative of this model"


@dataclasses.dataclass(frozen=True)
class Term:
    """One tensor a layer keeps for its backward pass: bytes per `unit` ("sbh": per token and width; "as²b":
    per attention score) in the paper's setting and in the lab's."""

    name: str
    unit: str
    paper: float
    lab: float
    source: str
    note: str
    split_by_tensor: bool     # Megatron's tensor parallelism splits it over t devices (§4.2.1)
    kept_by_selective: bool   # still kept under selective recomputation (§4.2.3; here: `SELECTIVE_SAVED`)


TERMS = (
    Term("LayerNorm inputs (two)", "sbh", 4, 8, _SECTION, "float32: 4 bytes each", False, True),
    Term("QKV input (LayerNorm output)", "sbh", 2, 4, _SECTION, "one fused QKV product reads it once", False, True),
    Term("Q and K (for QKᵀ)", "sbh", 4, 8, _SECTION, "float32", True, True),
    Term("V (for attention over V)", "sbh", 2, 4, _SECTION, "float32", True, True),
    Term("softmax output", "as²b", 2, 4, _SECTION, "kept as the paper does; it is also attention over V's input",
         True, False),
    Term("softmax dropout mask", "as²b", 1, 0, _SECTION, "no dropout", True, False),
    Term("softmax dropout output", "as²b", 2, 0, _SECTION, "no dropout: V is weighted by the softmax output itself",
         True, False),
    Term("output projection input", "sbh", 2, 4, _SECTION, "float32", True, True),
    Term("attention dropout mask", "sbh", 1, 0, _SECTION, "no dropout", False, True),
    Term("MLP first linear input", "sbh", 2, 4, _SECTION, "float32", False, True),
    Term("GELU input (4h)", "sbh", 8, 16, _SECTION, "float32", True, True),
    Term("MLP second linear input (4h)", "sbh", 8, 16, _SECTION, "float32", True, True),
    Term("MLP dropout mask", "sbh", 1, 0, _SECTION, "no dropout", False, True),
    # What JAX's autodiff of this code keeps beyond the paper's list (read off `saved_residuals` and the sources
    # of `layer_norm`, `jax.nn.gelu`, `jax.nn.softmax` and `jnp.where`). Selective recomputation rebuilds all of it
    # from the named tensors. Left out: per-row values (a LayerNorm's 1/σ, a softmax row's sum), O(1/h) of these.
    Term("LayerNorm internals (two)", "sbh", 0, 16, _JAX,
         "each keeps h − mean, 2(h − mean) and the normalised value (12sbh) in place of its input (4sbh)",
         False, False),
    Term("tanh-GELU internals (4h)", "sbh", 0, 48, _JAX, "1 − tanh² and two products: three more 4h-wide tensors",
         True, False),
    Term("exp of the scores", "as²b", 0, 4, _JAX,
         "jax.nn.softmax's default rule (jax_softmax_custom_jvp off) differentiates the division: it keeps exp",
         True, False),
    Term("zeros for the masked scores", "as²b", 0, 4, _JAX,
         "jnp.where's derivative keeps a score-sized array of zeros, the masked positions' gradient", True, False),
    Term("causal mask", "as²b", 0, 1, _JAX, "bool, broadcast by jnp.where to every score", True, False),
)


@dataclasses.dataclass(frozen=True)
class Prediction:
    """One layer's activation bytes in a setting ("paper" or "lab") at s, b, h, a (and t for Table 2)."""

    setting: str
    terms: tuple[tuple[str, int], ...]   # (name, bytes), every term of `TERMS`
    total: int
    linear: float       # bytes per unit of s: the sbh terms' sum over s
    quadratic: float    # bytes per unit of s²: the as²b terms' sum over s²
    variants: dict[str, float]   # Table 2: bytes per layer for each way of splitting or recomputing


def _unit(term: Term, s: int, b: int, h: int, a: int) -> int:
    return s * b * h if term.unit == "sbh" else a * s * s * b


def predict(setting: str, s: int, b: int, h: int, a: int, t: int = 1) -> Prediction:
    """Korthikanti et al.'s per-layer activation bytes ("paper": their 16-bit setting) or the lab model's
    ("lab": float32, as JAX differentiates it), with their Table 2 at tensor-parallel degree t: tensor
    parallelism splits the attention's and the MLP's inner tensors over t (§4.2.1), sequence parallelism also
    the rest (§4.2.2), selective recomputation keeps no s² term (§4.2.3), full recomputation keeps the layer's
    input only (2sbh in 16-bit, 4sbh here)."""
    if setting not in ("paper", "lab"):
        raise ValueError(f"setting must be 'paper' or 'lab', got {setting!r}")
    coefficient = {term.name: (term.paper if setting == "paper" else term.lab) for term in TERMS}
    bytes_of = {term.name: coefficient[term.name] * _unit(term, s, b, h, a) for term in TERMS}

    def total(keep: Any = lambda term: True, split: Any = lambda term: False) -> float:
        return sum(bytes_of[term.name] / (t if split(term) else 1) for term in TERMS if keep(term))

    selective = lambda term: term.kept_by_selective  # noqa: E731 - a predicate, named for reading
    tensor = lambda term: term.split_by_tensor  # noqa: E731
    everything = lambda term: True  # noqa: E731
    word = PAPER_BYTES if setting == "paper" else LAB_BYTES
    return Prediction(
        setting=setting,
        terms=tuple((term.name, int(bytes_of[term.name])) for term in TERMS),
        total=int(total()),
        linear=sum(coefficient[term.name] * b * h for term in TERMS if term.unit == "sbh"),
        quadratic=sum(coefficient[term.name] * a * b for term in TERMS if term.unit == "as²b"),
        variants={
            "no parallelism": total(),
            "tensor parallel": total(split=tensor),
            "tensor + sequence parallel": total(split=everything),
            "tensor parallel + selective recompute": total(selective, tensor),
            "tensor + sequence parallel + selective recompute": total(selective, everything),
            "full recompute": float(word * s * b * h),
        },
    )


# ---- what JAX saves for the backward pass ----

@dataclasses.dataclass(frozen=True)
class Residual:
    shape: tuple[int, ...]
    dtype: str
    bytes: int
    source: str        # JAX's words: "named 'qkv' from …", "output of exp from …", "from the argument …"
    argument: bool     # an input of the loss (a parameter or the tokens), kept whatever the policy


def example_batch(dims: transformer.Dims, layers: int, batch: int) -> tuple[dict, jax.Array, jax.Array]:
    params = transformer.init_params(dims, layers, seed=0)
    x, y = transformer.make_sequences(dims, batch, seed=0)
    return params, jnp.asarray(x), jnp.asarray(y)


def saved_residuals(dims: transformer.Dims, layers: int, batch: int, remat: str) -> list[Residual]:
    """The residuals the loss's forward pass saves for its backward under `remat`, one device, tokens of
    length dims.seq_len."""
    params, x, y = example_batch(dims, layers, batch)
    found = _jax_saved_residuals(lambda p, x_, y_: transformer.loss(p, x_, y_, remat=remat), params, x, y)
    return [Residual(tuple(aval.shape), str(aval.dtype), int(np.prod(aval.shape)) * aval.dtype.itemsize, source,
                     source.startswith("from the argument")) for aval, source in found]


def activation_bytes(residuals: list[Residual]) -> int:
    """The residuals' bytes, the loss's arguments (parameters, tokens) left out."""
    return sum(r.bytes for r in residuals if not r.argument)


# ---- what the compiler allocates and counts ----

@dataclasses.dataclass(frozen=True)
class CompiledStep:
    """One jitted value-and-gradient step, compiler-reported."""

    remat: str
    xla_remat: bool
    memory: dict[str, int]   # `train.footprint.compiled_memory`
    peak: int | None         # arguments + outputs − aliases + temporaries
    temp: int
    flops: float


def _compile(f: Any, args: tuple, xla_remat: bool) -> Any:
    options = {} if xla_remat else {"xla_disable_hlo_passes": "rematerialization"}
    return jax.jit(f).lower(*args).compile(compiler_options=options)


@functools.cache
def _compiled_step(dims: transformer.Dims, layers: int, batch: int, remat: str, xla_remat: bool) -> Any:
    step = jax.value_and_grad(lambda p, x, y: transformer.loss(p, x, y, remat=remat))
    return _compile(step, example_batch(dims, layers, batch), xla_remat)


def compiled_step(dims: transformer.Dims, layers: int, batch: int, remat: str, xla_remat: bool = True
                  ) -> CompiledStep:
    """`jax.value_and_grad` of the loss under `remat`, compiled for one device (`xla_remat=False`: with XLA's
    own rematerialisation pass off, as jax_compiler_enable_remat_pass=False does)."""
    compiled = _compiled_step(dims, layers, batch, remat, xla_remat)
    memory = compiled_memory(compiled)
    return CompiledStep(remat, xla_remat, memory, peak_bytes(memory), memory.get("temp_size_in_bytes", 0),
                        float(compiled.cost_analysis()["flops"]))


def sgd_losses(dims: transformer.Dims, layers: int, batch: int, remat: str, steps: int, lr: float = 0.1
               ) -> tuple[list[float], dict[str, np.ndarray]]:
    """The loss before each of `steps` SGD steps of the compiled step under `remat` on one batch, and the
    first step's gradients: what the policies must agree on, since recomputation changes no value."""
    compiled = _compiled_step(dims, layers, batch, remat, True)
    params, x, y = example_batch(dims, layers, batch)
    losses, first = [], None
    for _ in range(steps):
        value, grads = compiled(params, x, y)
        losses.append(float(value))
        first = first or {name: np.asarray(g) for name, g in grads.items()}
        params = {name: params[name] - lr * np.asarray(grads[name]) for name in params}
    return losses, first


def forward_flops(dims: transformer.Dims, layers: int, batch: int) -> float:
    """Compiler-reported FLOPs of the loss's forward pass alone."""
    return float(_compile(transformer.loss, example_batch(dims, layers, batch), True).cost_analysis()["flops"])


def recomputed_flops(dims: transformer.Dims, layers: int, batch: int, remat: str) -> int:
    """The matmul FLOPs the backward pass runs again under `remat`, 2 per multiply-add.

    full: each block's forward but its last product — Q, K and V (6h² per token), the scores and the
    attention over V (4sh), the output projection (2h²), the MLP's first weight (8h²); the MLP's second weight
    only makes the block's output, which its backward never reads. selective: the scores QKᵀ (2sh); the
    attention over V's output is kept (its name, "attn_context"), so it is not run again."""
    tokens, d, s = batch * dims.seq_len, dims.d_model, dims.seq_len
    per_token = {"none": 0, "selective": 2 * s * d, "full": 16 * d * d + 4 * s * d}[remat]
    return layers * tokens * per_token


# ---- the sweep over sequence lengths ----

def fit_quadratic(s: list[int] | tuple[int, ...], values: list[float]) -> tuple[float, float, float]:
    """(c0, c1, c2) of values ≈ c0 + c1·s + c2·s², least squares."""
    design = np.stack([np.ones(len(s)), np.asarray(s, float), np.asarray(s, float) ** 2], axis=1)
    (c0, c1, c2), *_ = np.linalg.lstsq(design, np.asarray(values, float), rcond=None)
    return float(c0), float(c1), float(c2)


@dataclasses.dataclass(frozen=True)
class Sweep:
    """Residual and compiler-reported temporary bytes over sequence lengths, their quadratic fits, and the
    lab formula's coefficients for the whole model (per layer × layers)."""

    remat: str
    seq_lens: tuple[int, ...]
    residual_bytes: tuple[int, ...]
    temp_bytes: tuple[int, ...]
    residual_fit: tuple[float, float, float]   # c0, c1, c2
    temp_fit: tuple[float, float, float] | None
    formula_linear: float      # lab linear coefficient × layers (the blocks only: not the embedding, the head)
    formula_quadratic: float   # lab quadratic coefficient × layers
    xla_remat: bool = True


def sweep(dims: transformer.Dims, layers: int, batch: int, remat: str, seq_lens: tuple[int, ...] = SEQ_LENS,
          xla_remat: bool = True, compile_steps: bool = True) -> Sweep:
    """The figures at each sequence length (`compile_steps=False`: the residuals only, no compile; the
    temporary bytes and their fit are then empty)."""
    residual, temp = [], []
    for s in seq_lens:
        at = dataclasses.replace(dims, seq_len=s)
        residual.append(activation_bytes(saved_residuals(at, layers, batch, remat)))
        if compile_steps:
            temp.append(compiled_step(at, layers, batch, remat, xla_remat).temp)
    formula = predict("lab", 1, batch, dims.d_model, dims.heads)
    return Sweep(remat, tuple(seq_lens), tuple(residual), tuple(temp), fit_quadratic(seq_lens, residual),
                 fit_quadratic(seq_lens, temp) if temp else None, formula.linear * layers,
                 formula.quadratic * layers, xla_remat)


# ---- the lab page: its settings, one click's figures, and single answers for sheets and questions ----

MAX_BATCH, MAX_SEQ_LEN, MAX_D_MODEL, MAX_HEADS, MAX_LAYERS = 16, 64, 64, 8, 4  # a compile in seconds on 2 cores
MIN_SEQ_LEN = 2
VOCAB = transformer.Dims().vocab


@dataclasses.dataclass(frozen=True)
class Settings:
    batch: int
    layers: int
    dims: transformer.Dims

    @property
    def key(self) -> tuple[int, int, int, int, int]:
        return self.batch, self.dims.seq_len, self.dims.d_model, self.dims.heads, self.layers


def check_settings(batch: int, seq_len: int, d_model: int, heads: int, layers: int) -> Settings:
    """The page's sizes within its limits, heads dividing d_model; a LabInputError that says which otherwise."""
    batch = check_int("batch", batch, 1, MAX_BATCH)
    seq_len = check_int("seq_len", seq_len, MIN_SEQ_LEN, MAX_SEQ_LEN)
    d_model = check_int("d_model", d_model, 1, MAX_D_MODEL)
    heads = check_int("heads", heads, 1, MAX_HEADS)
    layers = check_int("layers", layers, 1, MAX_LAYERS)
    if d_model % heads:
        nearest = sorted({max(heads, d_model // heads * heads), -(-d_model // heads) * heads})
        raise LabInputError("block_not_divisible",
                            "heads ({parts}) must divide d_model ({size}); d_model that do: {nearest}",
                            spec="heads", dim="d_model", size=d_model, parts=heads,
                            nearest=", ".join(map(str, nearest)))
    return Settings(batch, layers, transformer.Dims(d_model, heads, seq_len, VOCAB))


def policy_coefficients(remat: str, b: int, h: int, a: int) -> tuple[float, float]:
    """The lab formula's bytes per unit of s and of s² for one layer under `remat`: every term ("none"), the
    terms selective recomputation keeps (no s² term), or the layer's input alone ("full": 4bh)."""
    if remat == "full":
        return float(LAB_BYTES * b * h), 0.0
    kept = [term for term in TERMS if remat == "none" or term.kept_by_selective]
    per = {"sbh": b * h, "as²b": a * b}
    linear = sum(term.lab * per[term.unit] for term in kept if term.unit == "sbh")
    return float(linear), float(sum(term.lab * per[term.unit] for term in kept if term.unit == "as²b"))


def policy_formula(remat: str, settings: Settings) -> int:
    """The lab formula's bytes for every block of the model under `remat` (the embedding and head left out)."""
    linear, quadratic = policy_coefficients(remat, settings.batch, settings.dims.d_model, settings.dims.heads)
    s = settings.dims.seq_len
    return int(settings.layers * (linear * s + quadratic * s * s))


@dataclasses.dataclass(frozen=True)
class PolicyFigures:
    """One policy at one setting: what autodiff saves, what the formula says, what the compiler reports."""

    remat: str
    residual_bytes: int      # the loss's arguments left out
    formula_bytes: int       # the lab formula, blocks only
    residuals: tuple[Residual, ...]
    temp: int                # compiler-reported
    peak: int | None         # compiler-reported
    flops: float             # compiler-reported


# The functions whose per-row values (last axis 1: a LayerNorm's 1/σ, a softmax row's sum) JAX keeps, as it names them.
PER_ROW_SOURCES = tuple(f"({f.__name__})" for f in (transformer.layer_norm, transformer.causal_attention))


def per_row_bytes(residuals: list[Residual] | tuple[Residual, ...]) -> int:
    """The residuals that hold one value per row of a LayerNorm or a softmax (shape (…, 1), from `PER_ROW_SOURCES`)."""
    return sum(r.bytes for r in residuals
               if not r.argument and r.shape[-1:] == (1,) and r.source.endswith(PER_ROW_SOURCES))


@dataclasses.dataclass(frozen=True)
class BeyondFormula:
    """What JAX saves under "none" beyond the lab formula's bytes for the blocks (`total`), in parts. `outside` the
    blocks: the embedding's and the head's residuals (the one-hot tokens, the final LayerNorm, the cross-entropy's
    exp), which no policy recomputes, read as full's excess over its own formula (each block's input). Inside the
    blocks, what the per-layer term list leaves out: `per_row` values (each LayerNorm's 1/σ and its derivative's
    factor, each softmax row's sum and its square: `per_row_bytes`) and the `other` rest (Q, K and V's weights
    stacked for one product, the LayerNorms' scales broadcast, scalars)."""

    total: int
    outside: int
    per_row: int

    @property
    def inside(self) -> int:
        return self.total - self.outside

    @property
    def other(self) -> int:
        return self.inside - self.per_row


@dataclasses.dataclass(frozen=True)
class Measured:
    settings: Settings
    policies: tuple[PolicyFigures, ...]
    forward_flops: float     # the loss's forward pass alone, compiler-reported

    def of(self, remat: str) -> PolicyFigures:
        return next(p for p in self.policies if p.remat == remat)

    @property
    def beyond_formula(self) -> BeyondFormula:
        """None's residual bytes beyond the formula for the blocks: outside the blocks (as under full) and inside."""
        none, full = self.of("none"), self.of("full")
        return BeyondFormula(none.residual_bytes - none.formula_bytes, full.residual_bytes - full.formula_bytes,
                             per_row_bytes(none.residuals) - per_row_bytes(full.residuals))

    @property
    def fewest(self) -> str:
        """The policy whose residuals take the fewest bytes."""
        return min(self.policies, key=lambda p: p.residual_bytes).remat

    @property
    def lowest_peak(self) -> str | None:
        """The policy with the lowest compiler-reported peak; None where the backend reports none."""
        if any(p.peak is None for p in self.policies):
            return None
        return min(self.policies, key=lambda p: p.peak).remat

    @property
    def recomputed_share(self) -> float:
        """Full remat's extra FLOPs over none's, as a share of one forward pass."""
        return (self.of("full").flops - self.of("none").flops) / self.forward_flops


def measure(settings: Settings, on_policy: Any = None) -> Measured:
    """Every policy's residuals and compiled step at `settings` (`on_policy(remat)` before each)."""
    rows = []
    for remat in POLICIES:
        if on_policy is not None:
            on_policy(remat)
        residuals = saved_residuals(settings.dims, settings.layers, settings.batch, remat)
        step = compiled_step(settings.dims, settings.layers, settings.batch, remat)
        rows.append(PolicyFigures(remat, activation_bytes(residuals), policy_formula(remat, settings),
                                  tuple(residuals), step.temp, step.peak, step.flops))
    return Measured(settings, tuple(rows), forward_flops(settings.dims, settings.layers, settings.batch))


def sweep_policies(settings: Settings, seq_lens: tuple[int, ...] = SEQ_LENS, on_policy: Any = None
                   ) -> tuple[Sweep, ...]:
    """Each policy's residual bytes over `seq_lens` and their quadratic fit (traced, not compiled)."""
    found = []
    for remat in POLICIES:
        if on_policy is not None:
            on_policy(remat)
        found.append(sweep(settings.dims, settings.layers, settings.batch, remat, seq_lens, compile_steps=False))
    return tuple(found)


def score_residual_bytes(residuals: list[Residual] | tuple[Residual, ...], settings: Settings) -> int:
    """The bytes of the residuals shaped like the attention's scores, (b, a, s, s) once broadcast."""
    s = settings.dims.seq_len
    return sum(r.bytes for r in residuals if not r.argument and len(r.shape) == 4 and r.shape[-2:] == (s, s))


# Single answers with plain arguments, for the worksheets and the interview questions.

def fewest_saved(batch: int, seq_len: int, d_model: int, heads: int, layers: int) -> str:
    """The policy whose saved residuals take the fewest bytes (traced, not compiled)."""
    settings = check_settings(batch, seq_len, d_model, heads, layers)
    saved = {remat: activation_bytes(saved_residuals(settings.dims, layers, batch, remat)) for remat in POLICIES}
    return min(saved, key=saved.get)


def saved_bytes(batch: int, seq_len: int, d_model: int, heads: int, layers: int, remat: str) -> int:
    settings = check_settings(batch, seq_len, d_model, heads, layers)
    return activation_bytes(saved_residuals(settings.dims, layers, batch, remat))


def lowest_peak(batch: int, seq_len: int, d_model: int, heads: int, layers: int) -> str:
    """The policy with the lowest compiler-reported peak."""
    settings = check_settings(batch, seq_len, d_model, heads, layers)
    peaks = {remat: compiled_step(settings.dims, layers, batch, remat).peak for remat in POLICIES}
    if None in peaks.values():
        raise RuntimeError("this backend gives no memory figures")
    return min(peaks, key=peaks.get)


def recompute_share(batch: int, seq_len: int, d_model: int, heads: int, layers: int) -> float:
    """Full remat's compiler-reported extra FLOPs over none's, as a share of the forward pass's FLOPs."""
    settings = check_settings(batch, seq_len, d_model, heads, layers)
    full, none = (compiled_step(settings.dims, layers, batch, remat).flops for remat in ("full", "none"))
    return (full - none) / forward_flops(settings.dims, layers, batch)


def score_growth(batch: int, seq_len: int, d_model: int, heads: int, layers: int) -> float:
    """How many times the score-shaped residuals' bytes grow (no remat) when seq_len doubles."""
    at = [check_settings(batch, s, d_model, heads, layers) for s in (seq_len, 2 * seq_len)]
    held = [score_residual_bytes(saved_residuals(x.dims, layers, batch, "none"), x) for x in at]
    return held[1] / held[0]


def fitted(batch: int, d_model: int, heads: int, layers: int, remat: str) -> Sweep:
    """The residual sweep over `SEQ_LENS` under `remat` (`residual_fit`: c0, c1, c2)."""
    settings = check_settings(batch, SEQ_LENS[0], d_model, heads, layers)
    return sweep(settings.dims, layers, batch, remat, SEQ_LENS, compile_steps=False)
