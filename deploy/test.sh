#!/usr/bin/env bash
# Install into ./.venv and run the default test suite (heavy suites: add -m heavy).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/venv.sh
export RAY_USAGE_STATS_ENABLED=0
exec .venv/bin/python -m pytest -q "$@"
