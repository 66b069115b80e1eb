"""Runs one notebook with nbclient in a fresh kernel of this interpreter and writes it back with its
outputs: `python tests/children/run_notebook.py NOTEBOOK`; prints nothing. The kernel is declared in a
temporary JUPYTER_PATH, so no kernel needs to be installed on the machine.

Run by tests/system/test_export_notebooks.py by its path, not with `-m`: as in a learner's Jupyter, nothing
of the repository is on the path (but this file's folder)."""

import json
import os
import pathlib
import sys
import tempfile

import nbclient
import nbformat


def main(path: pathlib.Path) -> None:
    with tempfile.TemporaryDirectory() as home:
        spec = pathlib.Path(home, "kernels", "python3")
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "python3", "language": "python"}))
        os.environ["JUPYTER_PATH"] = home
        book = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(book, kernel_name="python3", timeout=240,
                                resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(book, path)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
