package keys

import (
	"bufio"
	"context"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The benchmarks run against their own throw-away redis-server on loopback; `make bench-purge`
// and `make bench-inspect` run them once each (-benchtime 1x).

const (
	benchMembers = 1_000_000
	benchStale   = 900_000 // the oldest members, an hour old or more; the rest under 10 seconds old
)

// seedBigSet writes benchMembers members to key: benchStale of them an hour old or more, the
// rest fresh, in millisecond scores relative to now.
func seedBigSet(b *testing.B, rdb *redis.Client, key string, now time.Time) {
	b.Helper()
	ctx := context.Background()
	rdb.Del(ctx, key)
	const chunk = 10_000
	pipe := rdb.Pipeline()
	for start := 0; start < benchMembers; start += chunk {
		zs := make([]redis.Z, 0, chunk)
		for i := start; i < start+chunk; i++ {
			age := time.Duration(i-benchStale) * time.Millisecond / 10 // fresh: 0-10s
			member := "fresh-" + strconv.Itoa(i)
			if i < benchStale {
				age = time.Hour + time.Duration(i)*time.Millisecond
				member = "stale-" + strconv.Itoa(i)
			}
			zs = append(zs, redis.Z{Score: scores.UnitMillis.Score(now.Add(-age)), Member: member})
		}
		pipe.ZAdd(ctx, key, zs...)
		if pipe.Len() == 10 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	if n, _ := rdb.ZCard(ctx, key).Result(); n != benchMembers {
		b.Fatalf("seeded %d members, want %d", n, benchMembers)
	}
}

// pinger is an application sharing the server: it sends a PING every pingEvery, open loop
// (each PING goes out on schedule over a pool of connections, whether or not earlier ones have
// answered), and measures each from when it was due. A client stuck behind a long command would
// have sent many requests meanwhile, and all of them wait: no coordinated omission.
type pinger struct {
	rdb      *redis.Client
	end      chan time.Time // when measuring stops
	done     chan struct{}
	inFlight sync.WaitGroup
	mu       sync.Mutex
	lat      []time.Duration
}

const pingEvery = time.Millisecond

func startPinger(b *testing.B, addr string) *pinger {
	b.Helper()
	p := &pinger{
		rdb: redis.NewClient(&redis.Options{Addr: addr, PoolSize: 512, MinIdleConns: 16, ReadTimeout: time.Minute, PoolTimeout: time.Minute}),
		end: make(chan time.Time, 1), done: make(chan struct{}),
	}
	if err := p.rdb.Ping(context.Background()).Err(); err != nil { // dial before measuring
		b.Fatal(err)
	}
	go func() {
		defer close(p.done)
		var end time.Time
		for due := time.Now(); end.IsZero() || !due.After(end); due = due.Add(pingEvery) {
			select {
			case end = <-p.end:
			default:
			}
			if wait := time.Until(due); wait > 0 {
				time.Sleep(wait)
			}
			p.inFlight.Add(1)
			go func(due time.Time) {
				defer p.inFlight.Done()
				if err := p.rdb.Ping(context.Background()).Err(); err != nil {
					return
				}
				d := time.Since(due)
				p.mu.Lock()
				p.lat = append(p.lat, d)
				p.mu.Unlock()
			}(due)
		}
	}()
	return p
}

// finish stops the pinger and returns its p99, max and sample count. The PINGs that fell due
// before now are still sent and waited for: those due during a stall measure it.
func (p *pinger) finish() (p99, worst time.Duration, n int) {
	p.end <- time.Now()
	<-p.done
	p.inFlight.Wait()
	p.rdb.Close()
	sort.Slice(p.lat, func(i, j int) bool { return p.lat[i] < p.lat[j] })
	n = len(p.lat)
	if n == 0 {
		return 0, 0, 0
	}
	idx := (n*99+99)/100 - 1 // ceil(0.99 n) - 1
	return p.lat[idx], p.lat[n-1], n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkPurge1M purges 900,000 stale members from a 1,000,000-member sorted set while
// another client PINGs in a loop: with purge_stale in batches, then with one
// ZREMRANGEBYSCORE, which holds the server for the whole removal.
func BenchmarkPurge1M(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	key := "bench:conc:big"

	for _, batch := range []int64{DefaultBatch, MaxBatch} {
		b.Run("purge_stale/batch="+strconv.FormatInt(batch, 10), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				now := time.Now()
				seedBigSet(b, rdb, key, now)
				sel := Selection{Targets: []Target{{Key: key, Node: srv.Addr, Named: true}}}
				runtime.GC() // the seed's garbage must not pause the pinger mid-measurement
				p := startPinger(b, srv.Addr)
				time.Sleep(20 * time.Millisecond) // the pinger runs before the purge starts, as in life
				b.StartTimer()
				start := time.Now()
				res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 30 * time.Minute, Batch: batch, Clock: LocalClock(func() time.Time { return now })})
				elapsed := time.Since(start)
				b.StopTimer()
				p99, worst, n := p.finish()
				if err != nil || res.TotalRemoved != benchStale || res.Keys[0].Remaining != benchMembers-benchStale {
					b.Fatalf("purge: %v %+v", err, res.Keys)
				}
				rate := float64(res.TotalRemoved) / elapsed.Seconds()
				b.ReportMetric(ms(p99), "ping_p99_ms")
				b.ReportMetric(ms(worst), "ping_max_ms")
				b.ReportMetric(rate, "members/s")
				b.Logf("purge_stale batch %d: removed %d of %d members in %v (%.0f members/s, %d calls); PING p99 %.3fms max %.3fms over %d pings",
					batch, res.TotalRemoved, benchMembers, elapsed.Round(time.Millisecond), rate, (benchStale+batch-1)/batch, ms(p99), ms(worst), n)
			}
		})
	}

	b.Run("zremrangebyscore", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			now := time.Now()
			seedBigSet(b, rdb, key, now)
			cutoff := formatScore(scores.UnitMillis.Score(now.Add(-30 * time.Minute)))
			runtime.GC()
			p := startPinger(b, srv.Addr)
			time.Sleep(20 * time.Millisecond)
			b.StartTimer()
			start := time.Now()
			removed, err := rdb.ZRemRangeByScore(ctx, key, "-inf", cutoff).Result()
			elapsed := time.Since(start)
			b.StopTimer()
			p99, worst, n := p.finish()
			if err != nil || removed != benchStale {
				b.Fatalf("ZREMRANGEBYSCORE: %v, removed %d", err, removed)
			}
			rate := float64(removed) / elapsed.Seconds()
			b.ReportMetric(ms(p99), "ping_p99_ms")
			b.ReportMetric(ms(worst), "ping_max_ms")
			b.ReportMetric(rate, "members/s")
			b.Logf("one ZREMRANGEBYSCORE: removed %d of %d members in %v (%.0f members/s); PING p99 %.3fms max %.3fms over %d pings",
				removed, benchMembers, elapsed.Round(time.Millisecond), rate, ms(p99), ms(worst), n)
		}
	})
}

// BenchmarkInspect100k inspects 100,000 limiter keys (sorted sets, counters and buckets) and
// times `redis-cli --scan --pattern` listing the same keys, on the same server.
func BenchmarkInspect100k(b *testing.B) {
	const total = 100_000
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	now := time.Now()
	pipe := rdb.Pipeline()
	for i := 0; i < total; i++ {
		id := strconv.Itoa(i)
		switch i % 4 {
		case 0, 1: // concurrency sets and window logs, a few members each
			key := "rl:conc:" + id
			if i%4 == 1 {
				key = "rl:log:" + id
			}
			pipe.ZAdd(ctx, key, redis.Z{Score: scores.UnitMillis.Score(now.Add(-time.Second)), Member: "a1-" + id},
				redis.Z{Score: scores.UnitMillis.Score(now.Add(-20 * time.Minute)), Member: "a2-" + id})
			pipe.PExpire(ctx, key, time.Hour)
		case 2:
			pipe.Set(ctx, "rl:fw:"+id, i%50, time.Hour)
		case 3:
			pipe.HSet(ctx, "rl:tb:"+id, "tokens", "3.5", "ts", formatScore(scores.UnitMillis.Score(now)))
		}
		if pipe.Len() >= 2000 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		b.Fatal("redis-cli is not on PATH (it comes with redis-server: apt-get install redis-tools)")
	}

	b.Run("limitctl_inspect", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			sel, err := Select(ctx, rdb, []string{"rl:*"}, SelectOptions{})
			if err != nil {
				b.Fatal(err)
			}
			in, err := Inspect(ctx, rdb, sel, InspectOptions{Stale: 10 * time.Minute, Clock: ServerClock(rdb)})
			elapsed := time.Since(start)
			if err != nil || len(in.Keys) != total {
				b.Fatalf("inspect: %v, %d keys", err, len(in.Keys))
			}
			b.ReportMetric(float64(total)/elapsed.Seconds(), "keys/s")
			b.Logf("limitctl inspect 'rl:*' (SCAN + type, TTL, memory, kind, ages, stale per key): %d keys in %v", total, elapsed.Round(time.Millisecond))
		}
	})
	b.Run("redis_cli_scan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			cmd := exec.Command(cli, "-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "--scan", "--pattern", "rl:*")
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			lines := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines++
			}
			if err := cmd.Wait(); err != nil || lines != total {
				b.Fatalf("redis-cli --scan: %v, %d keys", err, lines)
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(total)/elapsed.Seconds(), "keys/s")
			b.Logf("redis-cli --scan --pattern 'rl:*' (key names only): %d keys in %v", total, elapsed.Round(time.Millisecond))
		}
	})
}

// BenchmarkReset100k resets 50,000 two-string buckets (100,000 keys, Spring Cloud Gateway's
// layout) by one pattern while another client PINGs: reset's batches of UNLINK, against one DEL
// of every key, which holds the server for the whole deletion. Reset's time includes reading
// every key's kind (the plan).
func BenchmarkReset100k(b *testing.B) {
	const pairs = 50_000
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	seed := func() []string {
		b.Helper()
		keys := make([]string, 0, 2*pairs)
		pipe := rdb.Pipeline()
		now := strconv.FormatInt(time.Now().Unix(), 10)
		for i := 0; i < pairs; i++ {
			tokens := "bench:request_rate_limiter.{u" + strconv.Itoa(i) + "}.tokens"
			stamp := "bench:request_rate_limiter.{u" + strconv.Itoa(i) + "}.timestamp"
			pipe.Set(ctx, tokens, "3", time.Hour)
			pipe.Set(ctx, stamp, now, time.Hour)
			keys = append(keys, tokens, stamp)
			if pipe.Len() >= 10_000 {
				if _, err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		return keys
	}
	// The server's own view: its latency monitor records every command slower than 1ms, so the
	// longest one is how long the deletion held the server at once. The PINGs come from this
	// process, so while the plan decodes replies they also measure this machine's CPU.
	longest := func() time.Duration {
		v, err := rdb.Do(ctx, "LATENCY", "LATEST").Slice()
		if err != nil {
			b.Fatal(err)
		}
		var worst time.Duration
		for _, e := range v {
			if f, ok := e.([]any); ok && len(f) >= 4 && f[0] == "command" {
				if n, ok := f[3].(int64); ok {
					worst = max(worst, time.Duration(n)*time.Millisecond)
				}
			}
		}
		return worst
	}
	if err := rdb.ConfigSet(ctx, "latency-monitor-threshold", "1").Err(); err != nil {
		b.Fatal(err)
	}
	measure := func(b *testing.B, what string, del func() int64) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			seed()
			rdb.Do(ctx, "LATENCY", "RESET")
			p := startPinger(b, srv.Addr)
			time.Sleep(20 * time.Millisecond)
			b.StartTimer()
			start := time.Now()
			deleted := del()
			elapsed := time.Since(start)
			b.StopTimer()
			p99, worst, n := p.finish()
			if deleted != 2*pairs {
				b.Fatalf("%s deleted %d of %d keys", what, deleted, 2*pairs)
			}
			rate := float64(deleted) / elapsed.Seconds()
			held := longest()
			b.ReportMetric(ms(held), "longest_command_ms")
			b.ReportMetric(ms(p99), "ping_p99_ms")
			b.ReportMetric(ms(worst), "ping_max_ms")
			b.ReportMetric(rate, "keys/s")
			b.Logf("%s: %d keys in %v (%.0f keys/s); longest command %v (0: none over 1ms); PING p99 %.3fms max %.3fms over %d pings",
				what, deleted, elapsed.Round(time.Millisecond), rate, held, ms(p99), ms(worst), n)
		}
	}
	b.Run("reset/batch=500", func(b *testing.B) {
		measure(b, "reset, batches of 500", func() int64 {
			opts := ResetOptions{Batch: DefaultResetBatch, Clock: ServerClock(rdb)}
			sel, err := Select(ctx, rdb, []string{"bench:*"}, SelectOptions{})
			if err != nil {
				b.Fatal(err)
			}
			plan, err := PlanReset(ctx, rdb, sel, opts)
			if err != nil {
				b.Fatal(err)
			}
			res, err := Reset(ctx, rdb, plan, opts)
			if err != nil {
				b.Fatal(err)
			}
			return res.TotalDeleted
		})
	})
	b.Run("one DEL", func(b *testing.B) {
		var keys []string
		measure(b, "one DEL of every key", func() int64 {
			if keys == nil {
				sel, err := Select(ctx, rdb, []string{"bench:*"}, SelectOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range sel.Targets {
					keys = append(keys, t.Key)
				}
			}
			n, err := rdb.Del(ctx, keys...).Result()
			if err != nil {
				b.Fatal(err)
			}
			return n
		})
	})
}
