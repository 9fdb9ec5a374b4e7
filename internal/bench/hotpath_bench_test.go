package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/hammer/recordfile"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/redistest"
)

// BenchmarkHotPath is the client's cost per decision of a whole engine run against a real
// redis-server: fixed_window through EVALSHA, b.N decisions, in the pipelined mode (256 workers
// on 8 connections, --conns 8) and the default one (64 workers, a connection each). "rejected"
// (limit 0) is the call alone, every call the same rejection; "admitted" (a limit never
// reached) adds the evidence of an admit to each. "direct" runs the calls on connections of
// their own (package wire), as the hammer does on a single node; "rueidis" through a rueidis
// client of the node, as the hammer's calls go on a cluster or through Sentinels (the figures
// that keep package wire on a single node); "go-redis" through go-redis's pipelines and pool
// (hammer --no-direct). Besides ns/op (wall time per decision: the
// inverse of throughput, so mostly the server's and the machine's speed) it reports what the
// client controls, which a regression of 20% shows in (compare runs with benchstat):
//
//   - cpu-µs/decision: the process's CPU time (user+system) per decision, every check on (the
//     overshoot evidence, the refusal judges, the trace rings), what the client costs the
//     machine: the figure a loaded machine disturbs least (the server is another process), and
//     the one issue 42 sets against redis-benchmark's client CPU per call (make bench-hammer);
//   - allocs/op, B/op: allocations per decision, the whole process (go-redis's included);
//   - gc-µs/decision: CPU time the garbage collector spent per decision (runtime/metrics), and
//     gcs/1M-decisions: collections per million decisions.
//
// Run it as (LIMITCTL_BENCH_RECORD=1 records every call as hammer --record does, for the cost
// of the recording: compare the two runs' cpu-µs/decision):
//
//	go test -run '^$' -bench BenchmarkHotPath -benchtime 200000x ./internal/bench/
func BenchmarkHotPath(b *testing.B) {
	srv := redistest.Start(b)
	for _, mode := range []struct {
		name           string
		workers, conns int
	}{{"conns=8", 256, 8}, {"default", 64, 0}} {
		for _, load := range []struct {
			name  string
			limit int64
		}{{"rejected", 0}, {"admitted", 1 << 40}} {
			for _, transport := range []string{"direct", "rueidis", "go-redis"} {
				b.Run(mode.name+"/"+load.name+"/"+transport, func(b *testing.B) {
					// Connected as the hammer connects (RESP2, no probe of a connection at checkout).
					rdb, _, err := redisconn.Open(context.Background(), redisconn.Options{Addrs: []string{srv.Addr},
						PoolSize: max(mode.conns, mode.workers) + 4, NoCheckoutProbe: true, Timeout: 5 * time.Second}, func(string) string { return "" })
					if err != nil {
						b.Fatal(err)
					}
					defer rdb.Close()
					lcfg := limiter.Config{Limit: load.limit, Window: time.Second}
					switch transport {
					case "direct": // as the hammer runs on a single node
						lcfg.Direct, _ = redisconn.DirectOptions(rdb)
					case "rueidis": // the cluster's and Sentinel's path, on one node
						rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, ForceSingleClient: true,
							AlwaysRESP2: true, ClientSetInfo: rueidis.DisableClientSetInfo, DisableCache: true, DisableRetry: true})
						if err != nil {
							b.Fatal(err)
						}
						defer rc.Close()
						lcfg.Shared, lcfg.SharedTimeout = rc, 5*time.Second
					}
					lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, rdb, lcfg)
					if err != nil {
						b.Fatal(err)
					}
					cfg := bench.Config{
						RunID: "bench", Limiter: limiter.FixedWindow, Limit: load.limit, Window: time.Second,
						Workers: mode.workers, Conns: mode.conns, Requests: int64(b.N), KeyCount: 1, Horizon: 5 * time.Second,
						KeyFor:     func(s string, i int) string { return fmt.Sprintf("bench:{%s}:%s:%d", b.Name(), s, i) },
						Strategies: []bench.StrategyRun{{Name: "lua", Limiter: lim, EpochAligned: true}},
					}
					runHotPath(b, cfg)
				})
			}
		}
	}
}

type gcTotals struct {
	process float64 // seconds of CPU the process used (getrusage)
	cpu     float64 // seconds of CPU the collector used
	cycles  uint32
}

func gcWork() gcTotals {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // RUSAGE_SELF cannot fail
	}
	secs := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return gcTotals{process: secs(ru.Utime) + secs(ru.Stime), cpu: s[0].Value.Float64(), cycles: ms.NumGC}
}

// BenchmarkHotPathCluster is BenchmarkHotPath's pipelined mode on a 3-master cluster, as the
// hammer runs there (`--cluster --workers 800 --conns 8 --keys 256`, make bench-hammer's cluster
// load: redis-benchmark's own 800 calls in flight, 50 connections of 16): "rueidis" sends the
// rounds through the strategy's rueidis client (redisconn.Shared, the fast path), "go-redis"
// through go-redis's ClusterClient pipelines (hammer --no-direct). Its keys are 256, each of
// its own hash tag, so the calls spread over the masters: 3, or LIMITCTL_BENCH_MASTERS (6, 12:
// a larger cluster, whose rounds each go to one master). The same metrics; run it as:
//
//	go test -run '^$' -bench BenchmarkHotPathCluster -benchtime 200000x ./internal/bench/
//	LIMITCTL_BENCH_MASTERS=12 go test -run '^$' -bench 'BenchmarkHotPathCluster/rejected/rueidis$' -benchtime 600000x ./internal/bench/
func BenchmarkHotPathCluster(b *testing.B) {
	masters := 3
	if n, err := strconv.Atoi(os.Getenv("LIMITCTL_BENCH_MASTERS")); err == nil && n >= 3 {
		masters = n
	}
	cluster := redistest.StartCluster(b, masters, 0)
	for _, load := range []struct {
		name  string
		limit int64
	}{{"rejected", 0}, {"admitted", 1 << 40}} {
		for _, transport := range []string{"rueidis", "go-redis"} {
			b.Run(load.name+"/"+transport, func(b *testing.B) {
				rdb, _, err := redisconn.Open(context.Background(), redisconn.Options{Addrs: cluster.Addrs(), Cluster: true,
					PoolSize: 260, NoCheckoutProbe: true, Timeout: 5 * time.Second}, func(string) string { return "" })
				if err != nil {
					b.Fatal(err)
				}
				defer rdb.Close()
				lcfg := limiter.Config{Limit: load.limit, Window: time.Second}
				if transport == "rueidis" { // as the hammer runs on a cluster
					shared, timeout, err := redisconn.Shared(rdb)
					if err != nil || shared == nil {
						b.Fatalf("no rueidis client: %v", err)
					}
					defer shared.Close()
					lcfg.Shared, lcfg.SharedTimeout = shared, timeout
				}
				lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, rdb, lcfg)
				if err != nil {
					b.Fatal(err)
				}
				cfg := bench.Config{
					RunID: "bench", Limiter: limiter.FixedWindow, Limit: load.limit, Window: time.Second,
					Workers: 800, Conns: 8, Requests: int64(b.N), KeyCount: 256, Horizon: 5 * time.Second,
					KeyFor:     func(s string, i int) string { return fmt.Sprintf("bench:{%s.%d}:%s", b.Name(), i, s) },
					Strategies: []bench.StrategyRun{{Name: "lua", Limiter: lim, EpochAligned: true}},
				}
				runHotPath(b, cfg)
			})
		}
	}
}

// runHotPath runs cfg's b.N decisions under the benchmark's timer and reports the process's CPU,
// the garbage collector's CPU and its cycles per decision.
func runHotPath(b *testing.B, cfg bench.Config) {
	b.Helper()
	if os.Getenv("LIMITCTL_BENCH_RECORD") != "" {
		// hammer --record: every call written to a file as well, what the recording costs.
		rec, err := recordfile.Open(filepath.Join(b.TempDir(), "run.jsonl"), cfg)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Recorder = rec
		defer func() {
			if err := rec.Close(); err != nil {
				b.Fatal(err)
			}
		}()
	}
	before := gcWork()
	b.ReportAllocs()
	b.ResetTimer()
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	after := gcWork()
	if s := sum.Strategies[0]; s.Errors != 0 || s.Attempts != int64(b.N) {
		b.Fatalf("%d decisions, %d errors; want %d without errors", s.Attempts, s.Errors, b.N)
	}
	b.ReportMetric((after.process-before.process)*1e6/float64(b.N), "cpu-µs/decision")
	b.ReportMetric((after.cpu-before.cpu)*1e6/float64(b.N), "gc-µs/decision")
	b.ReportMetric(float64(after.cycles-before.cycles)*1e6/float64(b.N), "gcs/1M-decisions")
}
