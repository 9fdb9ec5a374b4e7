#!/usr/bin/env bash
# Side-by-side throughput of `limitctl hammer` and redis-benchmark on one throw-away redis-server,
# plus the hammer's peak RSS for a short and a long run (HDR histograms: memory must stay flat),
# the scale section (the server's throughput and on-CPU share under the hammer's pipelined and
# default modes against redis-benchmark with and without -P 16, in interleaved pairs) and the
# window checkers' memory over many keys and a long window.
#
#   make bench-hammer            # or: hack/bench-hammer.sh [seconds] [connections]
#   ONLY=scale make bench-hammer # only the scale section and keys x window
#   ONLY=pairs make bench-hammer # only the scale section's pairs
#   PAIRS=15 ONLY=scale make bench-hammer # more pairs (default 9)
#   ONLY=judge make bench-hammer # only the cost of judging refusals (false rejects)
#   ONLY=http make bench-hammer  # only hammer --http against vegeta attack -rate 0 (HTTP_PAIRS=5)
#   ONLY=trace make bench-hammer # only the recording's cost (first_overshoot on and off)
#   ONLY=direct make bench-hammer # only direct connections against go-redis (--no-direct)
#   ONLY=cluster make bench-hammer # only the cluster's fast-path candidates (CLUSTER_PAIRS=3,
#                                  # CANDIDATES='hammer rueidis-multi' for some of them,
#                                  # CLUSTER_WORKERS=256 for fewer calls in flight, PIN=1 for
#                                  # the servers on cores of their own, MASTERS=6 or 12 for a
#                                  # larger cluster: default 3, CLUSTER_KEYS=1 for every call
#                                  # on one master: default 256)
#
# Both clients send EVALSHA of concurrency_acquire with the same number of connections to the
# same server, one after the other. Machines are shared and noisy: read the ratio, not the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
conns=${2:-64}
long=${LONG:-60}

for tool in redis-server redis-benchmark /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install redis-server redis-tools time)" >&2; exit 1; }
done
dir=$(mktemp -d)
bin=$dir/limitctl # of this checkout: another one's bench may be running beside it
go build -o "$bin" .
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# The server runs in its own session, as a service does: started in this script's session it would
# share one scheduling group (autogroup) with the client under test, and the client that needs
# more CPU (Go's, not C's) would be the one squeezed.
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --daemonize yes \
  --pidfile "$dir/redis.pid" --logfile "$dir/log"
# Every server this script starts is stopped by its pid, remembered as it starts: a pidfile is gone
# once its server has shut down, and under set -e a kill that fails in the trap ended the trap
# before the next server was stopped (a cluster run left the single node running).
pids=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  # Before rm (a server writes as it stops), at most 5s each: a zombie that nobody reaps still
  # answers kill -0, and a server that hangs is killed outright.
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$p/stat" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
until [ -s "$dir/redis.pid" ]; do sleep 0.1; done
pids+=("$(cat "$dir/redis.pid")")
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done

field() { python3 -c "import json,sys; print(json.load(sys.stdin)['strategies'][0]['$1'])"; }

# HTTP targets (issue 48): hammer --http with every check on (a fixed window whose limit is never
# reached, so every answer is an admit judged over its [sent, received]; {key} in the URL, so every
# refusal would be judged; every request recorded for its trace) against vegeta attack -rate 0 (the
# load tool a user would reach for; make load-tools installs it), the same workers and connections
# (64 each unless given), one after the other against one endpoint that answers at once: a 200
# from nginx (one worker process, access log off). HTTP_PAIRS interleaved pairs (default 5; the order
# flips every pair), medians: requests a second over the run, and each client's CPU (user+system,
# /usr/bin/time) per request. vegeta writes its results to a file, as a user's run does, and is
# reported after. ONLY=http runs only this.
if [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = http ]; then
  vegeta=$(for d in "$(go env GOBIN)" "$(go env GOPATH | cut -d: -f1)/bin"; do [ -x "$d/vegeta" ] && echo "$d/vegeta" && break; done)
  vegeta=${vegeta:-$(command -v vegeta || true)}
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  [ -x "$vegeta" ] && [ -x "$nginx" ] || { echo "missing vegeta (make load-tools) or nginx (apt-get install nginx)" >&2; exit 1; }
  hport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$dir/nginx/logs"
  cat >"$dir/nginx/nginx.conf" <<NGINX
worker_processes 1;
user root;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/logs/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_body_temp_path $dir/nginx; proxy_temp_path $dir/nginx; fastcgi_temp_path $dir/nginx; uwsgi_temp_path $dir/nginx; scgi_temp_path $dir/nginx;
  server { listen 127.0.0.1:$hport; location / { return 200 "ok\\n"; } }
}
NGINX
  "$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf"
  until [ -s "$dir/nginx/nginx.pid" ]; do sleep 0.1; done
  pids+=("$(cat "$dir/nginx/nginx.pid")")
  until curl -fs "http://127.0.0.1:$hport/" >/dev/null 2>&1; do sleep 0.1; done
  url="http://127.0.0.1:$hport/limit/{key}"
  echo "GET http://127.0.0.1:$hport/limit/bench" >"$dir/targets"
  http_hammer() { # -> "requests/s cpu_us_per_request"
    /usr/bin/time -f '%U %S' -o "$dir/hcpu" "$bin" hammer --limiter fixed-window --limit 1000000000 --profile steady \
      --workers "$conns" --duration "${secs}s" --http "$url" --tui off -o json 2>/dev/null >"$dir/h.json" || true
    python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['strategies'][0]
u, sy = map(float, open(sys.argv[2]).read().split()[-2:])  # after 'Command exited with non-zero status' if any
assert s['errors'] == 0 and s['admitted'] == s['attempts'], s
print(s['throughput_per_s'], (u + sy) * 1e6 / s['attempts'])" "$dir/h.json" "$dir/hcpu"
  }
  http_vegeta() { # -> "requests/s cpu_us_per_request"
    /usr/bin/time -f '%U %S' -o "$dir/vcpu" "$vegeta" attack -rate 0 -workers "$conns" -max-workers "$conns" \
      -connections "$conns" -max-connections "$conns" -http2=false -duration "${secs}s" -targets "$dir/targets" -output "$dir/v.bin"
    "$vegeta" report -type json "$dir/v.bin" >"$dir/v.json"
    python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
u, sy = map(float, open(sys.argv[2]).read().split()[-2:])  # after 'Command exited with non-zero status' if any
assert r['success'] == 1, r['status_codes']
print(r['rate'], (u + sy) * 1e6 / r['requests'])" "$dir/v.json" "$dir/vcpu"
  }
  hrows=(); vrows=()
  for pair in $(seq 1 "${HTTP_PAIRS:-5}"); do
    if [ $((pair % 2)) = 1 ]; then hrows+=("$(http_hammer)"); vrows+=("$(http_vegeta)")
    else vrows+=("$(http_vegeta)"); hrows+=("$(http_hammer)"); fi
  done
  python3 - "$(printf '%s;' "${hrows[@]}")" "$(printf '%s;' "${vrows[@]}")" "$secs" "$conns" <<'PY'
import statistics, sys
rows = lambda a: [[float(x) for x in r.split()] for r in a.split(";") if r]
h, v = rows(sys.argv[1]), rows(sys.argv[2])
med = lambda rs, i: statistics.median(r[i] for r in rs)
ratios = [a[0] / b[0] for a, b in zip(h, v)]
print(f"HTTP: hammer --http (every check on) vs vegeta attack -rate 0, {sys.argv[4]} workers and connections, {sys.argv[3]}s runs, nginx answering 200:")
print(f"  hammer {med(h,0):,.0f} req/s (pairs: {' '.join(f'{r[0]:,.0f}' for r in h)}), client CPU {med(h,1):.1f} µs/request")
print(f"  vegeta {med(v,0):,.0f} req/s (pairs: {' '.join(f'{r[0]:,.0f}' for r in v)}), client CPU {med(v,1):.1f} µs/request")
cpu = [a[1] / b[1] for a, b in zip(h, v)]
print(f"  ratio {statistics.median(ratios):.3f} (pairs {min(ratios):.2f}-{max(ratios):.2f}; target >= 1.0)")
print(f"  client CPU a request, hammer / vegeta: {statistics.median(cpu):.3f} (pairs {min(cpu):.2f}-{max(cpu):.2f}; target <= 1.0)")
PY
fi
[ "${ONLY:-}" = http ] && exit 0

# Recording (first_overshoot): every decision's commands recorded (the default) against none
# (--no-trace), interleaved three times, medians: decisions/s, CPU µs per decision and peak RSS
# of the hammer. Two shapes: the default concurrency run (naive,lua, limit 20, hold 2ms) and the
# fastest (naive,lua, limit 0, hold 0: every call a refusal, as many decisions as the server
# answers). ONLY=trace runs only this.
tr_run() { # args: flags... -> "decisions/s cpu_us_per_decision rss_kb"
  /usr/bin/time -f '%M %U %S' -o "$dir/tr" "$bin" --addr 127.0.0.1:$port hammer \
    --strategies naive,lua --duration "${secs}s" --tui off -o json "$@" 2>/dev/null > "$dir/tr.json"
  python3 -c "
import json, sys
ss = json.load(open(sys.argv[1]))['strategies']
rss, u, sy = map(float, open(sys.argv[2]).read().split()[-3:])  # after 'Command exited with non-zero status' if any
print(sum(s['throughput_per_s'] for s in ss), (u + sy) * 1e6 / sum(s['attempts'] for s in ss), int(rss))" "$dir/tr.json" "$dir/tr"
}
if [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = trace ]; then
  fast=(--limit 0 --hold 0)
  tdo1=$(tr_run); tdf1=$(tr_run --no-trace); tfo1=$(tr_run "${fast[@]}"); tff1=$(tr_run "${fast[@]}" --no-trace)
  tdf2=$(tr_run --no-trace); tdo2=$(tr_run); tff2=$(tr_run "${fast[@]}" --no-trace); tfo2=$(tr_run "${fast[@]}")
  tdo3=$(tr_run); tdf3=$(tr_run --no-trace); tfo3=$(tr_run "${fast[@]}"); tff3=$(tr_run "${fast[@]}" --no-trace)
  python3 - "$tdo1;$tdo2;$tdo3" "$tdf1;$tdf2;$tdf3" "$tfo1;$tfo2;$tfo3" "$tff1;$tff2;$tff3" "$secs" <<'PY'
import statistics, sys
rows = lambda a: [[float(x) for x in r.split()] for r in a.split(";")]
do, df, fo, ff = (rows(a) for a in sys.argv[1:5])
med = lambda rs, i: statistics.median(r[i] for r in rs)
runs = lambda rs: " ".join(f"{r[0]:,.0f}" for r in rs)
print(f"recording (first_overshoot) on vs off (--no-trace), naive,lua, {sys.argv[5]}s runs, decisions/s of both:")
for title, on, off in (("default (limit 20, hold 2ms)", do, df), ("fastest (limit 0, hold 0)", fo, ff)):
    print(f"  {title}: on {med(on,0):,.0f} (median of {runs(on)}), off {med(off,0):,.0f} (median of {runs(off)}), "
          f"ratio {med(on,0)/med(off,0):.3f}  (target >= 0.97)")
    print(f"    CPU per decision: on {med(on,1):.2f} µs, off {med(off,1):.2f} µs ({100*(med(on,1)-med(off,1))/med(off,1):+.1f}%); "
          f"peak RSS on {med(on,2)/1024:.1f} MiB, off {med(off,2)/1024:.1f} MiB")
PY
fi
[ "${ONLY:-}" = trace ] && exit 0

# Judging refusals (false rejects): the default run (naive,lua, 64 workers) of three limiters with
# every refusal judged, and with none (given a run id, other processes may share the keys, so the
# hammer judges no refusal: the baseline), interleaved three times; decisions/s of both strategies
# and CPU µs per decision of the hammer process. Refusals outnumber admits about ten to one here.
judge_run() { # args: limiter extra-flags... -> "decisions/s cpu_us_per_decision"
  local lim=$1; shift
  /usr/bin/time -f '%U %S' -o "$dir/jcpu" $bin --addr 127.0.0.1:$port hammer --limiter "$lim" \
    --workers "$conns" --duration "${secs}s" --tui off -o json "$@" 2>/dev/null > "$dir/j.json"
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
u, sy = map(float, open(sys.argv[2]).read().split()[-2:])  # after 'Command exited with non-zero status' if any
print(sum(x['throughput_per_s'] for x in d['strategies']), (u + sy) * 1e6 / sum(x['attempts'] for x in d['strategies']))" "$dir/j.json" "$dir/jcpu"
}
if [ -z "${ONLY:-}" ] || [ "$ONLY" = judge ]; then
judged=(); unjudged=()
for round in 1 2 3; do
  for lim in concurrency sliding-window token-bucket; do
    judged+=("$lim $(judge_run "$lim")")
    unjudged+=("$lim $(judge_run "$lim" --run-id "bench-judge-$round-$lim")")
  done
done
python3 - "$(printf '%s;' "${judged[@]}")" "$(printf '%s;' "${unjudged[@]}")" "$secs" <<'PY'
import statistics, sys
def rows(a):
    out = {}
    for r in filter(None, a.split(";")):
        lim, rate, cpu = r.split()
        out.setdefault(lim, []).append((float(rate), float(cpu)))
    return out
j, u = rows(sys.argv[1]), rows(sys.argv[2])
print(f"judging refusals (false rejects), naive,lua default runs of {sys.argv[3]}s, judged vs not (--run-id), medians of three:")
for lim in j:
    jr, ur = statistics.median(r[0] for r in j[lim]), statistics.median(r[0] for r in u[lim])
    jc, uc = statistics.median(r[1] for r in j[lim]), statistics.median(r[1] for r in u[lim])
    print(f"  {lim:15} decisions/s judged {jr:>9,.0f}, not {ur:>9,.0f}, ratio {jr/ur:.3f} (target >= 0.95); "
          f"CPU per decision {jc:.2f} vs {uc:.2f} µs ({100*(jc-uc)/uc:+.1f}%)")
PY
fi
[ "${ONLY:-}" = judge ] && exit 0
fw_sha=$($bin scripts load fixed_window --addr 127.0.0.1:$port -o tsv | awk 'NR==2{print $2}')

# Scale: what the server can take, through the hammer and through redis-benchmark, on fixed_window
# EVALSHA with limit 0 so every call is the same rejection (GET and PTTL of a missing counter) on
# both sides, under steady load (--profile steady --skew 0: the default bursty load idles between
# bursts). Two pairings, run as PAIRS interleaved pairs (the order flips every pair, so a drift of
# the machine's speed falls on both sides alike), medians:
#   pipelined: redis-benchmark -c 50 -P 16 against hammer --workers 256 --conns 8;
#   default:   redis-benchmark -c 64 (one call in flight) against hammer --workers 64.
# Both sides are measured the same way, by the server: its EVALSHA calls (INFO commandstats) and
# its CPU time (/proc/<pid>/stat, user+system) over secs-1 seconds from 1s into a run that lasts
# secs+2, so start-up and clean-up count on neither side. The on-CPU share is the server's CPU time over that wall
# time: the server is the bottleneck when it is near 1, whatever the host's speed does meanwhile.
# The client's CPU per call (user+system, the same span) is what each client costs the machine:
# on a machine whose cores the client and the server share, the steadier figure; the hammer's,
# with every check on, against redis-benchmark's in the same pair (issue 42: at most 2x).
pairs=${PAIRS:-9}
rpid=$(cat "$dir/redis.pid")
# The servers measured: the single node, or (the cluster section) every master, their counters summed.
sports=("$port"); spids=("$rpid")
sample() { # args: client pid -> "seconds server_cpu_ticks evalsha_calls evalsha_usec client_cpu_ticks"
  local p calls=0 usec=0 cpu=0 st
  for p in "${sports[@]}"; do
    st=$(redis-cli -p "$p" info commandstats | tr -d '\r' | grep '^cmdstat_evalsha:' |
      sed -E 's/.*calls=([0-9]+),usec=([0-9]+).*/\1 \2/')
    st=${st:-0 0}; calls=$(( calls + ${st% *} )); usec=$(( usec + ${st#* } ))
  done
  for p in "${spids[@]}"; do cpu=$(( cpu + $(awk '{print $14+$15}' "/proc/$p/stat") )); done
  echo "$(date +%s.%N) $cpu $calls $usec $(awk '{print $14+$15}' "/proc/$1/stat")"
}
# measure kill|wait CMD...: runs CMD, which runs for secs+2 seconds (kill: is stopped then, for
# redis-benchmark's request count; wait: stops itself), and samples it from 1s in to secs in ->
# "calls/s server_on_cpu_share server_usec_per_call client_usec_per_call" (the client's CPU,
# user+system, over the same span). The 2s after the span are a margin: a sample itself takes
# time on a loaded machine, and the client must still be running when the last is taken.
measure() {
  local how=$1 a b cpid; shift
  "$@" >"$dir/out" 2>/dev/null &
  cpid=$!
  sleep 1; a=$(sample "$cpid"); sleep $(( secs - 1 ))
  [ -e "/proc/$cpid" ] || { echo "the client ($*) stopped before its span was sampled" >&2; exit 1; }
  b=$(sample "$cpid")
  if [ "$how" = kill ]; then kill "$cpid" 2>/dev/null || true; fi
  wait "$cpid" 2>/dev/null || true
  python3 -c "
import sys
a, b = [list(map(float, x.split())) for x in sys.argv[1:3]]
hz = $(getconf CLK_TCK)
dt, calls = b[0] - a[0], max(b[2] - a[2], 1)
print(calls / dt, (b[1] - a[1]) / hz / dt, (b[3] - a[3]) / calls, (b[4] - a[4]) / hz * 1e6 / calls)" "$a" "$b"
}
rb_scale() { # args: -c N [-P 16]
  measure kill redis-benchmark -p "$port" "$@" -n 1000000000 -r 100000000 -q \
    EVALSHA "$fw_sha" 1 bench:{rbp}:__rand_int__ 0 1000
}
ham_scale() { # args: workers conns [flags...]
  local w=$1 c=$2; shift 2
  measure wait $bin --addr 127.0.0.1:$port hammer --strategies lua --limiter fixed-window --limit 0 \
    --workers "$w" --conns "$c" --profile steady --skew 0 --duration "$(( secs + 2 ))s" --tui off -o json "$@"
}
# pair I A B CMD_A... -- CMD_B...: one interleaved pair: runs both commands, CMD_A first when I
# is odd and CMD_B first when even, and appends their outputs to the arrays named A and B.
pair() {
  local i=$1; local -n pa=$2 pb=$3; shift 3
  local -a ca=()
  while [ "$1" != -- ]; do ca+=("$1"); shift; done
  shift
  if (( i % 2 )); then pa+=("$("${ca[@]}")"); pb+=("$("$@")")
  else pb+=("$("$@")"); pa+=("$("${ca[@]}")"); fi
}
# Cluster (issues 33, 42): a cluster of MASTERS masters (default 3) on loopback ports, each
# master in its own session as the single node is, and the candidate fast paths for the load
# against redis-benchmark --cluster -c 50 -P 16, in CLUSTER_PAIRS interleaved pairs each (default
# 3), measured as above with every master's counters summed (the on-CPU share is of all the
# servers: up to the cores there are). Each candidate's client CPU per call is set against
# redis-benchmark's in the same pair (issue 42's target: at most 2x, every check on), and the
# hammer's says how many decisions one client core proves a second.
# The candidates: the hammer (--cluster --conns: each round on its master's own connection, package wire), the hammer through go-redis's
# ClusterClient pipelines (--no-direct) and the prototypes of hack/loadproto (internal/wire with slot routing, rueidis's DoMulti rounds and
# auto-pipelining, go-redis's pipelines and AutoPipeline), all at 800 calls in flight on 256 keys
# (CLUSTER_WORKERS), redis-benchmark's own: 50 connections of 16. Fewer in flight make smaller
# batches, which cost each server more per call (more reads and writes per call).
# Each is stopped once sampled (sampling three servers takes a while on a loaded machine).
# ONLY=cluster runs only this.
if [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = cluster ]; then
  go build -o "$dir/loadproto" ./hack/loadproto
  masters=${MASTERS:-3}
  read -r -a cports <<<"$(python3 -c '
import socket, sys
out = []
while len(out) < int(sys.argv[1]):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    if p + 10000 > 65535: continue
    b = socket.socket()
    try: b.bind(("127.0.0.1", p + 10000))
    except OSError: continue
    finally: b.close()
    out.append(p)
print(*out)' "$masters")"
  # PIN=1: the masters share the first half of the cores and each client runs on the other
  # half (taskset), as servers on hosts of their own would: the clients no longer compete with
  # the servers for CPU, and the ratio says whether the client keeps the servers busy.
  spin=(); cpin=()
  if [ "${PIN:-}" = 1 ]; then
    ncpu=$(nproc); half=$(( ncpu / 2 > 0 ? ncpu / 2 : 1 ))
    spin=(taskset -c "0-$(( half - 1 ))"); cpin=(taskset -c "$(( half % ncpu ))-$(( ncpu - 1 ))")
  fi
  cpids=()
  for p in "${cports[@]}"; do
    mkdir -p "$dir/c$p"
    "${spin[@]}" redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "$dir/c$p/nodes.conf" \
      --save "" --appendonly no --dir "$dir/c$p" --daemonize yes --pidfile "$dir/c$p/pid" --logfile "$dir/c$p/log"
  done
  for p in "${cports[@]}"; do until redis-cli -p "$p" ping >/dev/null 2>&1; do sleep 0.1; done; cpids+=("$(cat "$dir/c$p/pid")"); done
  pids+=("${cpids[@]}")
  redis-cli --cluster create "${cports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
  for p in "${cports[@]}"; do
    until redis-cli -p "$p" cluster info | grep -q cluster_state:ok; do sleep 0.2; done
    csha=$(redis-cli -p "$p" -x script load <scripts/fixed_window.lua) # -x: the file's exact bytes
  done
  sports=("${cports[@]}"); spids=("${cpids[@]}")
  rb_cluster() {
    measure kill "${cpin[@]}" redis-benchmark --cluster -h 127.0.0.1 -p "${cports[0]}" -c 50 -P 16 -n 1000000000 -r 100000 -q \
      EVALSHA "$csha" 1 'bench:{tag}:__rand_int__' 0 60000
  }
  ham_cluster() { # args: [flags...]
    measure kill "${cpin[@]}" $bin --addr "127.0.0.1:${cports[0]}" --cluster hammer --strategies lua --limiter fixed-window --limit 0 \
      --workers "${CLUSTER_WORKERS:-800}" --conns "${CLUSTER_CONNS:-8}" --keys "${CLUSTER_KEYS:-256}" --profile steady --skew 0 \
      --duration "$(( secs + 60 ))s" --tui off -o json "$@"
  }
  proto() { measure kill "${cpin[@]}" "$dir/loadproto" -addr "127.0.0.1:${cports[0]}" -mode "$1" -workers "${CLUSTER_WORKERS:-800}" -conns "${CLUSTER_CONNS:-8}" -keys 256 -duration "$(( secs + 60 ))s"; }
  # hammer: its fast path (package wire to each master, rueidis for redirects); hammer-goredis: --no-direct, go-redis's pipelines.
  read -r -a candidates <<<"${CANDIDATES:-hammer hammer-goredis wire rueidis-multi rueidis-auto goredis-pipe goredis-auto}"
  declare -A crb=() cc=()
  for i in $(seq "${CLUSTER_PAIRS:-3}"); do
    for cand in "${candidates[@]}"; do
      a=(); b=()
      case $cand in
        hammer) pair "$i" a b rb_cluster -- ham_cluster ;;
        hammer-goredis) pair "$i" a b rb_cluster -- ham_cluster --no-direct ;;
        *) pair "$i" a b rb_cluster -- proto "$cand" ;;
      esac
      crb[$cand]+="${a[0]};"; cc[$cand]+="${b[0]};"
    done
  done
  args=()
  for cand in "${candidates[@]}"; do args+=("$cand" "${crb[$cand]}" "${cc[$cand]}"); done
  pinned=""; [ -n "${spin[*]}" ] && pinned=", servers on cores ${spin[2]}, clients on ${cpin[2]}"
  python3 - "$(cut -d' ' -f1-3 /proc/loadavg)" "${CLUSTER_WORKERS:-800} in flight on ${CLUSTER_CONNS:-8} connections" "$pinned" "$masters" "${args[@]}" <<'PY'
import statistics, sys
rows = lambda a: [[float(x) for x in r.split()] for r in a.split(";") if r]
med = lambda rs, i: statistics.median(r[i] for r in rs)
print(f"cluster: {sys.argv[4]} masters, fixed_window EVALSHA, every call rejected, {sys.argv[2]} (the hammer), 256 keys, against")
print(f"redis-benchmark --cluster -c 50 -P 16 in interleaved pairs, medians (load average at the end: {sys.argv[1]}){sys.argv[3]}:")
print(f"  {'candidate':<14} {'ratio':>6} {'pairs':>11}  {'calls/s':>9} {'servers on-CPU':>14} {'client µs/call':>14}  "
      f"{'servers µs/call':>15}  rb: client, servers µs/call  client CPU / rb's (pairs; target <= 1.3)")
a = sys.argv[5:]
for name, rb, c in zip(a[0::3], a[1::3], a[2::3]):
    rb, c = rows(rb), rows(c)
    ratios = [x[0] / y[0] for x, y in zip(c, rb)]
    cpu = [x[3] / y[3] for x, y in zip(c, rb)]
    print(f"  {name:<14} {statistics.median(ratios):6.3f} {min(ratios):5.2f}-{max(ratios):4.2f}  {med(c,0):9,.0f} "
          f"{100*med(c,1):13.1f}% {med(c,3):14.2f}  {1e6*med(c,1)/med(c,0):15.2f}  "
          f"{med(rb,3):.2f}, {1e6*med(rb,1)/med(rb,0):.2f}{'':>16}{statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f})")
    if name == "hammer":
        print(f"    one client core proves about {1e6/med(c,3):,.0f} decisions/s (every check on); "
              f"redis-benchmark's sends {1e6/med(rb,3):,.0f} calls/s")
PY
  for p in "${cports[@]}"; do kill "$(cat "$dir/c$p/pid")" 2>/dev/null || true; done
  sports=("$port"); spids=("$rpid")
fi
[ "${ONLY:-}" = cluster ] && exit 0
# Direct connections against go-redis (--no-direct): the same hammer runs, both modes, in
# interleaved pairs (DIRECT_PAIRS, default 3), measured as above. ONLY=direct runs only this.
if [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = direct ] || [ "${ONLY:-}" = scale ]; then
  dp=(); gp=(); dd=(); gd=()
  for i in $(seq "${DIRECT_PAIRS:-3}"); do
    pair "$i" dp gp ham_scale 256 8 -- ham_scale 256 8 --no-direct
    pair "$i" dd gd ham_scale 64 0 -- ham_scale 64 0 --no-direct
  done
  python3 - "$(IFS=';'; echo "${dp[*]}")" "$(IFS=';'; echo "${gp[*]}")" "$(IFS=';'; echo "${dd[*]}")" "$(IFS=';'; echo "${gd[*]}")" <<'PY'
import statistics, sys
rows = lambda a: [[float(x) for x in r.split()] for r in a.split(";")]
dp, gp, dd, gd = (rows(a) for a in sys.argv[1:5])
med = lambda rs, i: statistics.median(r[i] for r in rs)
print(f"direct connections vs go-redis (--no-direct), {len(dp)} interleaved pairs, medians:")
for title, d, g in (("pipelined (--workers 256 --conns 8)", dp, gp), ("default (--workers 64)", dd, gd)):
    ratios = [a[0] / b[0] for a, b in zip(d, g)]
    print(f"  {title}: direct {med(d,0):,.0f} calls/s (server on-CPU {100*med(d,1):.1f}%, client {med(d,3):.2f} µs/call), "
          f"go-redis {med(g,0):,.0f} ({100*med(g,1):.1f}%, {med(g,3):.2f} µs/call); ratio {statistics.median(ratios):.3f}")
PY
fi
[ "${ONLY:-}" = direct ] && exit 0
rbp=(); hp=(); rbd=(); hd=()
for i in $(seq "$pairs"); do
  pair "$i" rbp hp rb_scale -c 50 -P 16 -- ham_scale 256 8
  pair "$i" rbd hd rb_scale -c 64 -- ham_scale 64 0
done
join() { local IFS=';'; echo "$*"; }
# The cost of each evidence feature per decision (BenchmarkEvidence: recorded as the engine
# records it, read at its tick), beside the hammer's whole CPU per call above.
evidence=$(go test -run '^$' -bench BenchmarkEvidence -benchtime 2000000x ./internal/bench/ |
  awk '/^BenchmarkEvidence\//{sub(/^BenchmarkEvidence\//, "", $1); sub(/-[0-9]+$/, "", $1); printf "%s %s;", $1, $3}')
python3 - "$(join "${rbp[@]}")" "$(join "${hp[@]}")" "$(join "${rbd[@]}")" "$(join "${hd[@]}")" "$secs" "$(nproc)" "$evidence" <<'PY'
import statistics, sys
rows = lambda a: [[float(x) for x in r.split()] for r in a.split(";")]
rbp, hp, rbd, hd = (rows(a) for a in sys.argv[1:5])
med = lambda rs, i: statistics.median(r[i] for r in rs)
print(f"scale: fixed_window EVALSHA, every call rejected, steady load, {len(rbp)} interleaved pairs, each run sampled over {int(sys.argv[5])-1}s,")
print(f"one redis-server, {sys.argv[6]} cores (shared machines are noisy: read the ratios, from pairs run side by side)")
for title, rb, ham, rbname, hname in (
        ("pipelined", rbp, hp, "redis-benchmark -c 50 -P 16", "hammer --workers 256 --conns 8"),
        ("default", rbd, hd, "redis-benchmark -c 64", "hammer --workers 64")):
    ratios = [h[0] / r[0] for h, r in zip(ham, rb)]
    print(f"  {title}:")
    for name, rs in ((rbname, rb), (hname, ham)):
        print(f"    {name:<31} {med(rs,0):>10,.0f} calls/s  server on-CPU {100*med(rs,1):5.1f}%, {med(rs,2):.2f} µs/call;  "
              f"client {med(rs,3):.2f} µs/call  (runs: {' '.join(f'{r[0]:,.0f}' for r in rs)})")
    target = 0.95 if title == "pipelined" else 0.90
    print(f"    ratio hammer / redis-benchmark: median {statistics.median(ratios):.3f} "
          f"(pairs {min(ratios):.2f}-{max(ratios):.2f}; target >= {target})")
    cpu = [h[3] / r[3] for h, r in zip(ham, rb)]
    print(f"    client CPU per call hammer / redis-benchmark: median {statistics.median(cpu):.2f} "
          f"(pairs {min(cpu):.2f}-{max(cpu):.2f}; target <= {1.2 if title == 'pipelined' else 2}); one client core proves about "
          f"{1e6/med(ham,3):,.0f} decisions/s")
client = {"pipelined": med(hp, 3), "default": med(hd, 3)}
print("  evidence per decision (BenchmarkEvidence), as a share of the hammer's client CPU per call "
      f"(pipelined {client['pipelined']:.2f} µs, default {client['default']:.2f} µs):")
for item in filter(None, sys.argv[7].split(";")):
    name, ns = item.split()
    ns = float(ns)
    print(f"    {name:<18} {ns:7.1f} ns: {ns/10/client['pipelined']:5.1f}% pipelined, {ns/10/client['default']:5.1f}% default")
PY
[ "${ONLY:-}" = pairs ] && exit 0

# Keys x window: a sliding window of 1m over 2000 keys against one key, 5s each, steady load. Peak RSS,
# decisions/s, and CPU µs per decision of the hammer process; interleaved three times, medians.
# Two shapes: the issue's (defaults: naive,lua, limit 20, hold 2ms), where 2000 keys admit far
# more than one key does, so the server writes more and admitted requests hold their 2ms; and
# every call admitted on both sides (limit 10^9, hold 0), where only the checkers' cost differs.
kw_run() { # args: keys extra-flags... -> "rss_kb decisions/s cpu_us_per_decision" (decisions of all strategies)
  local keys=$1; shift
  /usr/bin/time -f '%M %U %S' -o "$dir/kw" $bin --addr 127.0.0.1:$port hammer \
    --profile steady --skew 0 --limiter sliding-window --window 1m --keys "$keys" --duration 5s --tui off -o json "$@" 2>/dev/null > "$dir/kw.json"
  python3 -c "
import json, sys
ss = json.load(open(sys.argv[1]))['strategies']
rss, u, sy = map(float, open(sys.argv[2]).read().split()[-3:])  # after 'Command exited with non-zero status' if any
print(int(rss), sum(s['throughput_per_s'] for s in ss), (u + sy) * 1e6 / sum(s['attempts'] for s in ss))" "$dir/kw.json" "$dir/kw"
}
all=(--strategies lua --limit 1000000000 --hold 0)
kd1a=$(kw_run 1); kd2a=$(kw_run 2000); ka1a=$(kw_run 1 "${all[@]}"); ka2a=$(kw_run 2000 "${all[@]}")
kd1b=$(kw_run 1); kd2b=$(kw_run 2000); ka1b=$(kw_run 1 "${all[@]}"); ka2b=$(kw_run 2000 "${all[@]}")
kd1c=$(kw_run 1); kd2c=$(kw_run 2000); ka1c=$(kw_run 1 "${all[@]}"); ka2c=$(kw_run 2000 "${all[@]}")

python3 - "$kd1a;$kd1b;$kd1c" "$kd2a;$kd2b;$kd2c" "$ka1a;$ka1b;$ka1c" "$ka2a;$ka2b;$ka2c" <<'PY'
import statistics, sys
rows = lambda a: [[float(x) for x in r.split()] for r in a.split(";")]
kd1, kd2, ka1, ka2 = (rows(a) for a in sys.argv[1:5])
med = lambda rs, i: statistics.median(r[i] for r in rs)
runs = lambda rs: " ".join(f"{r[0]:,.0f}" for r in rs)
for title, k1, k2 in (("defaults (naive,lua, limit 20, hold 2ms)", kd1, kd2),
                      ("every call admitted (lua, limit 1e9, hold 0)", ka1, ka2)):
    print(f"sliding window 1m, 5s, --keys 1 vs --keys 2000, {title}:")
    print(f"  peak RSS     keys 1 {med(k1,0)/1024:.1f} MiB, keys 2000 {med(k2,0)/1024:.1f} MiB  (target < 200 MiB)")
    print(f"  decisions/s  keys 1 {med(k1,1):,.0f} (median of {runs([[r[1]] for r in k1])}), keys 2000 {med(k2,1):,.0f} "
          f"(median of {runs([[r[1]] for r in k2])}), ratio {med(k2,1)/med(k1,1):.2f}  (target >= 0.90)")
    print(f"  CPU per decision: keys 1 {med(k1,2):.2f} µs, keys 2000 {med(k2,2):.2f} µs")
PY
[ "${ONLY:-}" = scale ] && exit 0

sha=$($bin scripts load concurrency_acquire --addr 127.0.0.1:$port -o tsv | awk 'NR==2{print $2}')
now=$(date +%s%3N)

# Equal work: both clients call EVALSHA concurrency_acquire with limit 0 on an empty set, so every
# call is the same rejection inside Redis and only the client's efficiency differs (redis-benchmark
# cannot release what it admits). Interleaved three times; the median of each counts.
rb_run() {
  redis-benchmark -p "$port" -c "$conns" -n $(( 50000 * secs )) -r 100000000 -q \
    EVALSHA "$sha" 1 bench:{rb}:set 0 "$now" 10000 __rand_int__ | tr '\r' '\n' | grep -Eo '[0-9.]+ requests per second' | tail -1 | awk '{print $1}'
}
ham_run() { # args: limit hold seconds -> JSON
  $bin --addr 127.0.0.1:$port hammer --strategies lua --limiter concurrency \
    --workers "$conns" --limit "$1" --hold "$2" --duration "${3}s" -o json 2>/dev/null
}
rb1=$(rb_run); h1=$(ham_run 0 0 "$secs" | field throughput_per_s)
rb2=$(rb_run); h2=$(ham_run 0 0 "$secs" | field throughput_per_s)
rb3=$(rb_run); h3=$(ham_run 0 0 "$secs" | field throughput_per_s)

# The hammer's default concurrency run (limit 20, hold 2ms): decisions/s, and Redis commands/s
# counting the ZREM of every admitted request's release.
def_json=$(ham_run 20 2ms "$secs")

# Dashboard cost: the same default run with the dashboard on (in a pseudo-terminal, via script)
# and off, interleaved three times (medians); the summary JSON follows the dashboard's exit from
# the alt screen.
# Each prints "decisions/s cpu-µs-per-decision": CPU (user+sys of the hammer process) is the
# steadier measure of what the dashboard costs; throughput also moves with the machine's noise.
per_decision() { python3 -c "
import json, sys
s = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace').split('\x1b[?1049l')[-1].replace('\r', '')
d = json.loads(s[s.index('{'):s.rindex('}') + 1])
u, sy = map(float, open(sys.argv[2]).read().split()[-2:])  # after 'Command exited with non-zero status' if any
n = sum(x['attempts'] for x in d['strategies'])
print(sum(x['throughput_per_s'] for x in d['strategies']), (u + sy) * 1e6 / n)" "$1" "$2"; }
tui_run() {
  script -qfec "/usr/bin/time -f '%U %S' -o $dir/cpu $bin --addr 127.0.0.1:$port hammer --workers $conns --duration ${secs}s --tui on -o json" "$dir/ts" >/dev/null
  per_decision "$dir/ts" "$dir/cpu"
}
off_run() {
  /usr/bin/time -f '%U %S' -o "$dir/cpu" $bin --addr 127.0.0.1:$port hammer --workers "$conns" \
    --duration "${secs}s" --tui off -o json 2>/dev/null > "$dir/off.json"
  per_decision "$dir/off.json" "$dir/cpu"
}
off1=$(off_run); tui1=$(tui_run); off2=$(off_run); tui2=$(tui_run); off3=$(off_run); tui3=$(tui_run)

# Memory: peak RSS of a short and a long default run.
/usr/bin/time -f '%M' -o "$dir/rss10" $bin --addr 127.0.0.1:$port hammer --strategies naive,lua \
  --workers "$conns" --duration "${secs}s" -o json >/dev/null 2>&1
/usr/bin/time -f '%M' -o "$dir/rss60" $bin --addr 127.0.0.1:$port hammer --strategies naive,lua \
  --workers "$conns" --duration "${long}s" -o json >/dev/null 2>&1

python3 - "$(cat "$dir/rss10")" "$(cat "$dir/rss60")" "$secs" "$long" "$conns" "$def_json" \
  "$rb1 $rb2 $rb3" "$h1 $h2 $h3" "$off1 $off2 $off3" "$tui1 $tui2 $tui3" <<'PY'
import json, statistics, sys
rss10, rss60 = map(float, sys.argv[1:3])
secs, long, conns, default = sys.argv[3], sys.argv[4], sys.argv[5], json.loads(sys.argv[6])["strategies"][0]
rbs, hs = ([float(x) for x in a.split()] for a in sys.argv[7:9])
offs_all, tuis_all = ([float(x) for x in a.split()] for a in sys.argv[9:11])
offs, off_cpu = offs_all[0::2], offs_all[1::2]
tuis, tui_cpu = tuis_all[0::2], tuis_all[1::2]
runs = lambda xs: " ".join(f"{x:,.0f}" for x in xs)
rb, ham = statistics.median(rbs), statistics.median(hs)
off, tui = statistics.median(offs), statistics.median(tuis)
cmds = (default["attempts"] + default["admitted"]) / (default["attempts"] / default["throughput_per_s"])
print(f"connections: {conns}, {secs}s runs, same redis-server")
print(f"equal work (EVALSHA concurrency_acquire, every call rejected):")
print(f"  redis-benchmark      {rb:>10,.0f} req/s        (median of {runs(rbs)})")
print(f"  limitctl hammer      {ham:>10,.0f} decisions/s  (median of {runs(hs)})")
print(f"  ratio                {ham/rb:>10.2f}  (target >= 0.90)")
print(f"hammer default (limit 20, hold 2ms): {default['throughput_per_s']:,.0f} decisions/s, "
      f"{cmds:,.0f} Redis commands/s with releases, overshoot {default['overshoot']}")
print(f"dashboard on vs off (naive,lua default run, decisions/s of both): on {tui:,.0f} (median of {runs(tuis)}), "
      f"off {off:,.0f} (median of {runs(offs)}), ratio {tui/off:.2f}  (target >= 0.95)")
oc, tc = statistics.median(off_cpu), statistics.median(tui_cpu)
print(f"  CPU per decision: off {oc:.2f} µs, on {tc:.2f} µs: the dashboard costs {100*(tc-oc)/oc:+.1f}% CPU, "
      f"a throughput ratio of {oc/tc:.2f} on a CPU-bound machine")
print(f"hammer peak RSS (naive,lua): {secs}s {rss10/1024:.1f} MiB, {long}s {rss60/1024:.1f} MiB, ratio {rss60/rss10:.2f}  (target < 1.25)")
PY
