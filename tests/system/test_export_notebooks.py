"""Exported notebooks: the script's own code in cells, each after its text in the page's language; run by
nbclient in a fresh kernel (jax and numpy only, simulated CPU devices) they print what the commands they give
for comparison print, run as written.

Executing a notebook costs a kernel start and a JAX import: one notebook per exportable lab, all of them
run at once in child processes while this process computes the references."""

from __future__ import annotations

import ast
import json
import pathlib
import re
import shlex
import shutil
import string
import subprocess

import nbformat
import numpy as np
import pytest

from harness.processes import ROOT, run_python, start_python
from labs.texts import GLOSSARY
from pmap_core import export
from pmap_core.cli.commands import main
from pmap_core.concepts import collectives, migration
from pmap_core.export.notes import LANGUAGES, NOTES
from pmap_core.export.templating import cells
from pmap_core.versions import VERIFIED_JAX, minor
from tests.system.test_export import NUMBER, _device_results, _training_output

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
CODE_SPAN = re.compile(r"`([^`]+)`")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the colours of a kernel's error

# Settings that, together, reach every cell text: each model, implementation and strategy.
EVERY_CELL = [
    ("training", {"model": "linear", "impl": "pmap"}), ("training", {"model": "mlp", "impl": "shard_map"}),
    ("training", {"impl": "jit"}), ("collectives", {"op": "ppermute"}), ("migration", {}),
    *[("sharded_dp", {"strategy": s}) for s in ("dp", "zero1", "zero2", "zero3")], ("mesh_2d", {}),
    ("multiprocess", {"impl": "pmap"}),
]

# One notebook per lab, at device counts other than 8 (odd ones among them). The references are the commands
# the notebooks themselves give for comparison, run as written.
EXECUTED = {
    "training": ["model=mlp", "devices=3", "impl=shard_map", "batch=48", "steps=40", "hidden=16", "lr=0.1", "seed=3"],
    "sharded_dp": ["strategy=zero3", "optimizer=adam", "precision=mixed", "devices=5", "accum=2", "batch=60",
                   "steps=30", "hidden=16", "features=8"],
    "mesh_2d": ["mesh=2x2", "hidden=12", "batch=64", "steps=30"],
    "collectives": ["op=psum_scatter_tiled", "devices=3", "size=6"],
    "migration": ["devices=5", "per_device=2"],
    "multiprocess": ["processes=3", "per_process=1", "impl=shard_map", "batch=12", "size=48", "steps=6"],
}
CLI = "python -m pmap_core "

# Runs one notebook with nbclient in a fresh kernel, by its path: no path to this repository.
RUN_NOTEBOOK = ROOT / "tests" / "children" / "run_notebook.py"


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_text_has_both_languages_with_the_same_placeholders_code_and_terms():
    for key, entry in NOTES.items():
        assert set(entry) == set(LANGUAGES) and all(v.strip() for v in entry.values()), key
        en, zh = entry["en"], entry["zh"]
        assert _placeholders(en) == _placeholders(zh), key
        assert sorted(CODE_SPAN.findall(en)) == sorted(CODE_SPAN.findall(zh)), key
        assert not CJK.search(en), key
        for term in GLOSSARY:
            pattern = re.compile(term["en_pattern"], 0 if re.search(r"[A-Z]", term["en_pattern"]) else re.IGNORECASE)
            named = bool(pattern.search(CODE_SPAN.sub(" ", en)))
            if named or term.get("banned_where") != "term":
                assert not [b for b in term.get("banned_zh", ()) if b in CODE_SPAN.sub(" ", zh)], (key, term["en"])
            if named:
                assert any(form in zh for form in term["zh_forms"]), (key, term["en"], zh)


@pytest.mark.parametrize("lab, settings", EVERY_CELL, ids=[f"{lab}-{'-'.join(s.values())}" for lab, s in EVERY_CELL])
def test_a_notebook_is_its_script_in_cells_after_their_texts(lab, settings):
    exported = export.export_for(lab, {k: str(v) for k, v in settings.items()})
    script_cells = cells(exported.script)
    assert "pmap_core" not in exported.script and "streamlit" not in exported.script
    for lang in LANGUAGES:
        book = nbformat.reads(export.notebook_for(lab, settings, lang), as_version=4)
        nbformat.validate(book)
        code = [c.source for c in book.cells if c.cell_type == "code"]
        assert code == [text for _, text in script_cells]  # one code text: the script's
        assert book.cells[0].cell_type == "markdown" and book.cells[0].source.startswith("# ")
        for cell, following in zip(book.cells[1:], book.cells[2:], strict=False):
            if following.cell_type == "code":
                assert cell.cell_type == "markdown" and cell.source.strip(), (lab, lang)
        assert bool(CJK.search(book.cells[1].source)) == (lang == "zh")
    # The first cell checks Python and JAX before anything imports JAX; the next fixes the devices and says which.
    assert script_cells[0][0] == "requirements" and "import jax" not in script_cells[0][1]
    second = script_cells[1][1]
    assert script_cells[1][0] == "setup" and "simulated CPU device(s)" in second
    assert lab == "multiprocess" or ("jax_num_cpu_devices" in second and "print(devices)" in second)


def older_jax(folder: pathlib.Path) -> pathlib.Path:
    """A folder that, first on the path, makes the installed JAX read as 0.10.2 (what `pip show` would say)."""
    info = folder / "jax-0.10.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jax\nVersion: 0.10.2\n")
    return folder


def test_an_export_says_in_one_line_what_to_install_and_stops_before_jax(tmp_path):
    """Exported scripts run where they cannot: on Python 3.11 (JAX 0.12 needs 3.12: no pip install is offered),
    with an older JAX, and with none. Each stops in its first cell with one line, never an AttributeError."""
    script = tmp_path / "collectives.py"
    script.write_text(export.script_for("collectives", {"devices": "3"}))
    cases = {"older": ([script], (older_jax(tmp_path / "old"),)), "none": (["-S", script], ())}
    done = {name: run_python(argv, cwd=tmp_path, path=path) for name, (argv, path) in cases.items()}
    python311 = shutil.which("python3.11")
    if python311:  # Debian's: real, and without JAX
        done["python 3.11"] = subprocess.run([python311, script], capture_output=True, text=True, timeout=60)
    said = {}
    for name, run in done.items():
        assert run.returncode == 1 and run.stdout == "", (name, run.stdout, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1 and "Error" not in run.stderr, (name, run.stderr)
        said[name] = run.stderr.strip()
    install = f"pip install 'jax=={VERIFIED_JAX}'"
    assert said["older"] == f"JAX 0.10.2 is older than JAX {minor(VERIFIED_JAX)}, which this was written for: {install}"
    assert said["none"] == f"JAX is not installed: {install}"
    if python311:
        assert said["python 3.11"].startswith(f"JAX {minor(VERIFIED_JAX)} needs Python 3.12 or newer, and this is "
                                              "Python 3.11.") and "pip install" not in said["python 3.11"]


def test_a_notebook_on_an_older_jax_stops_in_its_first_cell_with_the_pip_line(tmp_path):
    """In a real kernel: the first cell ends the run with `%pip install …` (the kernel's own pip) and a restart."""
    path = tmp_path / "collectives.ipynb"
    path.write_text(export.notebook_for("collectives", {"devices": "3"}))
    done = run_python([RUN_NOTEBOOK, path], cwd=tmp_path, path=(older_jax(tmp_path / "old"),), timeout=240)
    assert done.returncode != 0
    assert (f"SystemExit: JAX 0.10.2 is older than JAX {minor(VERIFIED_JAX)}, which this was written for: "
            f"%pip install 'jax=={VERIFIED_JAX}', then restart the kernel") in ANSI.sub("", done.stderr), done.stderr
    assert "AttributeError" not in done.stderr and "simulated CPU device" not in done.stderr


def test_the_cli_writes_a_notebook_in_the_language_asked(capsys):
    assert main(["export", "collectives", "op=psum", "devices=2", "--format", "ipynb", "--lang", "zh"]) == 0
    book = nbformat.reads(capsys.readouterr().out, as_version=4)
    assert book.cells[0].source.startswith("# 集合通信实验：在 2 个设备上运行 psum")
    assert book.metadata.kernelspec.name == "python3"


def commands_in(book) -> list[str]:
    """The commands a notebook's texts give for comparison (`python -m pmap_core …` code spans)."""
    return [span for cell in book.cells if cell.cell_type == "markdown" for span in CODE_SPAN.findall(cell.source)
            if span.startswith(CLI)]


def printed_values(text: str) -> dict[str, str]:
    """The `key: value` lines a CLI command prints (its result without --json)."""
    return dict(re.findall(r"^(\w+): (.*)$", text, re.M))


def _printed(book) -> str:
    """Everything the notebook's cells printed on stdout, in order."""
    return "".join(out.get("text", "") for cell in book.cells if cell.cell_type == "code" for out in cell.outputs
                   if out.get("name") == "stdout")


def test_executed_notebooks_print_what_their_own_commands_print(tmp_path, capsys):
    """Each notebook runs in a fresh kernel, and each comparison command it gives runs as written (the CLI's
    words after `python -m pmap_core`; a launch in a child, as it starts processes): the final loss, and the
    multi-process group's rows, losses and parameters, are the notebook's."""
    paths, commands = {}, {}
    for lab, settings in EXECUTED.items():
        assert main(["export", lab, *settings, "--format", "ipynb"]) == 0
        paths[lab] = tmp_path / f"{lab}.ipynb"
        paths[lab].write_text(capsys.readouterr().out)
        commands[lab] = commands_in(nbformat.read(paths[lab], as_version=4))
        assert main(["export", lab, *settings, "--format", "ipynb", "--lang", "zh"]) == 0
        assert commands_in(nbformat.reads(capsys.readouterr().out, as_version=4)) == commands[lab]
    assert {lab for lab, found in commands.items() if found} == {"training", "sharded_dp", "mesh_2d", "multiprocess"}
    # As in a learner's Jupyter: no path to this repository, no device setting of ours.
    processes = {lab: start_python([RUN_NOTEBOOK, path], cwd=tmp_path, path=(), drop=("PMAP_LAB_DEVICES", "NPROC"))
                 for lab, path in paths.items()}
    (launch,) = set(commands.pop("multiprocess"))
    launched = start_python(shlex.split(launch.removeprefix("python ")), cwd=tmp_path)
    references = {}
    for lab, found in commands.items():
        for command in set(found):
            assert main(shlex.split(command.removeprefix(CLI))) == 0, command
            references[lab] = printed_values(capsys.readouterr().out)
    outputs = {}
    for lab, process in processes.items():
        _, err = process.communicate(timeout=280)
        assert process.returncode == 0, (lab, err[-3000:])
        outputs[lab] = _printed(nbformat.read(paths[lab], as_version=4))

    for lab, reference in references.items():
        devices = reference["devices"]
        assert outputs[lab].startswith(f"running on {devices} simulated CPU device(s)\n"), outputs[lab][:200]
        loss, params = _training_output(outputs[lab])
        np.testing.assert_allclose(loss, float(reference["final_loss"]), rtol=1e-5, err_msg=lab)
        assert set(params) == {"w1", "b1", "w2", "b2"}, lab

    run = collectives.run_collective("psum_scatter_tiled", 3, 6)
    np.testing.assert_allclose(_device_results(outputs["collectives"]), np.ravel(run.after), rtol=1e-6)
    ways = migration.run_three_ways(5, 2)
    lines = [line for line in outputs["migration"].splitlines() if line.split(":")[0] in ("pmap", "shard_map", "jit")]
    for way, line in zip(ways.ways, lines, strict=True):
        expected = [way.loss, *np.ravel(way.params["w"]), float(way.params["b"])]
        np.testing.assert_allclose([float(v) for v in NUMBER.findall(line)], expected, rtol=1e-5, atol=1e-6)

    out, err = launched.communicate(timeout=280)
    assert launched.returncode == 0, err[-3000:]
    group = {key: ast.literal_eval(value) for key, value in printed_values(out).items()
             if key in ("rows", "losses", "params")}
    printed = dict(re.findall(r"^\[process 0\] (\w+): (.*)$", outputs["multiprocess"], re.M))
    assert printed["num_processes"] == "3" and printed["replicas_identical"] == "True"
    assert json.loads(printed["rows"]) == group["rows"]  # process 0 read the same samples, step by step
    np.testing.assert_allclose(json.loads(printed["losses"]), group["losses"], rtol=1e-5)
    params = {k: float(v) for k, v in re.findall(r"'(\w+)': ([-+\d.e]+)", printed["params"])}
    np.testing.assert_allclose([params[k] for k in sorted(group["params"])],
                               [group["params"][k] for k in sorted(group["params"])], rtol=1e-5)
