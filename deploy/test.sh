#!/usr/bin/env bash
# Install into ./.venv and run the default test suite (heavy suites: add -m heavy).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/venv.sh
export RAY_USAGE_STATS_ENABLED=0
# Two workers (pytest-xdist), each with its own Ray and servers: one process leaves about a
# third of the two cores idle while it waits on segments, restarts and clients.
exec .venv/bin/python -m pytest -q -n "${RAYMPP_TEST_WORKERS:-2}" "$@"
