#!/usr/bin/env bash
# hack/verify-power.sh: the default load's statistical power, on the machine as it is (idle,
# when nothing else runs) and again with two busy loops beside it (loaded), side by side.
#
#   POWER_RUNS   runs per fixture (default 20)
#   PASSES       "idle loaded" (default), or one of them
#   CLUSTER=1    on a 3-master cluster instead of a single node
#   RUN          a go test -run pattern under the TestPower tests (default: all of them)
#   TEST         one of the suite's tests alone, e.g. TestPowerHTTPTargets (the HTTP targets'
#                fixtures: make verify-power-http)
#   LOGDIR       keep each pass's whole go test -v log there (the seeds, load-on counts, why a run
#                was blamed); without it they go with the run
#   SUITE        power (default), or soundness: the corpus of correct limiters (internal/corpus),
#                every one under every profile and skew, none blamed (make verify-soundness)
#
# Each pass runs the TestPower tests of internal/bench and cmd, which log one line per fixture
# ("caught in 19 of 20 runs", "exact ... in 20 of 20 runs"); the table gives each pass's line
# for every fixture, and the script fails when any pass failed. A busy loop is a shell spinning
# on a core; the idle figure is only as idle as the machine is: look at the load averages printed
# beside it.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${POWER_RUNS:-20}
passes=${PASSES:-idle loaded}
run=${RUN:-}
suite=${SUITE:-power}
case "$suite" in
  power) tests=TestPower packages="./internal/bench/ ./internal/judge/ ./cmd/" env=LIMITCTL_POWER=1 ;;
  soundness) tests=TestSoundness packages="./cmd/" env=LIMITCTL_SOUNDNESS=1 ;;
  *) echo "SUITE is power or soundness, got $suite" >&2; exit 2 ;;
esac
tests=${TEST:-$tests}

out=$(mktemp -d)
trap 'if [ -n "${LOGDIR:-}" ]; then mkdir -p "$LOGDIR" && cp "$out"/*.log "$LOGDIR"/ 2>/dev/null; fi; rm -rf "$out"; kill $(jobs -p) 2>/dev/null' EXIT

status=0
for pass in $passes; do
  busy=()
  if [ "$pass" = loaded ]; then
    for _ in 1 2; do (while :; do :; done) & busy+=($!); done
  fi
  echo "== $pass pass ($suite): $runs runs per fixture; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  env "$env" LIMITCTL_POWER_RUNS="$runs" ${CLUSTER:+LIMITCTL_POWER_CLUSTER=1} \
    "${GO:-go}" test -count=1 -v -timeout 300m -run "^${tests}${run:+.*/$run}" $packages >"$out/$pass.log" 2>&1
  code=$?
  [ "$code" -ne 0 ] && status=$code
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done
  echo "   ended with load average $(cut -d' ' -f1-3 /proc/loadavg), exit $code"
done

# One row per fixture: what each pass said of it ("NAME: caught in 19 of 20 runs", "NAME: exact
# (...) in 20 of 20 runs", "KIND: lua, eval and function at ... in 20 of 20 runs", "NAME: never
# blamed in 5 of 5 runs").
summary() {
  sed -n 's/^ *[a-z_]*_test\.go:[0-9]*: \(.*\): \(caught\|exact\|lua, eval and function\|never blamed\).* in \([0-9]*\) of \([0-9]*\) runs.*/\1\t\2 \3\/\4/p' "$1"
}
echo
{
  printf 'fixture'
  for pass in $passes; do printf '\t%s' "$pass"; done
  echo
  for name in $(for pass in $passes; do summary "$out/$pass.log"; done | cut -f1 | tr ' ' '~' | sort -u); do
    printf '%s' "${name//\~/ }"
    for pass in $passes; do
      printf '\t%s' "$(summary "$out/$pass.log" | awk -F'\t' -v n="${name//\~/ }" '$1 == n {print $2}' | tail -1)"
    done
    echo
  done
} | column -t -s $'\t'
for pass in $passes; do
  if grep -q -- '--- FAIL' "$out/$pass.log"; then
    echo
    echo "$pass pass, failures:"
    grep -- '--- FAIL' "$out/$pass.log"
    grep -E '_test\.go:[0-9]+: run [0-9]+: ' "$out/$pass.log" | head -20 # the runs that missed, where a test says
  fi
done
exit $status
