#!/usr/bin/env bash
# Start the head node of a multi-host Ray cluster for raympp, on this host.
#
#   bash deploy/ray_head.sh ADDRESS [PORT] [extra `ray start` options...]
#
# ADDRESS is this host's address that the other hosts reach it at (Ray and the Motion
# channels of the segments placed here bind to it); PORT is the Ray GCS port (default
# 6379). Usage statistics are off; no dashboard. CPUs offered: $RAYMPP_NUM_CPUS, default
# all of this host's. Stop it with `.venv/bin/ray stop` (which stops every Ray process of
# this host). Then run `raympp serve --ray-address ADDRESS:PORT` on this host (deploy/README.md).
set -euo pipefail
if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  echo "usage: $0 ADDRESS [PORT] [extra ray start options...]" >&2
  exit 2
fi
address=$1; shift
port=6379
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then
  port=$1; shift
fi
cd "$(dirname "$0")/.."
export RAY_USAGE_STATS_ENABLED=0
# Segments spill before the node runs short (segment/memory.py); Ray's memory monitor,
# which kills workers, acts only above 97% used (deploy/ray_local.py says why).
export RAY_memory_usage_threshold=${RAY_memory_usage_threshold:-0.97}
# Token authentication between the hosts (deploy/README.md): the same token on every
# host, in ~/.ray/auth_token or the file $RAY_AUTH_TOKEN_PATH names.
export RAY_AUTH_MODE=${RAY_AUTH_MODE:-token}
exec .venv/bin/ray start --head \
  --node-ip-address="$address" \
  --port="$port" \
  --disable-usage-stats \
  --include-dashboard=false \
  --num-cpus="${RAYMPP_NUM_CPUS:-$(nproc)}" \
  "$@"
