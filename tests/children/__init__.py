"""The programs the system tests run in child processes of their own, one module each: a process has one
device count (PMAP_LAB_DEVICES), one first import of the heavy libraries, one environment.

Each is run from the repository root as `python -m tests.children.<name> [arguments]` (through
harness.processes: run_python, start_python, json_at_device_counts), and says in its docstring what it
prints and which test runs it. A child that answers with JSON prints it as its last JSON line (JAX may
print a line of its own after it; the parent reads harness.processes.last_json_line). A child that
opens pages with AppTest imports tests.children.apptest_setup before anything else.

Nothing here is a test module (pytest collects test_*.py only), and tests/core imports none of them."""
