"""Commands that measure and print figures; run each from the repository root as
`.venv/bin/python -m benchmarks.NAME --help`."""
