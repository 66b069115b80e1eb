#!/usr/bin/env bash
# Create .venv and install pinned requirements. Usage: scripts/setup.sh [requirements file]
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=${1:-requirements.txt}
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r "$requirements"
