# limitctl: `make test` installs redis-server when missing, then vets and runs every test
# (with the race detector) against throw-away redis-server processes the tests start themselves.

GO        ?= go
BIN       ?= limitctl
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build test vet redis-server bench bench-hammer clean

all: build

build:
	$(GO) build -trimpath -o $(BIN) .

# redis-server comes from the system package manager; apt-get (Debian/Ubuntu) or brew.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server"; \
	  if command -v apt-get >/dev/null 2>&1; then \
	    $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq redis-server redis-tools >/dev/null; \
	  elif command -v brew >/dev/null 2>&1; then brew install redis; \
	  else echo "install redis-server with your package manager" >&2; exit 1; fi; }
	@redis-server --version

vet:
	$(GO) vet ./...

test: redis-server vet
	$(GO) test -race -timeout 30m ./...

# One decision of each limiter x strategy against a real redis-server.
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchmem ./internal/limiter/

clean:
	rm -rf $(BIN) dist/

# hammer vs redis-benchmark throughput (same server, same connections) and hammer RSS 10s vs 60s.
bench-hammer: redis-server
	hack/bench-hammer.sh

# inspect and purge against a throw-away redis-server on loopback, once each.
.PHONY: bench-purge bench-inspect

# Purge 900,000 stale members of a 1,000,000-member set in purge_stale batches while another
# client PINGs: PING p99/max and members/s, against one ZREMRANGEBYSCORE on the same set.
bench-purge: redis-server
	$(GO) test -run '^$$' -bench 'BenchmarkPurge1M' -benchtime 1x -timeout 30m ./internal/keys/

# Inspect 100,000 keys against `redis-cli --scan --pattern` listing the same keys.
bench-inspect: redis-server
	$(GO) test -run '^$$' -bench 'BenchmarkInspect100k' -benchtime 1x -timeout 30m ./internal/keys/
