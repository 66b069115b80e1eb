#!/usr/bin/env bash
# Create .venv and install pinned requirements. Usage: scripts/setup.sh [requirements file]
#   scripts/setup.sh --which-python   prints the interpreter it would use, and installs nothing.
# Every transitive package is held to the version in constraints.txt.
# JAX 0.11 and newer need Python 3.12 or newer; the interpreter is found by find_python below, or named
# by PMAP_LAB_PYTHON.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=${1:-requirements.txt}

# True when "$1" runs and is Python 3.12 or newer (a pyenv shim for a version that is not selected fails here).
new_enough() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1
}

# The first interpreter that is new enough: PMAP_LAB_PYTHON; python3.12, python3.13 or python3 on PATH;
# pyenv's installed versions (3.12 first: the pins are tested on it); a Python that uv manages.
find_python() {
  local candidate root
  for candidate in "${PMAP_LAB_PYTHON:-}" python3.12 python3.13 python3; do
    if [ -n "$candidate" ] && new_enough "$candidate"; then command -v "$candidate"; return; fi
  done
  root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  for candidate in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -V); do
    if new_enough "$candidate/bin/python3"; then echo "$candidate/bin/python3"; return; fi
  done
  if command -v uv >/dev/null 2>&1; then
    candidate=$(uv python find '>=3.12' 2>/dev/null || true)
    if [ -n "$candidate" ] && new_enough "$candidate"; then echo "$candidate"; return; fi
  fi
  return 1
}

if ! python=$(find_python); then
  echo "setup.sh: needs Python 3.12 or newer (JAX 0.12 does), found none; install python3.12 (apt-get install python3.12, pyenv install 3.12 or uv python install 3.12) or name one in PMAP_LAB_PYTHON" >&2
  exit 1
fi
if [ "$requirements" = "--which-python" ]; then echo "$python"; exit 0; fi
# A .venv left by an older Python is made anew, not mixed with this one.
if [ -x .venv/bin/python ] && ! new_enough .venv/bin/python; then
  echo "setup.sh: .venv has $(.venv/bin/python --version 2>&1); making it anew with $("$python" --version 2>&1)" >&2
  rm -rf .venv
fi
"$python" -m venv .venv
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
