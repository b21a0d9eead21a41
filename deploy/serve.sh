#!/usr/bin/env bash
# Install into ./.venv and serve a local raympp cluster (2 segments) with a demo table.
# Extra arguments go to `raympp serve` (e.g. --port 5434 --segments 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/venv.sh
export RAY_USAGE_STATS_ENABLED=0
exec .venv/bin/raympp serve --demo "$@"
