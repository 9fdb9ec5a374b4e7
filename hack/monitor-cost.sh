#!/usr/bin/env bash
# hack/monitor-cost.sh: what MONITOR costs a Redis server (hammer --http-redis-trace attaches one
# MONITOR client to each node): redis-benchmark's throughput on one throw-away redis-server with
# no MONITOR client attached and with one reading everything, in interleaved pairs, and the ratio.
# The server runs in a session of its own (a service's own scheduling group, as bench-hammer.sh
# runs it), the MONITOR client is redis-cli writing to /dev/null.
#
#   make monitor-cost       # or: hack/monitor-cost.sh [pairs] [requests]
#
# Machines are shared and noisy: read the ratio (the median of the pairs'), not the numbers.
set -euo pipefail
pairs=${1:-5}
requests=${2:-200000}
tests=${TESTS:-get,set,incr}
clients=${CLIENTS:-50}

for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize no >"$dir/server.log" 2>&1 &
server=$!
monitor=
trap 'kill $monitor $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

# total requests/s of a redis-benchmark run over $tests
bench() {
  redis-benchmark -p "$port" -t "$tests" -n "$requests" -c "$clients" -q 2>/dev/null |
    awk -F'[:,]' '/requests per second/ { gsub(/[^0-9.]/, "", $2); sum += $2 } END { printf "%.0f\n", sum }'
}

echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$port; redis-benchmark -t $tests -n $requests -c $clients, $pairs pairs; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %14s %14s %8s\n' pair without with ratio
ratios=()
for i in $(seq "$pairs"); do
  without=$(bench)
  redis-cli -p "$port" monitor >/dev/null &
  monitor=$!
  for _ in $(seq 50); do [ "$(redis-cli -p "$port" info clients | grep -c 'connected_clients:2')" = 1 ] && break; sleep 0.05; done
  with=$(bench)
  kill "$monitor"; wait "$monitor" 2>/dev/null || true; monitor=
  ratio=$(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.2f", a / b }')
  ratios+=("$ratio")
  printf '%-6s %14s %14s %8s\n' "$i" "$without" "$with" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
echo "with one MONITOR client the server kept $median of its throughput (median of $pairs pairs)"
