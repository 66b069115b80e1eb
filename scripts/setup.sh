#!/usr/bin/env bash
# Create .venv and install pinned requirements. Usage: scripts/setup.sh [requirements file]
# Every transitive package is held to the version in constraints.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=${1:-requirements.txt}
python3 -m venv .venv
# uv installs the same pinned set several times faster than pip (parallel downloads and unpacking);
# where uv cannot be had or cannot reach the index, pip does the same install. --compile-bytecode, as pip
# does by default: without .pyc files (and with PYTHONDONTWRITEBYTECODE set) every new process compiles
# jax, mlflow and streamlit from source again.
if .venv/bin/python -m pip install --quiet uv==0.13.9 \
  && .venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python -r "$requirements" \
     -c constraints.txt; then
  exit 0
fi
echo "setup.sh: uv failed; installing with pip" >&2
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r "$requirements" -c constraints.txt
