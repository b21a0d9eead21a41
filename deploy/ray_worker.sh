#!/usr/bin/env bash
# Join this host to a multi-host Ray cluster for raympp as a worker node.
#
#   bash deploy/ray_worker.sh HEAD_ADDRESS:PORT NODE_ADDRESS [extra `ray start` options...]
#
# HEAD_ADDRESS:PORT is what deploy/ray_head.sh started; NODE_ADDRESS is this host's address
# that the other hosts reach it at (Ray and the Motion channels of the segments placed here
# bind to it). Usage statistics are off. CPUs offered: $RAYMPP_NUM_CPUS, default all of
# this host's. Stop it with `.venv/bin/ray stop` (which stops every Ray process of this host).
set -euo pipefail
if [ $# -lt 2 ] || [[ "$1" == -* ]] || [[ "$2" == -* ]]; then
  echo "usage: $0 HEAD_ADDRESS:PORT NODE_ADDRESS [extra ray start options...]" >&2
  exit 2
fi
head=$1; node=$2; shift 2
cd "$(dirname "$0")/.."
export RAY_USAGE_STATS_ENABLED=0
# Segments spill before the node runs short (segment/memory.py); Ray's memory monitor,
# which kills workers, acts only above 97% used (deploy/ray_local.py says why).
export RAY_memory_usage_threshold=${RAY_memory_usage_threshold:-0.97}
# Token authentication between the hosts (deploy/README.md): the same token on every
# host, in ~/.ray/auth_token or the file $RAY_AUTH_TOKEN_PATH names.
export RAY_AUTH_MODE=${RAY_AUTH_MODE:-token}
exec .venv/bin/ray start \
  --address="$head" \
  --node-ip-address="$node" \
  --disable-usage-stats \
  --num-cpus="${RAYMPP_NUM_CPUS:-$(nproc)}" \
  "$@"
