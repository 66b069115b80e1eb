"""The `plan` command's result as text: the setting in two lines, the ranked layouts as a table, what bounds the
first and what separates it from the second, the assumptions and sources, then the published runs, the compiled
checks and the MLflow run, each in a line or two (`cli.plan` builds the summary these read; `--json` prints that
summary instead).
"""

from __future__ import annotations

from typing import Any

from pmap_core.concepts.planner.search import COMPUTE, MEMORY, PlanResult, Verdict

GB = 1e9


def _gb(value: float) -> str:
    """GB with one decimal; a size under 0.05 GB (the lab's transformer) in two significant digits."""
    return f"{value / GB:,.1f}" if value >= 0.05 * GB or value == 0 else f"{value / GB:.2g}"


def _count(value: int) -> str:
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:,}"


def _many(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _sequence_parallel(layout: dict[str, Any]) -> str:
    """on or off where a model axis makes sequence parallelism a choice, else -."""
    if layout["model"] <= 1:
        return "-"
    return "on" if layout["sequence_parallel"] else "off"


def _table(rows: list[dict[str, Any]]) -> list[str]:
    head = (f"{'#':>4} {'rep':>4} {'data':>5} {'stage':>5} {'exp':>4} {'seq':>4} {'model':>5}  {'ZeRO':>4} "
            f"{'remat':<9} {'SP':<3} {'CP':<10} {'M':>5} {'v':>2}  {'mem GB':>7} {'step s':>8} {'MFU':>6} {'HFU':>6}  "
            "largest beside compute")
    lines = [head]
    for row in rows:
        layout, parts = row["layout"], row["step_parts_s"]
        largest = row["largest_beside_compute"]
        beside = f"{largest} {parts[largest]:.3g} s" if largest else "-"
        lines.append(f"{row['rank']:>4} {layout['replica']:>4} {layout['data']:>5} {layout['stage']:>5} "
                     f"{layout['expert']:>4} {layout['seq']:>4} {layout['model']:>5}  {layout['zero']:>4} "
                     f"{layout['remat']:<9} "
                     f"{_sequence_parallel(layout):<3} {layout['context'] if layout['seq'] > 1 else '-':<10} "
                     f"{layout['microbatches']:>5} {layout['virtual']:>2}  "
                     f"{_gb(row['memory_bytes']['total']):>7} "
                     f"{row['step_s']:>8.3g} {row['mfu']:>6.3f} {row['hfu']:>6.3f}  {beside}")
    return lines


def print_text(result: PlanResult, summary: dict[str, Any], top: int) -> None:
    model, hardware, workload = result.model, result.hardware, result.workload
    devices, tokens_text = summary["devices"], summary["workload"]["global_batch_tokens"]
    lines = [
        f"{model.name}, {_count(model.params)} parameters, on {devices:,} × {hardware.name} "
        f"({hardware.node} per node: {hardware.intra_name}; across nodes: {hardware.inter_name})",
        f"per step: {_many(workload.sequences, 'sequence')} × {workload.seq_len:,} tokens = {workload.tokens:,} "
        f"tokens ({tokens_text}; K, M, G are powers of 2), {workload.precision} precision"
        f"{' with FP8 products (MFU against the 16-bit peak)' if workload.fp8 else ''}, optimizer "
        f"{workload.optimizer}",
    ]
    budget = _gb(hardware.memory_bytes)
    if result.plans:
        shown = "all of them" if top == 0 or top >= len(result.plans) else f"the first {top}"
        lines.append(f"{len(result.plans):,} of {summary['layouts']:,} layouts fit in {budget} GB per device; "
                     f"{shown}, by predicted step time:")
        lines += _table(summary["plans"])
        lines += _verdict_lines(result.verdict)
    else:
        lines.append(f"no layout fits in {budget} GB per device (of {_many(summary['layouts'], 'layout')}); the "
                     "least memory first:")
        lines += _table(summary["unfit"])
    a = result.assumptions
    sustained = "each operation at its own rate" if a.achievable is None else f"{a.achievable:g} of peak sustained"
    lines.append(f"assumed: {sustained}, {a.overlap:g} of communication hidden behind "
                 f"compute, FlashAttention {'on' if a.flash_attention else 'off'}, capacity factor "
                 f"{a.capacity_factor:g}; GB = 10^9 bytes")
    lines += [f"model: {model.source}", f"hardware: {hardware.source}"]
    for row in summary["published"]:
        lines += _published_lines(row)
    for row in summary["checks"]:
        lines += _check_lines(row)
    tracking = summary["tracking"]
    if tracking["run_id"]:
        lines.append(f"mlflow: {tracking['tracking_uri']} run {tracking['run_id']}"
                     + (f" ({tracking['mlflow_run_url']})" if tracking["mlflow_run_url"] else ""))
    print("\n".join(lines))


def _verdict_lines(verdict: Verdict | None) -> list[str]:
    if verdict is None:
        return []
    if verdict.bound == MEMORY:
        bound = (f"bound by memory: a variant {verdict.bound_s:.3g} s faster does not fit "
                 f"({verdict.faster_unfitting.label() if verdict.faster_unfitting else ''})")
    elif verdict.bound == COMPUTE:
        bound = (f"nothing but compute bounds it ({verdict.bound_s:.3g} s): no communication left exposed and no "
                 "bubble")
    else:
        bound = f"its largest part beside compute: {verdict.bound} ({verdict.bound_s:.3g} s)"
    lines = [f"first: {bound}"]
    if verdict.separating:
        lines.append(f"over the second, the part that differs most: {verdict.separating} "
                     f"({verdict.separating_s:.3g} s less)")
    return lines


def _published_lines(row: dict[str, Any]) -> list[str]:
    paper = " ".join(f"{axis} {size}" for axis, size in row["paper_layout"].items())
    counted = row["reported"]["counts"].upper()
    best, as_run = row["best"], row["as_run"]
    return [f"published {row['key']} ({row['source']}): {row['devices']:,} × {row['hardware']}, {paper}: "
            f"reported {counted} {row['reported']['utilisation']:.2f}; predicted {best['utilisation']:.2f} at its best "
            f"({best['label']}, {_gb(best['memory_bytes']['total'])} GB), {as_run['utilisation']:.2f} as run "
            f"({as_run['label']}, {_gb(as_run['memory_bytes']['total'])} GB)"]


def _check_lines(row: dict[str, Any]) -> list[str]:
    peak = row["compiled_peak_bytes"]
    memory = (f"compiled peak {peak:,} bytes, {row['memory_ratio']:.2f}× the predicted"
              if peak is not None and row["memory_ratio"] is not None else "compiled peak unknown")
    ratios = ", ".join(f"{axis} {ratio:.2f}×" for axis, ratio in row["axis_ratios"].items() if ratio is not None)
    lines = [f"check {row['rank']}: {row['label']}: {memory}; HLO bytes over predicted: {ratios or '-'}",
             "  train it: " + " ".join(row["train_command"])]
    if row["reasons"]:  # codes of `planner.check.REASONS`; the page "Plan a run" explains each
        lines.append("  where they differ: " + ", ".join(row["reasons"]))
    return lines
