"""`python -m pmap_core plan --model M --hardware H --devices D --seq-len S --global-batch-tokens T`: every layout
of D devices over the mesh axes for a model on a cluster, ranked by predicted step time (`concepts.planner`):
memory per device, communication per axis, compute, bubble, step time, MFU — predicted, nothing run.

`--published` adds the published runs (`planner.PUBLISHED`): each paper's layout predicted beside what it
reported. `--track` saves the plan as one MLflow run (`planner.record.log_plan`, experiment
`record.PLAN_EXPERIMENT`); `--check` (the lab's transformer on this runtime's devices) compiles the best layouts
(`planner.check.check_top`) and reports their compiler-reported peak memory and HLO bytes beside the predicted,
each a child run of the plan's when tracked. The result goes to stdout (`--json`: one JSON object; otherwise as
text, `cli.plan_text`), bad input to stderr as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from typing import Any

from pmap_core.cli import plan_text
from pmap_core.cli.output import emit, progress
from pmap_core.concepts import planner
from pmap_core.concepts.planner import (
    HARDWARE,
    MODELS,
    PUBLISHED,
    Assumptions,
    Hardware,
    ModelShape,
    Prediction,
    Workload,
    files,
    record,
    search,
)
from pmap_core.concepts.planner.predict import DEFAULT_ASSUMPTIONS, PLAN_AXES, Layout
from pmap_core.concepts.planner.search import COMPUTE, MAX_PLAN_DEVICES, Plan, PlanResult, Verdict, step_parts
from pmap_core.tracking import check_tracking_uri, mlflow_ui_url, redact_uri, run_link, store_uri, tracking_uri
from pmap_core.validation import LabInputError, check_float, check_int

LAB = "lab"
PRECISIONS = ("mixed", "float32", "fp8")
DEFAULT_HARDWARE = "h100"
DEFAULT_TOP = 10
# Binary units, as Llama 3's "16M tokens" (16 · 2^20 = 16,777,216: 2,048 sequences of 8,192).
TOKEN_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}
_TOKENS = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMG]?)\s*", re.IGNORECASE)
MAX_TOKENS = 2**50
MAX_SEQ_LEN = 2**22  # the planner's limit (search.check_inputs)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        description="Every layout of D devices over the mesh axes (data, stage, expert, seq, model), each with its "
                    "best ZeRO stage, remat policy, micro-batches and interleaving, ranked by predicted step time "
                    "among those that fit in memory: memory per device, communication per axis, compute, bubble, "
                    "step time, MFU. Nothing runs: every figure is one of the lab's formulas.")
    add = parser.add_argument
    add("--model", choices=(*MODELS, LAB), default=None,
        help=f"a published model's shape, or {LAB}: the lab's transformer at its defaults (train --model transformer); "
             "or give --model-file")
    add("--model-file", default=None, metavar="FILE.toml",
        help="a model as TOML: name, layers, d_model, d_ff, heads, kv_heads, vocab; optional d_head (default "
             "d_model/heads), gated_mlp, tied, experts, top_k, shared_experts, dense_layers")
    add("--hardware", choices=tuple(HARDWARE), default=DEFAULT_HARDWARE,
        help=f"the accelerator, its node and links (default {DEFAULT_HARDWARE})")
    add("--hardware-file", default=None, metavar="FILE.toml",
        help="a cluster as TOML: name, peak_flops, memory_bytes, hbm_bytes_s, optional fp8_flops, and [[levels]] "
             "(innermost first) each with name, size (devices a group holds) and bytes_s (one way per device)")
    add("--layout", default=None, metavar="AXIS=N,...",
        help="predict this one layout (e.g. data=256,stage=16,model=8; the axes' product must be D); what "
             "--zero, --remat, --microbatches and --interleave leave open is searched")
    add("--zero", type=int, default=None, choices=(0, 1, 2, 3), help="with --layout: the ZeRO stage")
    add("--remat", default=None, choices=("none", "selective", "full"), help="with --layout: the remat policy")
    add("--microbatches", type=int, default=None, metavar="M", help="with --layout: micro-batches per step")
    add("--interleave", type=int, default=None, metavar="V", help="with --layout: interleaved stages per device")
    add("--context", default=None, choices=("zigzag", "contiguous", "ulysses"),
        help="with --layout: how its seq axis splits attention (ring attention on zig-zag or contiguous positions, or "
             "Ulysses' all-to-alls, which need seq to divide the heads a device holds)")
    add("--devices", type=int, default=None, metavar="D",
        help=f"D, the devices to lay out (required, except with --model {LAB}: this runtime's devices)")
    add("--seq-len", type=int, default=None, metavar="S",
        help=f"tokens per sequence (required, except with --model {LAB}: its default)")
    add("--global-batch-tokens", default=None, metavar="TOKENS",
        help="tokens per step over all devices, a whole number of sequences: a number, or with K, M or G in powers "
             "of 2 as Llama 3 counts them (16M = 16·2^20 = 16,777,216 tokens; 512K = 524,288; 2G = 2·2^30); "
             f"required, except with --model {LAB}: its default batch of sequences")
    add("--precision", choices=PRECISIONS, default=PRECISIONS[0],
        help="mixed: bfloat16 values with float32 master weights and Adam's moments; float32: every value in "
             "float32; fp8: mixed, with the matrix products in FP8 at the hardware's FP8 rate (default mixed)")
    add("--achievable", type=float, default=None,
        help="run every FLOP at this share of peak FLOP/s instead of each operation at its own rate (default: by "
             "operation: matrix products by their shape, attention by its kernel, elementwise work at memory "
             "bandwidth)")
    add("--overlap", type=float, default=DEFAULT_ASSUMPTIONS.overlap,
        help=f"the share of each axis's communication hidden behind compute (default {DEFAULT_ASSUMPTIONS.overlap})")
    add("--top", type=int, default=DEFAULT_TOP, metavar="N",
        help=f"how many plans to list, best first; 0: all of them (default {DEFAULT_TOP})")
    add("--published", action="store_true",
        help="also predict the published runs (Llama 3, Megatron-LM) at their own layouts, beside what they "
             "reported: the best variant of the layout, and the variant the paper ran")
    add("--json", action="store_true",
        help="print one JSON object: every listed plan's layout, memory parts in bytes, communication per axis, "
             "compute, bubble, step time, MFU, HFU; the verdict, the assumptions, the sources")
    group = parser.add_argument_group("tracking (MLflow)")
    group.add_argument("--track", action="store_true",
                       help=f"save the plan as one MLflow run (experiment {record.PLAN_EXPERIMENT}): the "
                            "setting, the assumptions, the first plan's layout and predictions")
    group.add_argument("--tracking-uri", default=None, metavar="URI",
                       help="MLflow store for --track (default: $MLFLOW_TRACKING_URI or sqlite:///mlflow.db)")
    group.add_argument("--check", action="store_true",
                       help=f"with --model {LAB} on this runtime's devices: compile the best layouts and report "
                            "their compiler-reported peak memory and HLO bytes per axis beside the predicted "
                            "(with --track, each a child run of the plan's)")
    parser.set_defaults(run=run_plan)


# ---- the setting ----

def parse_tokens(text: str) -> int:
    """"16M" -> 16 · 2^20; "512K", "2G", "1.5M", or a plain whole number of tokens."""
    match = _TOKENS.fullmatch(text)
    value = None
    if match:
        number, unit = match.groups()
        scaled = float(number) * TOKEN_UNITS[unit.upper()]
        value = int(scaled) if scaled.is_integer() else None
    if value is None or not 1 <= value <= MAX_TOKENS:
        raise LabInputError("plan_batch_tokens", "--global-batch-tokens must be a whole number of tokens from 1, "
                            "plain or with K, M or G (powers of 2: 16M = 16,777,216), got {text!r}", text=text)
    return value


def lab_dims(seq_len: int | None = None) -> Any:
    """The lab's transformer sizes (`planner.check.LAB_DIMS`) at `seq_len` positions."""
    from pmap_core.concepts.planner import check

    return dataclasses.replace(check.LAB_DIMS, seq_len=seq_len) if seq_len else check.LAB_DIMS


def app_devices() -> int:
    from pmap_core.runtime import describe_runtime

    return describe_runtime().device_count


@dataclasses.dataclass(frozen=True)
class Setting:
    model: ModelShape
    devices: int
    workload: Workload
    tokens_text: str


def setting(args: argparse.Namespace) -> Setting:
    """The model, D and the workload the flags ask for; the lab's defaults fill what --model lab leaves out."""
    if (args.model is None) == (args.model_file is None):
        raise LabInputError("plan_model", "plan needs one of --model and --model-file")
    lab = args.model == LAB
    if not lab:
        missing = [flag for flag, value in (("--devices", args.devices), ("--seq-len", args.seq_len),
                                            ("--global-batch-tokens", args.global_batch_tokens)) if value is None]
        if missing:
            raise LabInputError("plan_needs", "plan --model {model} needs {flags}", model=args.model or args.model_file,
                                flags=", ".join(missing))
    devices = args.devices if args.devices is not None else app_devices()
    check_int("--devices", devices, 1, MAX_PLAN_DEVICES)
    if lab:
        from pmap_core.concepts.planner import check

        check_int("--seq-len", args.seq_len if args.seq_len is not None else 1, 1, MAX_SEQ_LEN)
        model = check.lab_model(lab_dims(args.seq_len))
    elif args.model_file is not None:
        model = files.load_model(args.model_file)
    else:
        model = MODELS[args.model]
    seq_len = args.seq_len if args.seq_len is not None else model.positions
    check_int("--seq-len", seq_len, 1, MAX_SEQ_LEN)
    if args.global_batch_tokens is None:
        from pmap_core.train.config import default_batch

        tokens, text = default_batch(devices) * seq_len, "the lab's default batch"
    else:
        tokens, text = parse_tokens(args.global_batch_tokens), args.global_batch_tokens.strip()
    if tokens % seq_len:
        lower = tokens // seq_len * seq_len
        nearest = f"{lower:,} or {lower + seq_len:,}" if lower else f"{seq_len:,}"
        raise LabInputError("plan_whole_sequences", "--global-batch-tokens {text} ({tokens:,} tokens) is not a whole "
                            "number of {seq_len:,}-token sequences; the nearest that are: {nearest} tokens",
                            text=text, tokens=tokens, seq_len=seq_len, nearest=nearest)
    if lab:  # the lab's programs train float32 with SGD, whatever --precision says
        from pmap_core.concepts.planner import check

        return Setting(model, devices, check.lab_workload(tokens // seq_len, lab_dims(seq_len)), text)
    fp8 = args.precision == "fp8"
    return Setting(model, devices, Workload(tokens // seq_len, seq_len, "mixed" if fp8 else args.precision, fp8=fp8),
                   text)


def hardware_of(args: argparse.Namespace) -> Hardware:
    hardware = files.load_hardware(args.hardware_file) if args.hardware_file else HARDWARE[args.hardware]
    if args.precision == "fp8" and not hardware.fp8_flops:
        raise LabInputError("plan_fp8", "--precision fp8 needs the hardware's FP8 rate: {name} gives no fp8_flops",
                            name=hardware.name)
    return hardware


def one_layout(text: str, model: ModelShape, devices: int, workload: Workload) -> Layout:
    """--layout's axes ("data=256,stage=16,model=8"): known axes, whole sizes, their product D, each dividing what it
    splits; otherwise one line that names what does not."""
    sizes: dict[str, int] = {}
    for part in text.split(","):
        name, _, size = part.strip().partition("=")
        if name not in PLAN_AXES or not size.strip().isdigit() or int(size) < 1 or name in sizes:
            raise LabInputError("plan_layout", "--layout {text!r}: {part!r} is not axis=size with an axis of {axes} "
                                "(each once) and a whole size from 1", text=text, part=part.strip(),
                                axes=", ".join(PLAN_AXES))
        sizes[name] = int(size)
    layout = Layout(**sizes)
    if layout.devices != devices:
        raise LabInputError("plan_layout_devices", "--layout {text!r} lays out {product:,} devices, not "
                            "D = {devices:,}", text=text, product=layout.devices, devices=devices)
    reasons = [(model.heads % layout.model, f"model={layout.model} does not divide the {model.heads} heads"),
               (workload.seq_len % layout.seq, f"seq={layout.seq} does not divide the {workload.seq_len}-token "
                                               "sequence"),
               (layout.expert > 1 and (not model.experts or model.experts % layout.expert),
                f"expert={layout.expert} does not divide the {model.experts} experts"),
               (layout.stage > model.layers, f"stage={layout.stage} is more stages than the {model.layers} blocks"),
               (workload.sequences % (layout.replica * layout.data * layout.expert),
                f"replica × data × expert = {layout.replica * layout.data * layout.expert} does not divide the "
                f"{workload.sequences} sequences")]
    for failed, reason in reasons:
        if failed:
            raise LabInputError("plan_layout_split", "--layout {text!r}: {reason}", text=text, reason=reason)
    return layout


def chosen_variants(args: argparse.Namespace) -> Any:
    """What --zero, --remat, --microbatches and --interleave fix of a layout's variants (None: every variant)."""
    fixed = {name: value for name, value in (("zero", args.zero), ("remat", args.remat),
                                             ("microbatches", args.microbatches), ("virtual", args.interleave),
                                             ("context", args.context))
             if value is not None}
    if not fixed:
        return None
    return lambda layout: all(getattr(layout, name) == value for name, value in fixed.items())


# ---- as JSON ----

def prediction_dict(p: Prediction, overlap: float) -> dict[str, Any]:
    memory = {**dataclasses.asdict(p.memory), "total": p.memory.total, "budget": p.memory_budget}
    parts = step_parts(p, overlap)
    return {
        "label": p.layout.label(), "layout": {**dataclasses.asdict(p.layout), "devices": p.layout.devices},
        "memory_bytes": memory, "comm": [dataclasses.asdict(c) for c in p.comm],
        "compute_s": p.compute_s, "bubble": p.bubble, "exposed_comm_s": p.exposed_comm_s, "step_s": p.step_s,
        "step_parts_s": parts, "largest_beside_compute": _largest(parts), "mfu": p.mfu, "hfu": p.hfu,
        "model_flops": p.model_flops, "hardware_flops": p.hardware_flops, "fits": p.fits,
        "zero": p.layout.zero, "remat": p.layout.remat, "microbatches": p.layout.microbatches,
        "interleave": p.layout.virtual, "memory_bytes_per_device": p.memory.total, "step_seconds": p.step_s,
        "compute_parts_s": dict(p.compute_parts),
    }


def plan_dict(rank: int, found: Plan, overlap: float) -> dict[str, Any]:
    return {"rank": rank, **prediction_dict(found.prediction, overlap), "variants": found.variants,
            "variants_fitting": found.fitting}


def _largest(parts: dict[str, float]) -> str | None:
    beside = {name: seconds for name, seconds in parts.items() if name != COMPUTE and seconds > 0}
    return max(beside, key=beside.__getitem__) if beside else None


def verdict_dict(verdict: Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {"bound": verdict.bound, "bound_s": verdict.bound_s, "separating": verdict.separating,
            "separating_s": verdict.separating_s,
            "faster_unfitting": verdict.faster_unfitting.label() if verdict.faster_unfitting else None}


def published_rows(assumptions: Assumptions, given: Setting, hardware_key: str) -> list[dict[str, Any]]:
    """Each published run at its own layout, model and hardware, under these assumptions: the best variant the
    planner finds and the variant the paper ran (its remat policy, where it says), beside what it reported (MFU, or
    HFU where the paper counts its recomputation)."""
    rows = []
    for run in PUBLISHED.values():
        model, hardware = MODELS[run.model], HARDWARE[run.hardware]
        counted = "hfu" if run.counts_recompute else "mfu"
        variants = {}
        for name, as_run in (("best", False), ("as_run", True)):
            p = planner.evaluate_published(run, model, hardware, assumptions, as_run=as_run).prediction
            variants[name] = {**prediction_dict(p, assumptions.overlap), "utilisation": getattr(p, counted),
                              "tflops_per_device": getattr(p, counted) * hardware.peak_flops / 1e12}
        rows.append({
            "key": run.key, "model": run.model, "hardware": run.hardware, "devices": run.devices,
            "seq_len": run.seq_len, "global_batch_tokens": run.global_batch_tokens,
            "paper_layout": {"TP": run.model_axis, "CP": run.seq_axis, "PP": run.stage_axis, "DP": run.data_axis},
            "paper_remat": run.remat, "source": run.source,
            "reported": {"utilisation": run.utilisation, "counts": counted,
                         "tflops_per_device": run.tflops_per_device},
            **variants,
            "same_setting": (run.model, run.hardware, run.devices, run.seq_len, run.global_batch_tokens) == (
                given.model.key, hardware_key, given.devices, given.workload.seq_len, given.workload.tokens),
        })
    return rows


def check_rows(checks: list[Any], devices: int) -> list[dict[str, Any]]:
    from pmap_core.concepts.planner import check

    return [{"rank": rank, "label": c.layout.label(), "layout": dataclasses.asdict(c.layout),
             "predicted_memory_bytes": c.prediction.memory.total, "compiled_peak_bytes": c.compiled_peak_bytes,
             "memory_ratio": c.memory_ratio, "predicted_bytes": dict(c.predicted_bytes),
             "hlo_bytes": dict(c.hlo_bytes), "axis_ratios": dict(c.axis_ratios), "reasons": list(c.reasons),
             "train_command": check.train_command(c.layout, devices)}
            for rank, c in enumerate(checks, start=1)]


# ---- the command ----

def run_plan(args: argparse.Namespace) -> int:
    given = setting(args)
    hardware = hardware_of(args)
    layout = one_layout(args.layout, given.model, given.devices, given.workload) if args.layout else None
    if layout is not None and args.context == "contiguous":  # slower than zig-zag: searched only when asked for
        layout = dataclasses.replace(layout, context="contiguous")
    if layout is None and chosen_variants(args) is not None:
        raise LabInputError("plan_choices_need_layout", "--zero, --remat, --microbatches, --interleave and --context "
                            "fix the choices of one layout: give --layout too")
    if layout is not None and args.context and args.context not in search.contexts(given.model, layout,
                                                                                    given.workload):
        raise LabInputError("plan_context", "--context {context} does not split this layout's seq axis of {seq}: "
                            "Ulysses needs seq to divide the {heads} heads a device holds, zig-zag the sequence "
                            "into 2 × seq chunks", context=args.context, seq=layout.seq,
                            heads=given.model.heads // layout.model)
    achievable = None if args.achievable is None else check_float("--achievable", args.achievable, 0.01, 1.0)
    assumptions = Assumptions(achievable=achievable, overlap=check_float("--overlap", args.overlap, 0.0, 1.0))
    top = check_int("--top", args.top, 0, 10**9)
    if args.check and (args.model != LAB or given.devices != app_devices()):
        raise LabInputError("plan_check", "--check compiles the lab's transformer on this runtime's {devices} "
                            "devices: use it with --model lab, leaving out --devices or giving {devices}",
                            devices=app_devices())
    # A store no run could be written to is refused (exit status 2) before the search, not after it.
    uri = check_tracking_uri(args.tracking_uri or tracking_uri()) if args.track else None
    if args.model == LAB:  # only what the lab has a program for, written as the lab's programs are
        from pmap_core.concepts.planner import check

        assumptions = dataclasses.replace(check.LAB_ASSUMPTIONS, achievable=assumptions.achievable,
                                          overlap=assumptions.overlap)
        result = check.lab_plan(given.devices, hardware, assumptions, given.workload.sequences,
                                lab_dims(given.workload.seq_len))
    elif layout is not None:
        result = planner.plan(given.model, hardware, given.devices, given.workload, assumptions, layouts=[layout],
                              runnable=chosen_variants(args))
    else:
        result = planner.plan(given.model, hardware, given.devices, given.workload, assumptions)
    checks: list[Any] = []
    if args.check:
        from pmap_core.concepts.planner import check

        progress(f"compiling the first layouts of the lab's transformer on {given.devices} devices")
        checks = list(check.check_top(given.devices))
    published = published_rows(assumptions, given, hardware.key) if args.published else []
    tracking = track(result, uri, checks) if uri else {"run_id": None, "tracking_uri": None}
    shown = slice(None) if top == 0 else slice(top)
    summary = {
        "model": {**dataclasses.asdict(given.model), "params": given.model.params,
                  "active_params": given.model.active_params},
        "hardware": dataclasses.asdict(hardware),
        "devices": given.devices,
        "workload": {**dataclasses.asdict(given.workload), "tokens": given.workload.tokens,
                     "global_batch_tokens": given.tokens_text,
                     "token_units": "K, M, G are powers of 2: 16M = 16·2^20 = 16,777,216 tokens"},
        "assumptions": dataclasses.asdict(assumptions),
        "sources": {"model": given.model.source, "hardware": hardware.source},
        "layouts": len(result.plans) + len(result.unfit),
        "plans_fitting": len(result.plans), "plans_unfit": len(result.unfit),
        "plans": [plan_dict(rank, found, assumptions.overlap)
                  for rank, found in enumerate(result.plans[shown], start=1)],
        "unfit": [plan_dict(rank, found, assumptions.overlap)
                  for rank, found in enumerate(result.unfit[shown], start=1)],
        "verdict": verdict_dict(result.verdict),
        "published": published,
        "checks": check_rows(checks, given.devices) if checks else [],
        "tracking": tracking,
    }
    if args.json:
        emit(summary, True)
    else:
        plan_text.print_text(result, summary, top)
    return 0


def track(result: PlanResult, uri: str, checks: list[Any]) -> dict[str, Any]:
    from mlflow.tracking import MlflowClient

    from pmap_core.tracking.mlflow_backend import Tracker

    tracker = Tracker(uri, experiment=record.PLAN_EXPERIMENT)
    run_id = record.log_plan(result, tracker, checks)
    store = tracker.active_uri  # a store that failed: the tracker said so in one line, naming the fallback store
    link = None
    if not tracker.fell_back_to:
        experiment = MlflowClient(store_uri(store)).get_run(run_id).info.experiment_id
        link = run_link(mlflow_ui_url(store), experiment, run_id)
    return {"run_id": run_id, "tracking_uri": redact_uri(store), "experiment": record.PLAN_EXPERIMENT,
            "mlflow_run_url": link, "fell_back_to": tracker.fell_back_to, "check_runs": len(checks)}
