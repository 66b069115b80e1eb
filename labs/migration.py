"""pmap → shard_map → jit: one data-parallel step three ways, run live; what changes; a mesh and
PartitionSpec picker drawn from the array's real shards; the collectives of the compiled programs; the
steps from JAX 0.10.2 to 0.12, each run on the installed JAX beside what 0.10.2 did."""

import inspect

import altair as alt
import pandas as pd
import streamlit as st

from labs.ui import background, charts, migration_work
from labs.ui.blocks import dataframe, export_button, folded, show_code
from labs.ui.hardware import runtime_info
from labs.ui.i18n import texts
from labs.ui.links import url_choice, url_devices, url_int
from labs.ui.visitor import guard, input_error_text
from pmap_core import LabInputError, export, hlo
from pmap_core.concepts import mesh_view, migration, migration_steps
from pmap_core.train import models

T = texts("migration")
PROGRAMS = {"pmap": migration.pmap_step, "shard_map": migration.shard_map_step, "jit": migration.jit_step}


@st.cache_data(show_spinner=False, max_entries=256)
def placement(devices: int, mesh: str, spec: str, rows: int, cols: int) -> mesh_view.Placement:
    return mesh_view.place(devices, mesh, spec, rows, cols)


def working(what: str, keys: tuple) -> None:
    """The ⏳ note of a section whose programs still compile or run off the page's run; the page shows the section
    once they are done."""
    background.wait_for(keys, lambda seconds: st.info(T("working", what=T(what), seconds=seconds), icon="⏳"))


def yes_no(flag: bool) -> str:
    return T("yes") if flag else T("no")


def show_ways(result: migration.ThreeWays, per_device: int) -> None:
    st.subheader(T("ways.heading"))
    st.markdown(T("ways.body", batch=result.batch, features=migration.FEATURES, devices=result.devices,
                  per_device=per_device))
    for column, way in zip(st.columns(3), result.ways, strict=True):
        with column:
            st.markdown(f"#### {T(f'way.{way.impl}')}\n\n{T('view.label')}: `{way.body_view}`")  # as typeof printed it
            st.caption(T("view.in", shape=way.input_shape))
    with folded(T("ways.code"), "migration.ways_code") as shown:  # code blocks are the costliest to draw
        for column, way in zip(st.columns(3), result.ways, strict=True) if shown else ():
            column.code(inspect.getsource(PROGRAMS[way.impl]), language="python", wrap_lines=True)


def show_changes(result: migration.ThreeWays) -> None:
    st.subheader(T("changes.heading"))
    st.markdown(T("changes.body"))
    frame = pd.DataFrame([{T("col.topic"): T(f"change.{c.topic}"), "pmap": c.cells[0], "shard_map": c.cells[1],
                           "jit": c.cells[2], T("col.same"): yes_no(c.same)} for c in migration.changes(result)])
    st.table(frame.set_index(T("col.topic")))  # every cell in full: the table is the point
    pm, sm, _ = result.ways
    notes = (T("rank.note", pmap_in=pm.ranks[0], pmap_body=pm.ranks[1], sm_in=sm.ranks[0], sm_body=sm.ranks[1]),
             T("names.note"), T("vma.note"))
    st.markdown("\n\n".join(notes))  # one element: each one the browser draws costs the page's opening

    st.subheader(T("arrays.heading"))
    if "{V:" in sm.body_view and "@" in result.ways[2].body_view:  # the notation the note explains
        st.markdown(T("typeof.note"))
    frame = pd.DataFrame([{"impl": way.impl, "role": T(f"role.{a.role}"), "name": a.name, "typeof": a.typeof,
                           "spec": a.spec} for way in result.ways for a in way.arrays])
    dataframe(T, frame)


def show_results(result: migration.ThreeWays) -> None:
    st.subheader(T("results.heading"))
    names = [f"w[{i}]" for i in range(migration.FEATURES)] + ["b", "loss"]

    def values(params, loss) -> list[float]:
        return [*map(float, params["w"]), float(params["b"]), float(loss)]

    frame = pd.DataFrame({"param": names, **{w.impl: values(w.params, w.loss) for w in result.ways},
                          "numpy": values(result.reference_params, result.reference_loss)})
    dataframe(T, frame)
    left, right = st.columns(2)
    left.metric(T("metric.between"), f"{result.max_diff_between:.1e}")
    right.metric(T("metric.numpy"), f"{result.max_diff_numpy:.1e}")
    worst = max(result.max_diff_between, result.max_diff_numpy)
    if result.equal:
        st.success(T("results.equal", error=worst), icon="✅")
    else:
        st.error(T("results.differ", error=worst), icon="❌")


def show_trap(trap: migration.Trap) -> None:
    """The check_vma trap the note above describes, run: shard_map's gradient without and with pcast."""
    st.markdown(f"**{T('trap.heading')}**\n\n{T('trap.body')}")
    names = [f"w[{i}]" for i in range(migration.FEATURES)] + ["b"]
    dataframe(T, pd.DataFrame({"param": names, "without_pcast": trap.without_pcast, "with_pcast": trap.with_pcast,
                               "numpy_grad": trap.numpy}))
    if trap.without_is_d_times and trap.with_is_right and trap.devices > 1:
        st.success(T("trap.shows", factor=trap.factor, devices=trap.devices), icon="🪤")
    elif trap.without_is_d_times and trap.with_is_right:  # one device: D times the mean is the mean
        st.info(T("trap.one_device", factor=trap.factor), icon="ℹ️")
    else:
        st.warning(T("trap.differs", factor=trap.factor, devices=trap.devices), icon="🔍")


def mesh_choice(devices: int) -> str:
    """The mesh, kept in the link; a mesh of another device count (D just changed) becomes this D's default."""
    return url_choice(T, "mesh", mesh_view.mesh_shapes(devices), mesh_view.default_mesh(devices))


def blocks_chart(placed: mesh_view.Placement) -> alt.Chart:
    frame = pd.DataFrame([{"row0": b.rows[0], "row1": b.rows[1], "col0": b.cols[0], "col1": b.cols[1],
                           "rows": f"{b.rows[0]}:{b.rows[1]}", "cols": f"{b.cols[0]}:{b.cols[1]}",
                           "devices": mesh_view.device_label(b.devices),
                           "row_mid": (b.rows[0] + b.rows[1]) / 2, "col_mid": (b.cols[0] + b.cols[1]) / 2}
                          for b in placed.blocks])
    rows, cols = placed.shape
    x = alt.X("col0:Q", title=T("chart.col"), scale=alt.Scale(domain=[0, cols], nice=False),
              axis=alt.Axis(tickMinStep=1, format="d"))
    y = alt.Y("row0:Q", title=T("chart.row"), scale=alt.Scale(domain=[0, rows], nice=False, reverse=True),
              axis=alt.Axis(tickMinStep=1, format="d"))
    base = alt.Chart(frame, title=T("chart.blocks", rows=rows, cols=cols))
    rects = base.mark_rect(stroke="white", strokeWidth=2).encode(
        x=x, x2="col1:Q", y=y, y2="row1:Q",
        color=alt.Color("devices:N", title=T("chart.devices"), scale=alt.Scale(scheme=charts.DEVICE_SCHEME)),
        tooltip=["rows", "cols", "devices"],
    )
    labels = base.mark_text(fontSize=13, fontWeight="bold").encode(
        x=alt.X("col_mid:Q"), y=alt.Y("row_mid:Q"), text="devices:N")
    return (rects + labels).properties(height=min(420, 60 + 30 * rows))


def mesh_table(placed: mesh_view.Placement) -> pd.DataFrame:
    """Device ids by mesh position: a row per position on 'x', a column per position on 'y'."""
    grid = placed.mesh_grid
    if "y" not in placed.axes:  # 1-D: the one row of ids, read down
        return pd.DataFrame({T("chart.device"): grid[0]}, index=[f"x={i}" for i in range(len(grid[0]))])
    return pd.DataFrame(grid, index=[f"x={i}" for i in range(len(grid))],
                        columns=[f"y={j}" for j in range(len(grid[0]))])


def show_mesh(devices: int) -> None:
    st.subheader(T("mesh.heading"))
    st.markdown(T("mesh.body"))
    cols = st.columns(4)
    with cols[0]:
        mesh = mesh_choice(devices)
    with cols[1]:
        spec = url_choice(T, "spec", list(mesh_view.SPECS), mesh_view.default_spec(mesh, devices))
    default_rows, default_cols = mesh_view.default_shape(mesh, spec, devices)  # sizes that split on this mesh
    with cols[2]:
        rows = url_int(T, "rows", default_rows, 1, mesh_view.MAX_SIDE)
    with cols[3]:
        columns = url_int(T, "cols", default_cols, 1, mesh_view.MAX_SIDE)
    try:
        placed = placement(devices, mesh, spec, rows, columns)
    except LabInputError as error:
        st.error(input_error_text(T, error), icon="⚠️")
        refusal = mesh_view.jax_refusal(devices, mesh, spec, rows, columns)
        if refusal:  # JAX's own words, verbatim
            st.caption(T("jax.says"))
            st.code(refusal, language="text", wrap_lines=True)
        return
    left, right = st.columns([1, 3])
    with left:
        st.markdown(f"**{T('mesh.grid')}**")
        st.table(mesh_table(placed))
    with right:
        st.altair_chart(blocks_chart(placed), width="stretch")
    st.markdown(T("placed.typeof", typeof=placed.typeof, shard_shape=placed.shard_shape, copies=placed.copies))
    if placed.as_predicted and all(b.values_match for b in placed.blocks):
        st.success(T("placed.ok"), icon="🧩")
    else:
        st.warning(T("placed.bad"), icon="🔍")
    with folded(T("shards.expander"), "migration.shards") as shown:
        if shown:
            dataframe(T, pd.DataFrame([{"device": d, "rows": f"{r[0]}:{r[1]}", "cols": f"{c[0]}:{c[1]}"}
                                       for d, r, c in placed.shards]))


def show_hlo(report: migration.HloReport) -> None:
    rows = [{"impl": i.impl, "kind": c.kind, "shapes": ", ".join(c.shapes), "bytes": c.operand_bytes,
             "group": c.group_size, "instruction": c.name} for i in report.impls for c in i.collectives]
    if rows:
        dataframe(T, pd.DataFrame(rows))
    else:
        st.info(T("hlo.none"))
    st.markdown(f"**{T('hlo.counts')}**")
    counts = pd.DataFrame([{"impl": i.impl, **{kind: i.count(kind) for kind in hlo.COLLECTIVE_KINDS}}
                           for i in report.impls])
    dataframe(T, counts)
    per_impl = pd.DataFrame([{"impl": i.impl, "bytes": i.bytes_per_step} for i in report.impls])
    st.altair_chart(charts.bar(per_impl, "impl", "bytes", x_title=T("col.impl"), y_title=T("hlo.bytes_axis"),
                               color="impl", color_title=T("col.impl")), width="stretch")
    first = report.impls[0]
    same_counts = len({tuple(i.count(kind) for kind in hlo.COLLECTIVE_KINDS) for i in report.impls}) == 1
    if report.same_bytes and not same_counts:
        st.success(T("hlo.same_bytes", bytes=first.bytes_per_step), icon="🟰")
    elif report.same_bytes:
        st.success(T("hlo.same", bytes=first.bytes_per_step, all_reduces=first.count("all-reduce"),
                     all_gathers=first.count("all-gather")), icon="🟰")
    else:
        detail = ", ".join(f"{i.impl} {i.bytes_per_step}" for i in report.impls)
        st.warning(T("hlo.differs", detail=detail), icon="🔍")
    if report.devices == 1:
        st.caption(T("hlo.one_device"))
    for impl in report.impls:
        with folded(T("hlo.expander", impl=impl.impl), f"migration.hlo.{impl.impl}") as shown:
            if shown:
                st.caption(T("hlo.text_note"))
                st.code(impl.hlo_text, language="text")


def show_versions(runs: list[migration_steps.StepRun]) -> None:
    """The steps that ran: one table beside 0.10.2's record, the count, then each step's facts and program.
    What JAX gave is shown as plain text (a table cell or a code block), never as markdown."""
    frame = pd.DataFrame([{"step": T(f"step.{run.name}.title"),
                           "verdict": T("verdict.changed" if run.changed else "verdict.same"),
                           "now": migration_steps.summary(run.facts, run.headline),
                           "recorded": migration_steps.summary(run.recorded, run.headline),
                           "release": T(f"step.{run.name}.release")} for run in runs])
    dataframe(T, frame)
    st.info(T("steps.count", changed=sum(run.changed for run in runs), total=len(runs)), icon="🧭")
    for run in runs:
        verdict = T("verdict.changed" if run.changed else "verdict.same")
        with folded(f"{T(f'step.{run.name}.title')} — {verdict}", f"migration.step.{run.name}") as shown:
            if shown:
                show_step(run)


def show_step(run: migration_steps.StepRun) -> None:
    """One step opened: what it is, its facts now and on 0.10.2, the changelog's words, its program."""
    step = migration_steps.get_step(run.name)
    st.markdown(T(f"step.{run.name}.body"))
    now, then = st.columns(2)
    now.caption(T("steps.now", version=runtime_info().jax_version))
    now.code(migration_steps.listing(run.facts), language="text", wrap_lines=True)
    then.caption(T("steps.recorded", version=migration_steps.RECORDED_ON))
    then.code(migration_steps.listing(run.recorded), language="text", wrap_lines=True)
    if run.changed:
        st.caption(T("steps.differs"))
        st.code("\n".join(run.differs), language="text", wrap_lines=True)
    quote = migration_steps.CHANGELOG[run.name]
    if quote is None:
        st.caption(T("steps.no_changelog"))
    else:
        st.caption(T("steps.changelog", section=migration_steps.CHANGELOG_SECTION))
        st.code(quote, language="text", wrap_lines=True)
    st.caption(T("steps.program"))
    st.code(inspect.getsource(step.program), language="python", wrap_lines=True)


st.title(T("title"))
st.markdown(T("intro"))
st.caption(T("jax_version", version=runtime_info().jax_version))

left, right = st.columns(2)
with left:
    devices = url_devices(T, runtime_info().device_count)
with right:
    per_device = url_int(T, "per_device", migration_work.DEFAULT_PER_DEVICE, 1, migration.MAX_PER_DEVICE)

with guard(T):  # the page answers at once: each section's programs compile and run in the background
    ways_key, work, args = migration_work.ways_task(devices, per_device)
    result = background.heavy_result(ways_key, work, *args)
    if result is None:
        working("running", (ways_key,))
    else:
        show_ways(result, per_device)
        show_changes(result)
        show_results(result)
        show_trap(result.trap)
    export_button(T, lambda: export.migration_export(devices, per_device))
    show_code(T, migration.loss_fn, migration.sgd, migration.place, migration.run_way, migration.reference,
                 migration.changes, migration.shard_map_grads, migration.run_trap)

with guard(T):
    show_mesh(devices)
    show_code(T, mesh_view.place, mesh_view.predicted_spans, mesh_view.check_placement)

st.subheader(T("hlo.heading"))
model = url_choice(T, "model", models.MODELS, migration_work.DEFAULT_MODEL, radio=True)
st.markdown(T("hlo.body", model=model, per_device=migration.HLO_PER_DEVICE_BATCH, devices=devices))
with guard(T):
    hlo_key, work, args = migration_work.hlo_task(devices, model)
    report = background.heavy_result(hlo_key, work, *args)
    if report is None:
        working("compiling", (hlo_key,))
    else:
        show_hlo(report)
    show_code(T, migration.inspect_hlo, hlo.collectives)

st.subheader(T("steps.heading"))
st.markdown(T("steps.body", version=runtime_info().jax_version, devices=devices,
              recorded=migration_steps.RECORDED_ON))
version_runs, running = [], []
for step_name in migration_steps.STEP_NAMES:
    with guard(T):  # a step that fails shows its error; the others still show
        step_key, work, args = migration_work.step_task(devices, step_name)
        run = background.heavy_result(step_key, work, *args)
        if run is None:
            running.append(step_key)
        else:
            version_runs.append(run)
with guard(T):
    if running:
        working("steps.running", tuple(running))
    elif version_runs:
        show_versions(version_runs)
    show_code(T, migration_steps.attempt, migration_steps.residuals_kept, migration_steps.run_step,
              migration_steps.StepRun)
