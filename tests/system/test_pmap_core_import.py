"""Importing pmap_core in a fresh Python imports no Streamlit."""

from harness.processes import run_python


def test_importing_pmap_core_does_not_import_streamlit():
    code = "import sys, pmap_core; print('streamlit' in sys.modules)"
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
