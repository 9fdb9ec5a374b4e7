package limiter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/trace"
)

// batchKinds are the kinds x strategies whose decision is one command, as the hammer batches them.
func batchCases() (out []struct {
	k limiter.Kind
	s limiter.Strategy
}) {
	for _, k := range limiter.Kinds() {
		for _, s := range limiter.Strategies() {
			if limiter.Supports(k, s) && s.RunsScript() {
				out = append(out, struct {
					k limiter.Kind
					s limiter.Strategy
				}{k, s})
			}
		}
	}
	return out
}

// transports are the two ways a batch reaches a single node: go-redis's pipelines, and a
// connection of the batch's own (Config.Direct, package wire) dialled with rdb's options.
func transports(rdb *redis.Client) []struct {
	name   string
	direct *redis.Options
} {
	return []struct {
		name   string
		direct *redis.Options
	}{{"go-redis", nil}, {"direct", rdb.Options()}}
}

// limitOf3 is k's limiter in strategy s with a limit of 3 that nothing refills within a test
// (the shipped script as the custom one), its batches on direct connections with direct.
func limitOf3(t *testing.T, rdb *redis.Client, k limiter.Kind, s limiter.Strategy, direct *redis.Options) limiter.Limiter {
	t.Helper()
	cfg := limiter.Config{Limit: 3, Window: time.Minute, StaleAfter: time.Minute, Rate: 0.001, Burst: 3, Direct: direct}
	if s == limiter.Custom {
		cfg.CustomSource = limiter.ScriptFor(k).Source
	}
	lim, err := limiter.New(k, s, rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// roundOf sends n acquires on keys (one after another) as one batch and, for the concurrency
// limiter, the admitted ones' releases as a second; it fails the test on any error and returns
// how many were admitted.
func roundOf(t *testing.T, b *limiter.Batch, keys []string, n int) int {
	t.Helper()
	ctx := context.Background()
	calls := make([]limiter.Call, n)
	now := time.Now()
	for i := range calls {
		calls[i] = limiter.Call{Key: keys[i%len(keys)], Now: now}
	}
	b.Do(ctx, calls)
	var releases []limiter.Call
	for i, c := range calls {
		if c.Err != nil {
			t.Fatalf("call %d of %d on %s: %v", i+1, n, c.Key, c.Err)
		}
		if c.Decision.Allowed {
			releases = append(releases, limiter.Call{Key: c.Key, Release: true, Decision: c.Decision})
		}
	}
	b.Do(ctx, releases)
	for i, c := range releases {
		if c.Err != nil {
			t.Fatalf("release %d: %v", i+1, c.Err)
		}
	}
	return len(releases)
}

// A batch's calls are decided each on its own, exactly as Acquire would: with a limit of 3 on
// one key, 8 calls in one batch admit exactly 3, whatever the kind and strategy; lua-ts-member's
// bug shows as it does from separate clients: calls of one millisecond add one member between
// them, so the count never reaches the limit and all 8 are admitted.
func TestBatchDecidesEachCallAsAcquireWould(t *testing.T) {
	rdb := server(t).Client(t)
	for _, c := range batchCases() {
		for _, tr := range transports(rdb) {
			t.Run(fmt.Sprintf("%s/%s/%s", c.k, c.s, tr.name), func(t *testing.T) {
				lim := limitOf3(t, rdb, c.k, c.s, tr.direct)
				b := limiter.NewBatch(lim)
				if b == nil {
					t.Fatalf("%s/%s runs one command per decision but has no batch", c.k, c.s)
				}
				defer b.Close()
				if b.Direct() != (tr.direct != nil) {
					t.Fatalf("Direct() = %v with Config.Direct %v", b.Direct(), tr.direct != nil)
				}
				ctx := context.Background()
				calls := make([]limiter.Call, 8)
				now := time.Now()
				for i := range calls {
					calls[i] = limiter.Call{Key: keyFor(t), Now: now}
				}
				b.Do(ctx, calls)
				admitted := 0
				for i, call := range calls {
					if call.Err != nil {
						t.Fatalf("call %d: %v", i+1, call.Err)
					}
					if call.Decision.Allowed {
						admitted++
					}
				}
				if c.s == limiter.LuaTSMember {
					if admitted != 8 {
						t.Fatalf("lua-ts-member admitted %d of 8 calls of one millisecond at limit 3, want all 8", admitted)
					}
					return
				}
				if admitted != 3 {
					t.Fatalf("admitted %d of 8 in one batch at limit 3, want exactly 3", admitted)
				}
				if c.k == limiter.Concurrency {
					// The releases free the slots: the next batch admits 3 again.
					var releases []limiter.Call
					for _, call := range calls {
						if call.Decision.Allowed {
							releases = append(releases, limiter.Call{Key: call.Key, Release: true, Decision: call.Decision})
						}
					}
					b.Do(ctx, releases)
					for _, r := range releases {
						if r.Err != nil {
							t.Fatalf("release: %v", r.Err)
						}
					}
					if n, err := rdb.ZCard(ctx, keyFor(t)).Result(); err != nil || n != 0 {
						t.Fatalf("after the releases the set holds %d members (%v), want 0", n, err)
					}
				}
			})
		}
	}
}

func TestClientSideStrategiesHaveNoBatch(t *testing.T) {
	rdb := server(t).Client(t)
	for _, s := range []limiter.Strategy{limiter.Naive, limiter.Multi, limiter.Watch} {
		lim, err := limiter.New(limiter.Concurrency, s, rdb, testConfig(limiter.Concurrency, s))
		if err != nil {
			t.Fatal(err)
		}
		if limiter.NewBatch(lim) != nil {
			t.Errorf("%s has a batch: its reads, decision and writes are round trips of their own", s)
		}
	}
}

// NOSCRIPT recovery in a batch: after SCRIPT FLUSH (and FUNCTION FLUSH) every call of the next
// batch is answered, the script loaded again by the first EVAL.
func TestBatchSurvivesScriptAndFunctionFlush(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	for _, c := range batchCases() {
		for _, tr := range transports(rdb) {
			t.Run(fmt.Sprintf("%s/%s/%s", c.k, c.s, tr.name), func(t *testing.T) {
				cfg := bigConfig(c.k, c.s)
				cfg.Direct = tr.direct
				lim, err := limiter.New(c.k, c.s, rdb, cfg)
				if err != nil {
					t.Fatal(err)
				}
				b := limiter.NewBatch(lim)
				defer b.Close()
				keys := []string{keyFor(t)}
				roundOf(t, b, keys, 4)
				if err := rdb.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				if err := rdb.FunctionFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				if got := roundOf(t, b, keys, 16); got != 16 {
					t.Fatalf("after the flush %d of 16 calls were admitted at a limit they cannot reach", got)
				}
			})
		}
	}
}

// bigConfig is a limit no test reaches: every call is admitted.
func bigConfig(k limiter.Kind, s limiter.Strategy) limiter.Config {
	cfg := limiter.Config{Limit: 1 << 30, Window: time.Minute, StaleAfter: time.Minute, Rate: 1e9, Burst: 1 << 30}
	if s == limiter.Custom {
		cfg.CustomSource = limiter.ScriptFor(k).Source
	}
	return cfg
}

// On go-redis's own pipelines what its connections do goes with the batch: a cluster (the calls
// of one batch on keys of every master, each answered from its own), TLS, an ACL user, RESP2
// and RESP3. A batch with a connection of its own (Config.Direct: a single node) is set up as
// go-redis sets its connections up, from the same options: TLS, the ACL user, RESP2 and RESP3.
func TestBatchOnEveryKindOfConnection(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	tlsSrv := redistest.StartTLS(t, redistest.TLSOptions{})
	acl := redistest.StartACL(t, "user hammer on >hammer-pw ~* +@all -flushall")
	plain := server(t)
	single := func(o *redis.Options) *redis.Client {
		c := redis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		return c
	}
	tlsClient, aclClient := tlsSrv.Client(t), acl.ClientAs(t, "hammer", "hammer-pw")
	resp2 := single(&redis.Options{Addr: plain.Addr, Protocol: 2})
	resp3 := single(&redis.Options{Addr: plain.Addr, Protocol: 3})
	clusterClient := cluster.Client(t)
	shared, timeout, err := redisconn.Shared(clusterClient)
	if err != nil || shared == nil {
		t.Fatalf("rueidis client of the cluster: %v, %v", shared, err)
	}
	t.Cleanup(shared.Close)
	targets := []struct {
		name   string
		rdb    limiter.Client
		direct *redis.Options
		shared bool
	}{
		{"cluster", clusterClient, nil, false},
		{"rueidis-cluster", clusterClient, nil, true},
		{"tls", tlsClient, nil, false},
		{"acl", aclClient, nil, false},
		{"resp2", resp2, nil, false},
		{"resp3", resp3, nil, false},
		{"direct-tls", tlsClient, tlsClient.Options(), false},
		{"direct-acl", aclClient, aclClient.Options(), false},
		{"direct-resp2", resp2, resp2.Options(), false},
		{"direct-resp3", resp3, resp3.Options(), false},
	}
	for _, target := range targets {
		for _, c := range batchCases() {
			t.Run(fmt.Sprintf("%s/%s/%s", target.name, c.k, c.s), func(t *testing.T) {
				cfg := bigConfig(c.k, c.s)
				cfg.Direct = target.direct
				if target.shared {
					cfg.Shared, cfg.SharedTimeout = shared, timeout
				}
				lim, err := limiter.New(c.k, c.s, target.rdb, cfg)
				if err != nil {
					t.Fatal(err)
				}
				// 12 keys, each its own hash tag: on the cluster they fall on every master.
				var keys []string
				for i := 0; i < 12; i++ {
					keys = append(keys, fmt.Sprintf("%s:{%d}", strings.Trim(keyFor(t), "{}"), i))
				}
				b := limiter.NewBatch(lim)
				defer b.Close()
				if got := roundOf(t, b, keys, 24); got != 24 {
					t.Fatalf("%d of 24 admitted at a limit they cannot reach", got)
				}
			})
		}
	}
}

// A server that stops answering fails the batch's calls by the client's read timeout, each
// with the error, instead of holding the round.
func TestBatchTimesOut(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "go-redis", true: "direct"}[direct], func(t *testing.T) { batchTimesOut(t, direct) })
	}
}

func batchTimesOut(t *testing.T, direct bool) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	cfg := bigConfig(limiter.FixedWindow, limiter.Lua)
	if direct {
		cfg.Direct = rdb.Options()
	}
	lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	defer b.Close()
	roundOf(t, b, []string{keyFor(t)}, 2)
	ctx := context.Background()
	if err := srv.Client(t).Do(ctx, "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	calls := make([]limiter.Call, 4)
	for i := range calls {
		calls[i] = limiter.Call{Key: keyFor(t), Now: time.Now()}
	}
	start := time.Now()
	b.Do(ctx, calls)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the batch took %s against a paused server; the read timeout is 200ms", took)
	}
	for i, c := range calls {
		if c.Err == nil {
			t.Errorf("call %d against a paused server: no error", i+1)
		}
	}
}

// A batch's call is traced as Acquire traces it: each call with its worker's recorder gets one
// step, the command the strategy sends and the reply Redis gave it (its decision's: {1, ...} for
// an admit, {0, ...} for a refusal), stamped with the batch's round, inside the Do call's own
// time. With a limit of 3 on one key the first three of four calls are admitted.
func TestBatchTracesEachCallAsAcquireDoes(t *testing.T) {
	rdb := server(t).Client(t)
	for _, c := range batchCases() {
		for _, tr := range transports(rdb) {
			t.Run(fmt.Sprintf("%s/%s/%s", c.k, c.s, tr.name), func(t *testing.T) {
				lim := limitOf3(t, rdb, c.k, c.s, tr.direct)
				ctx := context.Background()
				// What Acquire records for the strategy, alone, on a key of its own.
				alone := trace.NewRecorder(time.Now(), 0, 1, false)
				alone.Begin(0)
				d, err := lim.Acquire(trace.With(ctx, alone), keyFor(t)+":alone", time.Now())
				if err != nil {
					t.Fatal(err)
				}
				alone.Keep(d.Allowed, 0, 0, 0, 0)
				want := requestsOf(t, alone, d.Allowed)[0].Steps[0].Op

				begin := time.Now()
				calls := make([]limiter.Call, 4)
				now := time.Now()
				for i := range calls {
					calls[i] = limiter.Call{Key: keyFor(t), Now: now, Trace: trace.NewRecorder(begin, i, len(calls), false)}
					calls[i].Trace.Begin(0)
				}
				before := calls[0].Trace.Since()
				b := limiter.NewBatch(lim)
				defer b.Close()
				b.Do(ctx, calls)
				after := calls[0].Trace.Since()
				for i, call := range calls {
					if call.Err != nil {
						t.Fatalf("call %d: %v", i+1, call.Err)
					}
					call.Trace.Keep(call.Decision.Allowed, 0, 0, 0, 0)
					r := requestsOf(t, call.Trace, call.Decision.Allowed)[0]
					if len(r.Steps) != 1 || r.Steps[0].Op != want {
						t.Fatalf("call %d: steps %+v, want one %s as Acquire sends", i+1, r.Steps, want)
					}
					s := r.Steps[0]
					allowed := "0"
					if call.Decision.Allowed {
						allowed = "1"
					}
					if reply := strings.TrimLeft(string(s.Reply), `"[{`); !strings.HasPrefix(reply, allowed+",") {
						t.Errorf("call %d (allowed %v): reply %s", i+1, call.Decision.Allowed, s.Reply)
					}
					if s.SentUs < before || s.SentUs > s.RepliedUs || s.RepliedUs > after {
						t.Errorf("call %d: stamped [%d, %d]µs, outside the batch's [%d, %d]µs", i+1, s.SentUs, s.RepliedUs, before, after)
					}
				}
				if c.s != limiter.LuaTSMember && (!calls[2].Decision.Allowed || calls[3].Decision.Allowed) {
					t.Errorf("at limit 3: the third admitted %v, the fourth %v", calls[2].Decision.Allowed, calls[3].Decision.Allowed)
				}
			})
		}
	}
}

// requestsOf is the one request rec kept, admitted or refused.
func requestsOf(t *testing.T, rec *trace.Recorder, admitted bool) []trace.Request {
	t.Helper()
	all := func(*trace.Record) bool { return true }
	recs := rec.Refused(nil, all)
	if admitted {
		recs = rec.Admitted(nil, all)
	}
	reqs, _ := trace.Requests(recs)
	if len(reqs) != 1 || len(reqs[0].Steps) == 0 {
		t.Fatalf("kept %+v, want one request with its steps", reqs)
	}
	return reqs
}
