#!/usr/bin/env bash
# Install everything the tests need (on a fresh machine too) and run every test.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e ".[test]"

# Browser (Debian chromium), cloud emulators and the frontend toolchain, each by its own script.
for setup in scripts/setup_e2e.sh scripts/setup_cloud.sh; do
  if [ -f "$setup" ]; then bash "$setup"; fi
done

ruff check .
ruff format --check .
if [ -f scripts/check_frontend.sh ]; then bash scripts/check_frontend.sh; fi

python -m pytest -q -rs "$@"
