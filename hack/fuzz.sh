#!/usr/bin/env bash
# hack/fuzz.sh TARGET PACKAGE: fuzzes one target for FUZZTIME (default 10s). Go's fuzzing
# coordinator can end a run that found nothing with "context deadline exceeded" when its time
# runs out while a worker is starting or minimizing; such a run is started once more. Any other
# failure (an input that panics, which go test saves under testdata/fuzz) fails at once.
set -uo pipefail
target=$1 pkg=$2
for attempt in 1 2; do
  out=$("${GO:-go}" test -run '^$' -fuzz "^${target}\$" -fuzztime "${FUZZTIME:-10s}" "$pkg" 2>&1)
  code=$?
  printf '%s\n' "$out"
  [ "$code" -eq 0 ] && exit 0
  if ! grep -q 'context deadline exceeded' <<<"$out" || grep -q 'Failing input written to' <<<"$out"; then
    exit "$code"
  fi
  echo "fuzz: $target ended on its deadline, not on an input; running it once more" >&2
done
exit 1
