#!/usr/bin/env bash
# hack/bench-history.sh: how fast limitctl reads and judges the records load tools write, on one
# core, in CPU time (the figure a busy machine distorts least), and against `vegeta encode`
# reading the same vegeta file (its CPU time as the kernel counts it). Needs vegeta (make
# load-tools). BENCHTIME (default 5x) is how many times each 100,000-record file is read;
# JUDGE_BENCHTIME (default 2x) how many times each 1,000,000-record file is judged.
set -euo pipefail
cd "$(dirname "$0")/.."
go="${GO:-go}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$("$go" test -run '^$' -bench 'BenchmarkDecode|BenchmarkAgainstVegetaEncode' -cpu 1 \
  -benchtime "${BENCHTIME:-5x}" ./internal/history/)
out+=$'\n'$("$go" test -run '^$' -bench 'BenchmarkJudge' -cpu 1 -benchtime "${JUDGE_BENCHTIME:-2x}" ./internal/judge/)
printf '%s\n' "$out" | grep '^Benchmark'
echo
# The metrics by name, wherever go test put them on the line.
printf '%s\n' "$out" | awk '
  function metric(name,   i) { for (i = 2; i < NF; i++) if ($(i+1) == name) return $i; return "" }
  /^BenchmarkDecode/ {
    printf "%-40s %10.0f records/cpu-s  %6.0f B/record\n", $1, metric("records/cpu-s"), metric("B/record")
  }
  /^BenchmarkJudge(Limitctl|Vegeta)/ {
    printf "%-40s %10.0f records/cpu-s (read and judged)\n", $1, metric("records/cpu-s")
  }
  /^BenchmarkAgainstVegetaEncode/ {
    split($1, part, "/"); sub(/-[0-9]+$/, "", part[2])
    printf "vegeta %-4s: limitctl %5.0f ns/record, vegeta encode %6.0f ns/record: ratio %.3f (%.1fx faster)\n",
      part[2], metric("cpu-ns/record"), metric("vegeta-cpu-ns/record"), metric("ratio"), 1 / metric("ratio")
  }
  /^BenchmarkJudgeAgainstVegetaEncode/ {
    printf "judge of vegeta json: %5.0f ns/record, vegeta encode %6.0f ns/record: ratio %.3f\n",
      metric("cpu-ns/record"), metric("vegeta-cpu-ns/record"), metric("ratio")
  }'
