"""Measured, not typed: the bytes each device holds for params, gradients and optimizer state, and
the bytes its collectives send per step — beside its program's textbook model (`Program.analytic`: ZeRO's
and data parallelism's `costs.analytic.zero_*`, Megatron's for the tensor-parallel MLP; none for a pipeline).

- Held bytes are read from real arrays by the program itself (`ParallelProgram.held_bytes`): the
  trained state's `addressable_shards` (the largest shard total over this process's devices), and
  the gradient as the program holds it after its gradient collective.
- Communication is read from compiled HLO (`hlo.collectives`). A collective inside a loop body runs
  once per iteration: each computation's executions per call are the product of the trip counts of
  the `while` loops around it (XLA's `known_trip_count`, else the loop lengths the program was built
  with, outermost first), and a chunk of n steps is divided by n. Bytes sent per device follow the
  ring: all-reduce 2(g−1)/g·S, all-gather and reduce-scatter (g−1)/g·S of the whole array S, for a
  group of g devices; an all-to-all (g−1)/g of its operand, which is the size of its result (each device keeps
  its own 1/g and sends one 1/g to each other device; XLA's CPU backend writes it as a tuple of the g chunks in
  and the g chunks out, whose sum is that size). The sizes of an all-to-all's chunks as a ring forwards them hop by
  hop (a quarter of an all-gather's link time, the JAX Scaling Book counts) are not what this reads: it counts each
  byte once, where it leaves its device.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pmap_core import hlo
from pmap_core.costs import analytic
from pmap_core.train.program import AnalyticModel, ParallelProgram

_HEADER = re.compile(r"^(?P<entry>ENTRY )?%?(?P<name>[\w.\-]+)(?: \(.*)? \{\s*$")
_CALLEE = re.compile(r"\b(?P<key>calls|to_apply|body|condition|true_computation|false_computation)"
                     r"=%?(?P<name>[\w.\-]+)")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')


@dataclasses.dataclass(frozen=True)
class CollectiveRun:
    collective: hlo.Collective
    runs_per_call: int   # executions per call of the program
    loop_depth: int      # while loops around it: 1 = once per step of a chunk, 2 = once per micro-batch

    @property
    def ring_bytes(self) -> float:
        """Bytes each device sends for one execution, on a ring; a collective-permute sends its operand
        once, to its one target (at most: a device with no target sends nothing); an all-to-all (g−1)/g of its
        operand (its result's size: what it keeps, 1/g, it does not send)."""
        c, g = self.collective, self.collective.group_size or 1
        if c.kind == "collective-permute":
            return float(c.result_bytes)
        if c.kind == "all-to-all":
            return c.operand_bytes * (g - 1) / g
        whole = c.result_bytes * (g if c.kind == "reduce-scatter" else 1)
        return whole * (2 if c.kind == "all-reduce" else 1) * (g - 1) / g


def collective_runs(text: str, trips: tuple[int, ...] = ()) -> list[CollectiveRun]:
    """Every collective of HLO text with how often one call runs it (`trips`: loop lengths by depth,
    used where the HLO states no trip count)."""
    lines: dict[str, list[str]] = {}
    entry, current = None, None
    for line in text.splitlines():
        if (header := _HEADER.match(line)) and not line.startswith(" "):
            current = header["name"]
            lines[current] = []
            entry = current if header["entry"] else entry
        elif current is not None:
            lines[current].append(line)
    runs: list[CollectiveRun] = []

    def visit(name: str, times: int, depth: int) -> None:
        body = lines.get(name, [])
        runs.extend(CollectiveRun(c, times, depth) for c in hlo.collectives("\n".join(body)))
        for line in body:
            trip = _TRIP.search(line)
            for callee in _CALLEE.finditer(line):
                if callee["key"] == "body":
                    n = int(trip[1]) if trip else (trips[depth] if depth < len(trips) else 1)
                    visit(callee["name"], times * n, depth + 1)
                elif callee["key"] != "condition":
                    visit(callee["name"], times, depth)

    if entry is not None:
        visit(entry, 1, 0)
    return runs


@dataclasses.dataclass(frozen=True)
class Comm:
    """Communication of one compiled step, per device."""

    bytes_per_step: float                 # ring bytes sent per step, every collective
    by_kind: dict[str, float]             # the same, per collective kind
    dtypes: tuple[str, ...]               # element types the collectives carry
    reductions_per_step: float            # all-reduce + reduce-scatter instructions run per step
    reduction_bytes_per_step: float       # their ring bytes: the gradient's (and the loss's) collectives
    deepest_loop: int                     # 2 when a collective runs inside the micro-batch loop


def comm_per_step(text: str, steps: int, accum_steps: int = 1) -> Comm:
    runs = collective_runs(text, (steps, accum_steps))
    by_kind: dict[str, float] = {}
    for run in runs:
        kind = run.collective.kind
        by_kind[kind] = by_kind.get(kind, 0.0) + run.ring_bytes * run.runs_per_call / steps
    reducing = [r for r in runs if r.collective.kind in ("all-reduce", "reduce-scatter")]
    dtypes = sorted({s.split("[")[0] for r in runs for s in r.collective.shapes})
    return Comm(sum(by_kind.values()), by_kind, tuple(dtypes), sum(r.runs_per_call for r in reducing) / steps,
                sum(r.ring_bytes * r.runs_per_call for r in reducing) / steps,
                max((r.loop_depth for r in runs), default=0))


class BytesBeside:
    """A compiled step's bytes per device by collective, read from its HLO (`comm_by_kind`), beside its formula's
    (`formula_by_kind`): the pages' steps of context and expert parallelism."""

    comm_by_kind: dict[str, float]
    formula_by_kind: dict[str, float]

    @property
    def comm_bytes(self) -> float:
        return sum(self.comm_by_kind.values())

    @property
    def formula_total(self) -> float:
        return sum(self.formula_by_kind.values())


@dataclasses.dataclass(frozen=True)
class Footprint:
    """Per device, measured beside the program's own analytic model where it has one (Ψ parameters; ZeRO's
    and data parallelism's: `analytic.zero_memory_per_device`, `analytic.zero_comm_bytes_per_step`)."""

    strategy: str
    devices: int
    param_count: int                     # Ψ
    param_bytes_per_device: int
    grad_bytes_per_device: int
    opt_bytes_per_device: int
    comm_bytes_per_step: float           # from the compiled HLO: what this backend runs
    comm_by_kind: dict[str, float]
    comm_dtypes: tuple[str, ...]
    grad_comm_bytes_per_step: float      # the all-reduces and reduce-scatters among them
    # The same from the program as JAX emitted it, before the backend's passes: XLA's CPU backend
    # widens a bfloat16 all-reduce or reduce-scatter to float32, so only this one shows it halved there.
    emitted_grad_comm_bytes_per_step: float
    reductions_per_step: float
    deepest_loop: int                    # 2 when some collective runs once per micro-batch
    compiled_memory: dict[str, int]      # `compiled.memory_analysis()` fields the backend filled
    model_memory: analytic.ZeroMemory | None   # None: the program's model says nothing of the bytes held
    model_comm_bytes_per_step: float | None    # None: nor of the bytes sent
    precision: str = "float32"
    padding_bytes_per_device: int = 0    # of the params: zeros that let every layer split into D shards
    emitted_comm_bytes_per_step: float = 0.0  # every collective of the program as JAX emitted it
    # One device's bytes during a call of the compiled chunk: its arguments (the state it holds, its
    # rows of the batch), its outputs not written over them, and the compiler's temporaries (activations,
    # gathered layers, gradients). None where the backend reports no memory figures.
    peak_bytes_per_device: int | None = None
    # The activations one device's forward pass saves for its backward, from JAX's list of residuals (None
    # where the program does not say: `ParallelProgram.saved_activation_bytes`).
    residual_bytes_per_device: int | None = None
    # One step's FLOPs on one device, as the compiler counts them (`cost_analysis()`; XLA counts a loop's body
    # once, so a chunk of n steps reports one step's). None where the backend counts none.
    flops_per_step: float | None = None

    def ratios(self) -> dict[str, float | None]:
        """measured / model for each figure (None where the model says zero, or nothing)."""
        memory = self.model_memory
        pairs = {"param": (self.param_bytes_per_device, memory and memory.params),
                 "grad": (self.grad_bytes_per_device, memory and memory.grads),
                 "opt": (self.opt_bytes_per_device, memory and memory.optimizer),
                 "comm": (self.comm_bytes_per_step, self.model_comm_bytes_per_step)}
        return {name: (measured / model if model else None) for name, (measured, model) in pairs.items()}


def compiled_memory(compiled: Any) -> dict[str, int]:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a backend without memory figures reports none
        return {}
    names = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
             "generated_code_size_in_bytes")
    return {name: int(getattr(stats, name)) for name in names if getattr(stats, name, 0)}


def compiled_flops(compiled: Any) -> float | None:
    try:
        analysis = compiled.cost_analysis()
    except Exception:  # noqa: BLE001 - a backend without a cost analysis reports none
        return None
    analysis = analysis[0] if isinstance(analysis, list) else analysis  # older JAX: one dict per device
    return float(analysis["flops"]) if analysis and "flops" in analysis else None


def peak_bytes(memory: dict[str, int]) -> int | None:
    """arguments + outputs − aliased outputs + temporaries, from `compiled_memory`."""
    if not memory:
        return None
    return (memory.get("argument_size_in_bytes", 0) + memory.get("output_size_in_bytes", 0)
            - memory.get("alias_size_in_bytes", 0) + memory.get("temp_size_in_bytes", 0))


def measure(program: ParallelProgram, carried: Any, model: AnalyticModel | None = None) -> Footprint:
    """The footprint of a trained run, through the program's interface only: `carried` is what its
    last call returned (params, or the whole training state); `model`: its program's analytic figures
    (its registry entry's `analytic`), None where it has none."""
    spec = program.spec
    held = program.held_bytes(carried)
    comm = comm_per_step(program.compiled.as_text(), spec.steps, spec.accum_steps)
    emitted = comm_per_step(program.emitted_hlo, spec.steps, spec.accum_steps) if program.emitted_hlo else comm
    memory = compiled_memory(program.compiled)
    model = model or AnalyticModel()
    return Footprint(
        strategy=spec.strategy, devices=spec.devices, param_count=program.param_count,
        param_bytes_per_device=held.params, grad_bytes_per_device=held.grads, opt_bytes_per_device=held.opt,
        comm_bytes_per_step=comm.bytes_per_step, comm_by_kind=comm.by_kind, comm_dtypes=comm.dtypes,
        grad_comm_bytes_per_step=comm.reduction_bytes_per_step,
        emitted_grad_comm_bytes_per_step=emitted.reduction_bytes_per_step,
        reductions_per_step=comm.reductions_per_step, deepest_loop=comm.deepest_loop,
        compiled_memory=memory, model_memory=model.memory, model_comm_bytes_per_step=model.comm_bytes_per_step,
        precision=spec.precision, padding_bytes_per_device=held.padding,
        emitted_comm_bytes_per_step=emitted.bytes_per_step, peak_bytes_per_device=peak_bytes(memory),
        residual_bytes_per_device=program.saved_activation_bytes, flops_per_step=compiled_flops(program.compiled),
    )
