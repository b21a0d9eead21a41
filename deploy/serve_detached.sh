#!/usr/bin/env bash
# Run `raympp serve` in the background on a Ray cluster's head, tied to that cluster.
#
#   bash deploy/serve_detached.sh start NODES --ray-address HOST:PORT [raympp serve options...]
#   bash deploy/serve_detached.sh stop
#
# For `ray up` (deploy/cluster.yaml), whose start commands must return, and whose
# `ray down` only runs `ray stop` on the head. `start` detaches (setsid, nohup) a
# process that
#   1. waits until NODES Ray nodes are alive (a number, or a `ray up` config: its head and
#      worker_ips; python -m deploy.wait_nodes): the first start of a data directory places
#      the segments over the nodes alive then, for good (deploy/README.md);
#   2. runs `raympp serve` with the options given;
#   3. watches Ray's GCS port (HOST:PORT of --ray-address) every WATCH_SECONDS: once
#      `ray stop` (or `ray down`) has ended it for 3 checks in a row, it stops raympp
#      with SIGTERM, as it does on `stop`.
# Its output goes to $RAYMPP_RUN_DIR/serve.log, its PID to $RAYMPP_RUN_DIR/serve.pid
# (default ~/.raympp). `stop` sends it SIGTERM, which it passes on to raympp (a clean
# shutdown), and kills its process group with SIGKILL if raympp has not ended after
# GRACE_SECONDS. Usage statistics off; RAY_AUTH_MODE=token unless set (deploy/README.md).
# RAYMPP_WAIT_SECONDS, RAYMPP_WATCH_SECONDS, RAYMPP_GRACE_SECONDS change the times.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
run_dir=${RAYMPP_RUN_DIR:-$HOME/.raympp}
pid_file=$run_dir/serve.pid
log_file=$run_dir/serve.log
WAIT_SECONDS=${RAYMPP_WAIT_SECONDS:-600}   # for the nodes to join
WATCH_SECONDS=${RAYMPP_WATCH_SECONDS:-5}
# The coordinator stops its segments first; with Ray gone already that can wait on Ray.
GRACE_SECONDS=${RAYMPP_GRACE_SECONDS:-30}
export RAY_USAGE_STATS_ENABLED=0
export RAY_AUTH_MODE=${RAY_AUTH_MODE:-token}

usage() {
  echo "usage: $0 start NODES --ray-address HOST:PORT [raympp serve options...]" >&2
  echo "       $0 stop" >&2
  exit 2
}

# The PID in the pid file if that process is still this script (not a reused PID).
running_pid() {
  local pid
  pid=$(cat "$pid_file" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "serve_detached.sh _run " || return 1
  echo "$pid"
}

ray_address_of() {
  local address=""
  while [ $# -gt 0 ]; do
    case $1 in
      --ray-address) address=${2:-}; if [ $# -gt 1 ]; then shift; fi ;;
      --ray-address=*) address=${1#*=} ;;
    esac
    shift
  done
  echo "$address"
}

do_start() {
  [ $# -ge 1 ] || usage
  local address
  address=$(ray_address_of "${@:2}")
  if [[ ! "$address" =~ ^[^:]+:[0-9]+$ ]]; then
    echo "$0: give raympp serve --ray-address HOST:PORT (the Ray cluster it is tied to)" >&2
    exit 2
  fi
  if pid=$(running_pid); then
    echo "$0: raympp is already running here (PID $pid); stop it first" >&2
    exit 1
  fi
  mkdir -p "$run_dir"
  # Its own session: no terminal or SSH hangup reaches it, and `stop` can end the
  # whole group. setsid does not fork here (a background job is no group leader), so $!
  # is the script's PID.
  setsid nohup bash "$repo/deploy/serve_detached.sh" _run "$address" "$@" \
    >>"$log_file" 2>&1 </dev/null &
  echo $! >"$pid_file"
  echo "raympp starting in the background (PID $!), log: $log_file"
}

do_stop() {
  local pid
  if ! pid=$(running_pid); then
    rm -f "$pid_file"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < GRACE_SECONDS + WATCH_SECONDS; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "raympp (PID $pid) did not stop: SIGKILL to its process group" >&2
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file"
}

# --- the detached process -------------------------------------------------------------
child=""
phase=wait
stopping=0

# While waiting for the nodes, SIGTERM ends the wait at once; once raympp runs, the watch
# loop below stops it (one SIGTERM: a second would cut its shutdown short).
on_term() {
  stopping=1
  if [ "$phase" = wait ] && [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; fi
}

gcs_up() {  # a TCP connection to the GCS port is accepted
  (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null
}

# Runs "$@" in the background and waits for it, so that SIGTERM is handled at once (bash
# runs traps only between commands, and `wait` returns when one arrives).
run_child() {
  local status=0
  "$@" &
  child=$!
  while true; do
    status=0
    wait "$child" || status=$?
    kill -0 "$child" 2>/dev/null || return "$status"
  done
}

stop_child() {
  kill -TERM "$child" 2>/dev/null || return 0
  for ((i = 0; i < GRACE_SECONDS; i++)); do
    kill -0 "$child" 2>/dev/null || return 0
    sleep 1
  done
  echo "$(date -Is) raympp did not stop within ${GRACE_SECONDS}s: SIGKILL to the process group"
  trap - TERM INT
  kill -KILL -- "-$$"
}

do_run() {
  local address=$1 nodes=$2
  shift 2
  trap on_term TERM INT
  echo "$(date -Is) waiting for the Ray nodes"
  local count=(--nodes "$nodes")
  [[ "$nodes" =~ ^[0-9]+$ ]] || count=(--cluster-config "$nodes")
  run_child .venv/bin/python -m deploy.wait_nodes --ray-address "$address" "${count[@]}" \
    --timeout "$WAIT_SECONDS" || { [ "$stopping" = 1 ] && exit 0; echo "$(date -Is) not started"; exit 1; }
  [ "$stopping" = 0 ] || exit 0
  echo "$(date -Is) starting: raympp serve $*"
  phase=serve
  .venv/bin/raympp serve "$@" &
  child=$!
  local misses=0
  while kill -0 "$child" 2>/dev/null; do
    sleep "$WATCH_SECONDS" & wait $! || true
    if [ "$stopping" = 1 ]; then
      stop_child
      break
    fi
    if gcs_up "$address"; then misses=0; else misses=$((misses + 1)); fi
    if [ "$misses" -ge 3 ]; then
      echo "$(date -Is) Ray at $address is gone (ray stop / ray down): stopping raympp"
      stop_child
      break
    fi
  done
  local status=0
  wait "$child" || status=$?
  echo "$(date -Is) raympp ended (status $status)"
  exit "$status"
}

case ${1:-} in
  start) shift; do_start "$@" ;;
  stop) do_stop ;;
  _run) shift; [ $# -ge 2 ] || usage; do_run "$@" ;;
  *) usage ;;
esac
