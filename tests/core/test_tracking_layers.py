"""The tracking package names no training program, and its `__init__` stays a short face.

What a program adds to the record of its runs (a pipeline's bubble, a mesh's label, the mesh a sweep
compares) lives beside the program, in `train.programs.RunExtras`; `tracking/` asks for it by impl.
Read off the source with `ast`: every import counts, wherever it is written.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

import pmap_core.tracking as tracking
from pmap_core.tracking import callback
from pmap_core.train import programs
from pmap_core.train.config import TrainConfig

TRACKING = pathlib.Path(tracking.__file__).resolve().parent
PROGRAM_MODULES = {f"pmap_core.train.{name}" for name in ("pipeline", "tensor", "context", "zero", "replicated")}
PROGRAM_CONSTANTS = {"PIPELINE_IMPL", "TENSOR_IMPL", "CONTEXT_IMPL", "SHARDED_STATE_IMPL", "IMPLEMENTATIONS"}
MAX_FACE_LINES = 120


def _program_references(path: pathlib.Path) -> list[str]:
    """Each import of a program module, and each program-name constant, `path` writes."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if any(alias.name == m or alias.name.startswith(m + ".") for m in PROGRAM_MODULES)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if node.module in PROGRAM_MODULES or full in PROGRAM_MODULES:
                    found.append(full)
                if alias.name in PROGRAM_CONSTANTS:
                    found.append(full)
        elif isinstance(node, ast.Name) and node.id in PROGRAM_CONSTANTS:
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in PROGRAM_CONSTANTS:
            found.append(node.attr)
    return found


def test_no_tracking_module_imports_a_program_or_names_one():
    offenders = {path.name: refs for path in sorted(TRACKING.glob("*.py")) if (refs := _program_references(path))}
    assert offenders == {}


def test_the_scan_sees_what_it_looks_for(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from pmap_core.train import pipeline\nimport pmap_core.train.zero\ndef f():\n"
                     "    from pmap_core.train.programs import TENSOR_IMPL\n    return programs.PIPELINE_IMPL\n")
    assert _program_references(probe) == ["pmap_core.train.pipeline", "pmap_core.train.zero",
                                          "pmap_core.train.programs.TENSOR_IMPL", "PIPELINE_IMPL"]


def test_the_package_face_is_short_and_defines_nothing_itself():
    path = TRACKING / "__init__.py"
    assert len(path.read_text(encoding="utf-8").splitlines()) < MAX_FACE_LINES
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)]
    assert defined == []


def test_every_public_name_of_the_face_is_its_modules_own():
    for name in tracking.__all__:
        value = getattr(tracking, name)
        owner = getattr(value, "__module__", None)
        if owner is not None and callable(value):
            assert owner.startswith("pmap_core.tracking."), (name, owner)
            assert getattr(__import__(owner, fromlist=[name]), name) is value


@pytest.fixture
def labelled_program():
    name = "probe_program"
    extras = programs.RunExtras(setup=lambda config: ("X3",), metrics=lambda config: {"probe_figure": 1.5},
                                mesh=lambda config: (f"{config.devices}x1", 1))
    programs.register(name, programs.PROGRAMS["pmap"], extras)
    try:
        yield name
    finally:
        programs.unregister(name)


def test_a_registered_programs_extras_reach_the_run_names(labelled_program):
    config = TrainConfig(model="mlp", devices=4, global_batch=64, impl=labelled_program)
    assert programs.extras(labelled_program).metrics(config) == {"probe_figure": 1.5}
    assert callback.run_name(config) == f"mlp-{labelled_program}-X3-D4-B64"
    assert callback.is_mesh_sweep([config, dataclasses.replace(config, global_batch=128)])
    assert callback.mesh_of(config) == ("4x1", 1)
    assert not callback.is_mesh_sweep([config, dataclasses.replace(config, impl="pmap")])


def test_a_data_by_seq_run_names_its_mesh_and_axis():
    config = TrainConfig(model="transformer", devices=8, global_batch=16, impl="context", mesh_seq=2)
    assert callback.mesh_of(config) == ("4x2", 2) and programs.extras("context").mesh_axis == "seq"
    assert callback.sweep_name(config, [config]) == "sweep-meshes-seq-transformer-D8-B16"


def test_a_program_that_adds_nothing_gets_nothing():
    plain = TrainConfig(model="mlp", devices=4, global_batch=64, impl="pmap")
    assert programs.extras("pmap") == programs.RunExtras()
    assert callback.setup_name(plain) == ""
    with pytest.raises(ValueError, match="no data × model mesh"):
        callback.mesh_of(plain)
