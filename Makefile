# limitctl: `make test` installs redis-server when missing, then vets and runs every test
# (with the race detector) against throw-away redis-server processes the tests start themselves.

GO        ?= go
BIN       ?= limitctl
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build docs test test-short vet fuzz redis-server load-tools bench bench-hammer clean verify-power verify-power-cluster verify-power-http verify-trace verify-soundness

all: build

build:
	$(GO) build -trimpath -o $(BIN) .

# Man pages (build/manpages) and shell completion scripts (build/completions), as the release
# archives carry them.
docs:
	$(GO) run ./hack/gendocs -out build

# What the tests drive for real, from the system package manager (apt-get, or brew): redis-server
# and its tools (it runs the Sentinels too), tmux for the dashboard in a real terminal, chromium for
# the HTML report.
TEST_TOOLS := redis-server redis-benchmark tmux chromium script

redis-server:
	@missing=; for t in $(TEST_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if command -v apt-get >/dev/null 2>&1; then \
	    $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	      redis-server redis-tools tmux chromium util-linux time >/dev/null; \
	  elif command -v brew >/dev/null 2>&1; then brew install redis tmux; brew install --cask chromium; \
	  else echo "install$$missing with your package manager" >&2; exit 1; fi; \
	fi
	@redis-server --version
	@# The Sentinel tests run this same binary as `redis-server CONF --sentinel`, as Debian's redis-server
	@# supports (its redis-sentinel package adds only a service); without a config file it says so and exits.
	@redis-server --sentinel 2>&1 </dev/null | grep -q 'Sentinel needs config file' || \
	  { echo "this redis-server has no Sentinel mode (redis-server CONF --sentinel); install Redis >= 6 from your package manager" >&2; exit 1; }

# The load tools whose records `judge` reads, which the tests run for real against loopback
# servers: vegeta, built from the Go module proxy into GOBIN (GOPATH/bin when unset) unless that
# pinned version is there already (go version -m names the module a binary was built from).
# From nothing (no module or build cache) it took 3 min 18 s on the 2 shared cores (76 s of CPU),
# 26 s with Go's build cache warm, nothing once installed; the timeout bounds a proxy that hangs.
# k6 is not installed: its module is AGPL, which the module list this project may use rules out,
# and Debian does not package it, so its format is tested on lines written as its source writes
# them (internal/history/gen_test.go).
VEGETA_VERSION := v12.13.0
GOBIN_DIR = $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)

load-tools:
	@if ! $(GO) version -m "$(GOBIN_DIR)/vegeta" 2>/dev/null | \
	    grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/tsenart/vegeta/v12[[:space:]]+$(VEGETA_VERSION)([[:space:]]|$$)"; then \
	  echo "installing vegeta $(VEGETA_VERSION) into $(GOBIN_DIR)"; \
	  $$(command -v timeout >/dev/null && echo timeout 600) $(GO) install github.com/tsenart/vegeta/v12@$(VEGETA_VERSION); \
	fi
	@echo "vegeta $(VEGETA_VERSION) in $(GOBIN_DIR)"

vet:
	$(GO) vet ./...

# hack/no-leftovers.sh fails the run if any process it started (a throw-away redis-server, a tmux
# server, a built binary) outlives it.
test: redis-server load-tools vet
	hack/no-leftovers.sh $(GO) test -race -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz

# The inner loop: the same suite with -short, which skips the slowest tests (clusters,
# failovers, killed servers, the README's every command, the bad-input matrix) and the fuzzing.
# A few minutes less than make test, which stays the one that runs everything.
test-short: redis-server load-tools vet
	hack/no-leftovers.sh $(GO) test -race -short -timeout 10m ./...

# Each fuzz target for a bounded time (FUZZTIME): the linter, URL and flag resolution, password
# redaction, assert expressions and record files must never panic; the records' JSON scanner
# reads what encoding/json reads. The seed corpora also run in go test.
FUZZTIME ?= 10s
# (hack/fuzz.sh runs a target once more when Go's fuzzer ends on its deadline without an input.)
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/fuzz.sh FuzzLint ./internal/lint/
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/fuzz.sh FuzzResolve ./internal/redisconn/
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/fuzz.sh FuzzRedact ./internal/redisconn/
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/fuzz.sh FuzzParseAssertion ./internal/bench/verdict/
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/fuzz.sh FuzzScannerAgreesWithEncodingJSON ./internal/history/
	GO=$(GO) FUZZTIME=$(FUZZTIME) hack/fuzz.sh FuzzRead ./internal/history/

# One decision of each limiter x strategy against a real redis-server.
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchmem ./internal/limiter/

clean:
	rm -rf $(BIN) dist/ build/

# Reading the records load tools write (vegeta JSON and CSV, k6, limitctl), in CPU time on one
# core, and against `vegeta encode` reading the same vegeta file.
.PHONY: bench-history
bench-history: load-tools
	GO=$(GO) hack/bench-history.sh

# hammer vs redis-benchmark throughput (same server, same connections) and hammer RSS 10s vs 60s.
bench-hammer: redis-server
	hack/bench-hammer.sh

# What MONITOR costs a server (hammer --http-redis-trace attaches one to each node): redis-benchmark
# without and with one MONITOR client attached, in interleaved pairs; the ratio goes in --help and
# docs/http.md.
.PHONY: monitor-cost
monitor-cost: redis-server
	hack/monitor-cost.sh

# inspect and purge against a throw-away redis-server on loopback, once each.
.PHONY: bench-purge bench-inspect

# Purge 900,000 stale members of a 1,000,000-member set in purge_stale batches while another
# client PINGs: PING p99/max and members/s, against one ZREMRANGEBYSCORE on the same set.
bench-purge: redis-server
	$(GO) test -run '^$$' -bench 'BenchmarkPurge1M' -benchtime 1x -timeout 30m ./internal/keys/

# Reset 100,000 keys (50,000 two-string buckets) by one pattern while another client PINGs: the
# longest single command the server ran (its latency monitor) and PING p99, against one DEL.
.PHONY: bench-reset
bench-reset: redis-server
	$(GO) test -run '^$$' -bench 'BenchmarkReset100k' -benchtime 1x -timeout 30m ./internal/keys/

# Inspect 100,000 keys against `redis-cli --scan --pattern` listing the same keys.
bench-inspect: redis-server
	$(GO) test -run '^$$' -bench 'BenchmarkInspect100k' -benchtime 1x -timeout 30m ./internal/keys/

# The default hammer load's statistical power (issues 12, 19, 20 and 41): each buggy script in
# testdata/limiters/buggy (reordering, refill, expiry and off-by-one bugs, a TIME-reading GCRA one
# token too generous judged on the virtual clock, a leaky bucket whose clock moves only on its
# admits) caught overshooting, and each too-strict one in testdata/limiters/strict caught
# refusing with room (TOO STRICT), within 5s in at least 19 of 20 runs; each correct script in
# testdata/limiters (whatever clock its library uses) and each shipped one exact (0 overshoot,
# 0 false rejects, 0 leaks, and evidence whose power beats the limit) in 20 of 20; each leaky one
# in testdata/limiters/leaks caught leaving keys behind (LEAKS) in 19 of 20; every run also
# recorded (hammer --record) and judged again by limitctl judge, which must read the run's own
# verdict; vegeta's records of limitapp's routes judged (limitctl judge) OVERSHOOT on each wrong
# one and exact on each correct one in 20 of 20 attacks (needs make load-tools); and the HTTP
# targets (issue 48, TestPowerHTTPTargets): every route of internal/limitapp, each kind's side by
# side, the correct ones exact in 20 of 20, the wrong ones caught (OVERSHOOT, TOO STRICT, LEAKS) in
# 19 of 20 (make verify-power-http runs them alone, about 30 minutes a pass). hack/verify-power.sh
# runs it twice, on the machine as it is (idle when nothing else runs) and with two busy loops
# beside it, and prints both figures side by side: the catch rates must not depend on a busy
# scheduler, nor the soundness on a quiet one. About 80 minutes a pass; POWER_RUNS changes the 20,
# PASSES=idle (or loaded) runs one pass, RUN=buggy/leaky_bucket_abs one fixture.
POWER_RUNS ?= 20
PASSES ?= idle loaded
RUN ?=
verify-power: redis-server load-tools
	GO=$(GO) POWER_RUNS=$(POWER_RUNS) PASSES="$(PASSES)" RUN="$(RUN)" hack/verify-power.sh
verify-power-http: redis-server load-tools
	GO=$(GO) POWER_RUNS=$(POWER_RUNS) PASSES="$(PASSES)" RUN="$(RUN)" TEST=TestPowerHTTPTargets hack/verify-power.sh

# The race inside the application (issue 54, TestPowerHTTPRedisTrace): hammer --http-redis-trace on
# internal/limitapp's routes (a handler that GETs then INCRs, Kong's read on arrival and count after
# the response, two counters read then INCRed, the seed's ZCARD/ZADD in a handler; INCR first, with
# a TTL read or a pipeline of reads after it, WATCH/MULTI retried, the seed's Lua acquire, redis_rate
# and ulule/limiter), by MONITOR on one node, through the proxy, and by MONITOR on a 3-master
# cluster: each racing route OVERSHOOT, told check-then-act, its first overshoot's commands showing
# two reads of one key before a write to it, in 19 of 20 runs; each atomic one exact and atomic in
# 20 of 20. About an hour a pass; PASSES=idle runs one.
verify-trace: redis-server
	GO=$(GO) POWER_RUNS=$(POWER_RUNS) PASSES="$(PASSES)" RUN="$(RUN)" TEST=TestPowerHTTPRedisTrace hack/verify-power.sh

# Soundness: every correct limiter internal/corpus makes (each kind's families on every clock, unit
# and TTL) hammered under every load profile and skew, idle and beside two busy loops: none may
# be blamed (OVERSHOOT, TOO STRICT or LEAKS in any run). make test runs a sample at the defaults.
# About 40 minutes a pass; LIMITCTL_SOUNDNESS_SEED (printed by each pass) repeats a corpus.
verify-soundness: redis-server
	GO=$(GO) POWER_RUNS=1 PASSES="$(PASSES)" RUN="$(RUN)" SUITE=soundness hack/verify-power.sh

# The same on a 3-master cluster, the scripts' calls through rueidis as the hammer's there.
verify-power-cluster: redis-server
	GO=$(GO) POWER_RUNS=$(POWER_RUNS) PASSES="$(PASSES)" RUN="$(RUN)" CLUSTER=1 hack/verify-power.sh
