package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/trace"
)

// sequencedClient runs the commands named in order one at a time, in that order, whoever
// sends them: a real redis-server answers, and the test decides the interleaving. A gated
// command's turn ends only when its worker sends its next command, so the worker has recorded
// the reply (and the next command's sending) before the next turn begins. Each gated command
// records which worker ran it, when the gate let it through and when it was answered, on the
// run's clock (the recorder's), so the trace can be checked against it.
type sequencedClient struct {
	*redis.Client
	mu    sync.Mutex
	cond  *sync.Cond
	order []string
	busy  int // the worker whose turn it is, or -1
	ran   []ranCmd
}

type ranCmd struct {
	op         string
	worker     int
	passUs     int64
	answeredUs int64
}

func newSequencedClient(rdb *redis.Client, order ...string) *sequencedClient {
	c := &sequencedClient{Client: rdb, order: order, busy: -1}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *sequencedClient) Process(ctx context.Context, cmd redis.Cmder) error {
	op := cmd.Name()
	rec := trace.From(ctx)
	c.mu.Lock()
	if c.busy == rec.Worker() {
		c.busy = -1 // the worker has moved on: the next turn may begin
		c.cond.Broadcast()
	}
	if !slices.Contains(c.order, op) {
		c.mu.Unlock()
		return c.Client.Process(ctx, cmd)
	}
	for c.busy >= 0 || len(c.ran) < len(c.order) && c.order[len(c.ran)] != op {
		c.cond.Wait()
	}
	if len(c.ran) == len(c.order) {
		c.mu.Unlock()
		return c.Client.Process(ctx, cmd)
	}
	c.busy = rec.Worker()
	c.mu.Unlock()
	pass := rec.Since()
	err := c.Client.Process(ctx, cmd)
	answered := rec.Since()
	c.mu.Lock()
	c.ran = append(c.ran, ranCmd{op: op, worker: rec.Worker(), passUs: pass, answeredUs: answered})
	if len(c.ran) == len(c.order) {
		c.busy = -1
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	return err
}

// runSequenced runs two requests of kind k on two workers, limit 1, the naive strategy on a
// client that runs the given commands in order, and returns the strategy and what ran.
func runSequenced(t *testing.T, k limiter.Kind, order ...string) (bench.StrategySnapshot, []ranCmd) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	seq := newSequencedClient(rdb, order...)
	lim, err := limiter.New(k, limiter.Naive, seq, limiter.Config{Limit: 1, Window: time.Hour, StaleAfter: time.Minute, Rate: 1, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := bench.Config{
		RunID: "seq", Limiter: k, Limit: 1, Window: time.Hour, Rate: 1, Workers: 2, Requests: 2,
		Hold: 200 * time.Millisecond, KeyCount: 1, Horizon: time.Second, StaleAfter: time.Minute,
		KeyFor:     func(s string, i int) string { return fmt.Sprintf("t:{%s}:%s:%d", t.Name(), s, i) },
		Strategies: []bench.StrategyRun{{Name: "naive", Limiter: lim, EpochAligned: true}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := bench.New(cfg).Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(seq.ran) != len(order) {
		t.Fatalf("ran %d of the %d sequenced commands", len(seq.ran), len(order))
	}
	return strategy(t, sum, "naive"), seq.ran
}

// step is one step of the trace as the test reads it: the command and its reply's JSON.
type step struct{ op, reply string }

func steps(r trace.Request) []step {
	out := make([]step, len(r.Steps))
	for i, s := range r.Steps {
		out[i] = step{s.Op, string(s.Reply)}
	}
	return out
}

func byWorker(t *testing.T, ov *trace.Overshoot, worker int) trace.Request {
	t.Helper()
	for _, r := range ov.Requests {
		if r.Worker == worker {
			return r
		}
	}
	t.Fatalf("no request of worker %d in the trace: %+v", worker, ov.Requests)
	return trace.Request{}
}

func stepOf(t *testing.T, r trace.Request, op string) trace.StepOut {
	t.Helper()
	for _, s := range r.Steps {
		if s.Op == op {
			return s
		}
	}
	t.Fatalf("request %s has no %s: %+v", r.ID, op, r.Steps)
	return trace.StepOut{}
}

// checkRan asserts that every sequenced command is in the trace as it ran: the worker's
// request has the step, sent no later than the gate let it through and answered no sooner
// than its reply came.
func checkRan(t *testing.T, ov *trace.Overshoot, ran []ranCmd) {
	t.Helper()
	for _, r := range ran {
		s := stepOf(t, byWorker(t, ov, r.worker), upper(r.op))
		if s.SentUs > r.passUs || s.RepliedUs < r.answeredUs {
			t.Errorf("worker %d's %s is shown as [%d, %d]µs; it ran in [%d, %d]µs", r.worker, r.op, s.SentUs, s.RepliedUs, r.passUs, r.answeredUs)
		}
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// The article's interleaving, made to happen: A counts, B counts, A adds, B adds. Both saw an
// empty set (ZCARD -> 0 under a limit of 1), both were admitted, and the witness held two: the
// trace shows exactly those commands with the replies Redis sent, each at the time it ran, and
// marks A raced: its check was answered before B's write was sent, so it cannot have counted
// B. B's check was answered after A had begun sending its write (the gate held that write on
// the client, so only a bound on when it reached Redis is known): B is not claimed raced.
func TestFirstOvershootShowsTheInterleavingThatRan(t *testing.T) {
	st, ran := runSequenced(t, limiter.Concurrency, "zcard", "zcard", "zadd", "zadd")
	ov := st.FirstOvershoot
	if ov == nil {
		t.Fatalf("no first_overshoot; overshoot %d", st.Overshoot)
	}
	if ov.Held == nil || *ov.Held != 2 || ov.Limit != 1 || ov.InWindow != nil || ov.Missing != 0 || ov.ThisProcess {
		t.Fatalf("moment: %+v", ov)
	}
	if len(ov.Requests) != 2 {
		t.Fatalf("want the 2 held requests, got %+v", ov.Requests)
	}
	want := []step{{"ZREMRANGEBYSCORE", "0"}, {"ZCARD", "0"}, {"ZADD", "1"}, {"PEXPIRE", "1"}}
	a, b := byWorker(t, ov, ran[0].worker), byWorker(t, ov, ran[1].worker)
	if a.ID == b.ID || ran[0].worker == ran[1].worker {
		t.Fatalf("the two checks ran on one request: %+v", ran)
	}
	for _, r := range []trace.Request{a, b} {
		if got := steps(r); !slices.Equal(got, want) {
			t.Errorf("request %s: steps %v, want %v", r.ID, got, want)
		}
	}
	if !a.Raced || b.Raced {
		t.Errorf("raced: A %v, B %v; want A only", a.Raced, b.Raced)
	}
	checkRan(t, ov, ran)
	if stepOf(t, a, "ZCARD").RepliedUs > stepOf(t, b, "ZADD").SentUs {
		t.Errorf("A's check is not shown answered before B's write: %+v %+v", a.Steps, b.Steps)
	}
	// The moment is when the acquire that raised the witness to 2 was answered: after its
	// last command's reply.
	if at := ov.AtMs * 1000; at < float64(stepOf(t, a, "PEXPIRE").RepliedUs) && at < float64(stepOf(t, b, "PEXPIRE").RepliedUs) {
		t.Errorf("at_ms %.3f is before either admit was answered: %+v %+v", ov.AtMs, a.Steps, b.Steps)
	}
	if _, err := json.Marshal(ov); err != nil {
		t.Fatal(err)
	}
}

// The same race on a fixed window: both GETs find no counter, both INCR it (to 1, then 2).
// The busiest window held 2 of 1, and its two admits are the requests shown, the first INCR
// answered 1 and the second 2.
func TestFirstOvershootOfAWindowShowsItsAdmits(t *testing.T) {
	st, ran := runSequenced(t, limiter.FixedWindow, "get", "get", "incr", "incr")
	ov := st.FirstOvershoot
	if ov == nil {
		t.Fatalf("no first_overshoot; overshoot %d", st.Overshoot)
	}
	if ov.InWindow == nil || *ov.InWindow != 2 || ov.Held != nil || ov.FromMs == nil || ov.ToMs == nil || ov.Missing != 0 {
		t.Fatalf("moment: %+v", ov)
	}
	a, b := byWorker(t, ov, ran[2].worker), byWorker(t, ov, ran[3].worker)
	if got, want := steps(a), []step{{"GET", "null"}, {"INCR", "1"}, {"PEXPIRE", "1"}}; !slices.Equal(got, want) {
		t.Errorf("first writer: steps %v, want %v", got, want)
	}
	if got, want := steps(b), []step{{"GET", "null"}, {"INCR", "2"}, {"PEXPIRE", "1"}}; !slices.Equal(got, want) {
		t.Errorf("second writer: steps %v, want %v", got, want)
	}
	// The first to check is raced (answered before the other's INCR was sent), whichever
	// wrote first.
	if first, second := byWorker(t, ov, ran[0].worker), byWorker(t, ov, ran[1].worker); !first.Raced || second.Raced {
		t.Errorf("raced: first to check %v, second %v; want the first only", first.Raced, second.Raced)
	}
	checkRan(t, ov, ran)
}

// A correct strategy has nothing to show: lua at the default load holds, and its
// first_overshoot is null, while naive's names the requests behind its first overshoot.
func TestFirstOvershootIsNullForAStrategyThatHolds(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 200})
	defer rdb.Close()
	for attempt := 1; ; attempt++ {
		cfg := engineConfig(t, rdb, limiter.Concurrency, limiter.Naive, limiter.Lua)
		// Held 20ms, the workers keep the set full however slowly a busy race build cycles (at
		// 2ms naive peaked below its limit in 15 runs of a full make test): naive's race then
		// shows whenever the set is at its limit.
		cfg.Hold = 20 * time.Millisecond
		cfg.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s-%d}:%s:%d", t.Name(), attempt, s, i) }
		sum, err := bench.New(cfg).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		naive, lua := strategy(t, sum, "naive"), strategy(t, sum, "lua")
		if lua.FirstOvershoot != nil {
			t.Fatalf("lua holds, yet shows %+v", lua.FirstOvershoot)
		}
		if naive.Overshoot == 0 {
			// naive races only when two checks meet: a busy machine under -race may take several
			// runs to show it.
			if attempt == 15 {
				t.Fatal("naive never overshot in 15 one-second runs")
			}
			continue
		}
		ov := naive.FirstOvershoot
		if ov == nil || ov.Held == nil || *ov.Held <= 20 {
			t.Fatalf("naive overshot (peak %d) but shows %+v", naive.Peak, ov)
		}
		if int64(len(ov.Requests))+ov.Missing+ov.Omitted != *ov.Held {
			t.Errorf("held %d, shown %d, missing %d, omitted %d", *ov.Held, len(ov.Requests), ov.Missing, ov.Omitted)
		}
		return
	}
}

// Every kind's first overshoot under naive at the default load names exactly the requests its
// evidence counted: shown, omitted from the list, or no longer kept add up to the count, and
// each shown request is a naive decision of that kind, its commands in order.
func TestFirstOvershootOfEveryKindAccountsForItsCount(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 200})
	defer rdb.Close()
	first := map[limiter.Kind]string{
		limiter.Concurrency: "ZREMRANGEBYSCORE", limiter.FixedWindow: "GET",
		limiter.SlidingWindow: "ZREMRANGEBYSCORE", limiter.TokenBucket: "HGET", limiter.SlidingWindowCounter: "GET",
	}
	for _, k := range limiter.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				cfg := engineConfig(t, rdb, k, limiter.Naive)
				if k == limiter.Concurrency {
					cfg.Hold = 20 * time.Millisecond // the set stays full on a busy race build (TestFirstOvershootIsNullForAStrategyThatHolds)
				}
				cfg.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s-%d}:%s:%d", t.Name(), attempt, s, i) }
				sum, err := bench.New(cfg).Run(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				st := strategy(t, sum, "naive")
				if st.Overshoot == 0 {
					if st.FirstOvershoot != nil {
						t.Fatalf("no overshoot, yet a trace: %+v", st.FirstOvershoot)
					}
					if attempt == 20 {
						t.Fatal("naive never overshot in 20 one-second runs") // a busy machine may need several
					}
					continue
				}
				ov := st.FirstOvershoot
				if ov == nil {
					t.Fatalf("overshoot %d without a first_overshoot", st.Overshoot)
				}
				count := ov.Held
				if k != limiter.Concurrency {
					count = ov.InWindow
				}
				if count == nil || *count <= ov.Limit {
					t.Fatalf("the moment counts %v, limit %d", count, ov.Limit)
				}
				if got := int64(len(ov.Requests)) + ov.Omitted + ov.Missing; got != *count {
					t.Errorf("counted %d in [%v, %v]ms; shown %d + omitted %d + no longer kept %d = %d", *count, *ov.FromMs, *ov.ToMs, len(ov.Requests), ov.Omitted, ov.Missing, got)
				}
				for _, r := range ov.Requests {
					if len(r.Steps) == 0 || r.Steps[0].Op != first[k] {
						t.Errorf("%s: steps %+v; a naive %s decision starts with %s", r.ID, r.Steps, k, first[k])
					}
					for i := 1; i < len(r.Steps); i++ {
						if r.Steps[i].SentUs < r.Steps[i-1].RepliedUs {
							t.Errorf("%s: %s sent before %s was answered", r.ID, r.Steps[i].Op, r.Steps[i-1].Op)
						}
					}
				}
				return
			}
		})
	}
}

// A script on the server's clock is judged by its calls' [sent, replied] intervals: its first
// overshoot names the admits certainly inside the interval that held too many, each one call
// (EVALSHA) with the script's reply, sent and answered within that interval.
func TestFirstOvershootOnTheServersClockIsTheCallsInTheInterval(t *testing.T) {
	srv := redistest.Start(t)
	spec := contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0", Clock: "server"}
	for attempt := 1; ; attempt++ {
		st := fixtureRun(t, srv, "buggy/gcra_double_rate.lua", limiter.TokenBucket, spec, 3*time.Second)
		if st.Overshoot == 0 {
			if attempt == 3 {
				t.Fatal("the double-rate GCRA never overshot in three 3s runs")
			}
			continue
		}
		ov := st.FirstOvershoot
		if ov == nil || ov.InWindow == nil || ov.FromMs == nil || ov.ToMs == nil {
			t.Fatalf("overshoot %d; first_overshoot %+v", st.Overshoot, ov)
		}
		if got := int64(len(ov.Requests)) + ov.Omitted + ov.Missing; got != *ov.InWindow {
			t.Errorf("in the interval %d; shown %d + omitted %d + no longer kept %d", *ov.InWindow, len(ov.Requests), ov.Omitted, ov.Missing)
		}
		for _, r := range ov.Requests {
			// redis_rate's reply mixes integers and strings: {1, 9, "-1", "0.27…"}, kept as text.
			if len(r.Steps) != 1 || r.Steps[0].Op != "EVALSHA" || !strings.HasPrefix(string(r.Steps[0].Reply), `"{1, `) {
				t.Fatalf("%s: steps %+v, want one EVALSHA answered {1, ...}", r.ID, r.Steps)
			}
			s := r.Steps[0]
			if float64(s.SentUs) < *ov.FromMs*1000-1 || float64(s.RepliedUs) > *ov.ToMs*1000+1 {
				t.Errorf("%s ran in [%d, %d]µs, outside the interval [%.3f, %.3f]ms", r.ID, s.SentUs, s.RepliedUs, *ov.FromMs, *ov.ToMs)
			}
		}
		return
	}
}

// A too-strict script's first false reject carries the refused call as it ran: its one
// EVALSHA, the reply that refused it (the script's own count), and times inside the call's
// [sent, replied], beside what the evidence counted.
func TestFirstFalseRejectCarriesTheRefusedCall(t *testing.T) {
	srv := redistest.Start(t)
	st := fixtureRun(t, srv, "strict/concurrency_release_leaks.lua", limiter.Concurrency, contract.Spec{}, 2*time.Second)
	f := st.FirstFalseReject
	if st.FalseRejects == 0 || f == nil {
		t.Fatalf("the leaking release never refused with room: %d false rejects", st.FalseRejects)
	}
	req := f.Request
	if req == nil {
		t.Fatalf("first false reject %+v without its request", f)
	}
	if len(req.Steps) != 1 || req.Steps[0].Op != "EVALSHA" || req.Raced {
		t.Fatalf("refused request %+v: want its one EVALSHA", req)
	}
	s := req.Steps[0]
	var reply []int64
	if err := json.Unmarshal(s.Reply, &reply); err != nil || len(reply) < 2 || reply[0] != 0 {
		t.Errorf("reply %s: want the script's refusal {0, count}", s.Reply)
	}
	if float64(s.SentUs) < f.SentMs*1000 || float64(s.RepliedUs) > f.RepliedMs*1000+1 {
		t.Errorf("the step ran in [%d, %d]µs, outside the refused call's [%.3f, %.3f]ms", s.SentUs, s.RepliedUs, f.SentMs, f.RepliedMs)
	}
	if f.HeldOrAdmitted >= f.Limit {
		t.Errorf("counted %d of %d: no room, so no false reject", f.HeldOrAdmitted, f.Limit)
	}
}
