#!/usr/bin/env bash
# hack/no-leftovers.sh COMMAND...: runs COMMAND (make test's go test) with TMPDIR a folder of its
# own, then fails if anything it started still runs: a process whose executable, working
# directory or command line lies in that folder (a throw-away redis-server runs from its folder
# there, test binaries and the built limitctl live there, a tmux server's socket is there). A
# process still stopping gets 10 seconds; what is left then is killed, so a failed check leaves
# nothing either, and the folder is removed.
set -uo pipefail
tmp="$(mktemp -d "${TMPDIR:-/tmp}/limitctl-run-XXXXXX")"
TMPDIR="$tmp" "$@"
code=$?

# leftovers prints the pid of each running process that names the folder. grep reads the folder
# from a file, so its own command line does not name it.
pattern="$(mktemp)"
printf '%s\n' "$tmp" >"$pattern"
leftovers() {
  {
    ls -l /proc/[0-9]*/cwd /proc/[0-9]*/exe 2>/dev/null | grep -Ff "$pattern" | sed -E 's|.* /proc/([0-9]+)/.*|\1|'
    grep -lsFf "$pattern" /proc/[0-9]*/cmdline | cut -d/ -f3
  } | sort -u
}

if [ -r /proc/self/cwd ]; then
  deadline=$((SECONDS + 10))
  while left=($(leftovers)); [ "${#left[@]}" -gt 0 ] && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  if [ "${#left[@]}" -gt 0 ]; then
    echo "no-leftovers: ${#left[@]} processes outlived the tests; killing them:" >&2
    ps -o pid,ppid,args -p "$(IFS=,; echo "${left[*]}")" >&2
    kill -9 "${left[@]}" 2>/dev/null
    [ "$code" -eq 0 ] && code=1
  fi
else
  echo "no-leftovers: no /proc here, so the processes left were not checked" >&2
fi
rm -f "$pattern"
rm -rf "$tmp"
exit "$code"
