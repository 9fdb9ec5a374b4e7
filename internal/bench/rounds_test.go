package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/redistest"
)

// pipelines records the largest pipeline a client sent, how many single commands, and how
// many EVALSHA calls in either.
type pipelines struct {
	mu      sync.Mutex
	largest int
	singles int
	evalsha int
}

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		p.mu.Lock()
		p.singles++
		if cmd.Name() == "evalsha" {
			p.evalsha++
		}
		p.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.mu.Lock()
		p.largest = max(p.largest, len(cmds))
		for _, cmd := range cmds {
			if cmd.Name() == "evalsha" {
				p.evalsha++
			}
		}
		p.mu.Unlock()
		return next(ctx, cmds)
	}
}

// roundsConfig is the engine's default run of lua on 4 connections (--conns 4), with a client
// that records its pipelines.
func roundsConfig(t *testing.T, srv *redistest.Server, k limiter.Kind) (bench.Config, *pipelines) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 4})
	t.Cleanup(func() { rdb.Close() })
	seen := &pipelines{}
	rdb.AddHook(seen)
	cfg := engineConfig(t, rdb, k, limiter.Lua)
	cfg.Conns = 4
	return cfg, seen
}

// offByOne is each kind's script that admits one request too many.
var offByOne = map[limiter.Kind]string{
	limiter.Concurrency: "buggy/concurrency_off_by_one.lua", limiter.FixedWindow: "buggy/fixed_window_off_by_one.lua",
	limiter.SlidingWindow: "buggy/sliding_window_off_by_one.lua", limiter.TokenBucket: "buggy/token_bucket_off_by_one.lua",
	limiter.SlidingWindowCounter: "buggy/sliding_window_counter_off_by_one.lua",
}

// keepsTheEvidence runs lua (as configure builds it, with the hook on its client) beside the
// kind's off-by-one script (its calls on direct connections dialled with direct, or through
// go-redis when nil) at the hammer's default load on conns connections (0: a connection per
// worker), each run with its own keys, until the script is caught, up to 12 runs of d: under
// the race detector a concurrency script's 21st slot can take several runs to be held at once.
// The shipped script must hold in every run, be contended, and have every refusal judged and
// none wrong. It returns the last run's custom
// strategy and lua's client's hook.
func keepsTheEvidence(t *testing.T, srv *redistest.Server, k limiter.Kind, conns int, d time.Duration, direct *redis.Options,
	configure func() (bench.Config, *pipelines)) (bench.StrategySnapshot, *pipelines) {
	t.Helper()
	var lua, custom bench.StrategySnapshot
	var seen *pipelines
	for attempt := 1; attempt <= 12; attempt++ {
		var cfg bench.Config
		cfg, seen = configure()
		load := defaultLoad(t, k, customStrategyOn(t, srv, offByOne[k], k, contract.Spec{}, direct), d)
		load.Strategies = append(load.Strategies, cfg.Strategies...)
		load.Conns, load.KeyFor = conns, func(s string, i int) string { return fmt.Sprintf("t:{%s.%d}:%s:%d", t.Name(), attempt, s, i) }
		if k == limiter.Concurrency {
			// Held 20ms, 64 workers keep the set full however slowly a busy race build cycles:
			// the off-by-one then shows whenever the set is at its limit, not on a lucky peak.
			load.Hold = 20 * time.Millisecond
		}
		sum, err := bench.New(load).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		custom, lua = strategy(t, sum, "custom"), strategy(t, sum, "lua")
		if lua.Overshoot != 0 {
			t.Errorf("attempt %d: the shipped script overshot by %d (peak %d)", attempt, lua.Overshoot, lua.Peak)
		}
		if custom.Overshoot > 0 {
			break
		}
		t.Logf("attempt %d: the off-by-one script not caught (peak %d, %d admitted)", attempt, custom.Peak, custom.Admitted)
	}
	if custom.Overshoot == 0 {
		t.Fatalf("the off-by-one script was not caught in 12 runs of %s (peak %d)", d, custom.Peak)
	}
	if !lua.Contended || lua.Rejected == 0 || lua.Errors != 0 {
		t.Errorf("lua: contended %v, %d rejected, %d errors %v: an uncontended run proves nothing", lua.Contended, lua.Rejected, lua.Errors, lua.ErrorSamples)
	}
	if lua.FalseRejects != 0 || lua.NoRefusalJudged {
		t.Errorf("lua: %d false rejects (none judged: %v); want every refusal judged and none wrong", lua.FalseRejects, lua.NoRefusalJudged)
	}
	return custom, seen
}

// With --conns the evidence is the same as without: the shipped script holds the limit, under
// contention, for every kind, and a script one request too generous is caught, at the hammer's
// default load (bursty, skewed), while the calls go out as pipelines of many calls.
func TestRoundsKeepTheEvidence(t *testing.T) {
	srv := redistest.Start(t)
	for _, k := range limiter.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			// Runs of 3s: the power tests' 19 in 20 are for 5s.
			_, seen := keepsTheEvidence(t, srv, k, 4, 3*time.Second, nil, func() (bench.Config, *pipelines) { return roundsConfig(t, srv, k) })
			if seen.largest < 2 {
				t.Errorf("the largest pipeline carried %d calls: the workers' calls did not go out in rounds", seen.largest)
			}
		})
	}
}

func TestRoundsBoundRequestsExactly(t *testing.T) {
	cfg, _ := roundsConfig(t, redistest.Start(t), limiter.SlidingWindow)
	cfg.Duration, cfg.Requests = 0, 500
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := sum.Strategies[0]; s.Attempts != 500 {
		t.Errorf("%s on 4 connections made %d decisions, want exactly 500", s.Name, s.Attempts)
	}
}

// A request held when the run stops is released all the same: nothing is left in the set.
func TestRoundsReleaseWhatIsHeldAtTheStop(t *testing.T) {
	srv := redistest.Start(t)
	cfg, _ := roundsConfig(t, srv, limiter.Concurrency)
	cfg.Duration, cfg.Hold = 500*time.Millisecond, 100*time.Millisecond
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lua := sum.Strategies[0]
	if lua.Admitted == 0 || lua.ReleaseErrors != 0 || lua.Overshoot != 0 {
		t.Fatalf("lua: %d admitted, %d release errors, overshoot %d", lua.Admitted, lua.ReleaseErrors, lua.Overshoot)
	}
	if n, err := srv.Client(t).ZCard(context.Background(), cfg.KeyFor("lua", 0)).Result(); err != nil || n != 0 {
		t.Fatalf("after the run the set holds %d members (%v), want every admitted request released", n, err)
	}
	// 64 workers holding 100ms each in a run of 500ms: every hold lasted, so at most about
	// 20 admits per 100ms got through.
	if lua.Admitted > 20*7 {
		t.Errorf("%d admitted in 500ms at a limit of 20 held 100ms each: the holds did not hold", lua.Admitted)
	}
}

// roundMode is how a strategy's rounds reach Redis: through go-redis's pipelines or on
// direct connections (limiter.Config.Direct), on conns connections (0: one per worker).
type roundMode struct {
	direct bool
	conns  int
}

func (m roundMode) String() string { return fmt.Sprintf("direct=%v/conns=%d", m.direct, m.conns) }

// roundModes are the rounds' modes the hammer runs: --conns 4 through go-redis (a cluster, a
// master through Sentinels, --no-direct), and on a single node by default and with --conns 4.
var roundModes = []roundMode{{false, 4}, {true, 0}, {true, 4}}

// A round that carries releases is sent in full even when the run ends as it starts: its
// releases never fail with the run's end, and nothing is left in the set. Holds of 2ms keep a
// release due in almost every round, so over 20 runs of 100ms some round begins as the run ends
// (before the fix, 1 run in 20 under -race left members behind). Through go-redis with --conns
// 4 and on direct connections, by default and with --conns 4.
func TestRoundsReleaseEvenAsTheRunEnds(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	for _, c := range roundModes {
		t.Run(c.String(), func(t *testing.T) {
			for run, judged := 0, 0; judged < 20; run++ {
				if run == 200 {
					t.Fatalf("only %d of 200 runs of 100ms admitted anything", judged)
				}
				var cfg bench.Config
				if c.direct {
					cfg, _ = directConfig(t, srv, limiter.Concurrency, c.conns)
				} else {
					cfg, _ = roundsConfig(t, srv, limiter.Concurrency)
				}
				cfg.Duration = 100 * time.Millisecond
				cfg.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s.%d}:%s:%d", t.Name(), run, s, i) }
				sum, err := bench.New(cfg).Run(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				lua := sum.Strategies[0]
				if lua.Admitted == 0 && lua.ReleaseErrors == 0 {
					continue // a busy machine ran no worker in 100ms: nothing to release, run again
				}
				judged++
				if lua.ReleaseErrors != 0 {
					t.Fatalf("run %d: %d admitted, %d release errors %v", run, lua.Admitted, lua.ReleaseErrors, lua.ErrorSamples)
				}
				if n, err := admin.ZCard(context.Background(), cfg.KeyFor("lua", 0)).Result(); err != nil || n != 0 {
					t.Fatalf("run %d: after the run the set holds %d members (%v), want every admitted request released", run, n, err)
				}
			}
		})
	}
}

func TestRoundsPauseAndResume(t *testing.T) {
	cfg, _ := roundsConfig(t, redistest.Start(t), limiter.Concurrency)
	cfg.Duration = 600 * time.Millisecond
	e := bench.New(cfg)
	e.SetPaused(true)
	snaps := make(chan bench.Snapshot, 100)
	done := make(chan bench.Summary)
	go func() { s, _ := e.Run(context.Background(), snaps); done <- s }()
	time.Sleep(300 * time.Millisecond)
	for len(snaps) > 0 {
		<-snaps
	}
	if after := <-snaps; after.Strategies[0].Attempts != 0 {
		t.Fatalf("%d decisions while paused, want none", after.Strategies[0].Attempts)
	}
	e.SetPaused(false)
	for range snaps {
	}
	if sum := <-done; sum.Strategies[0].Attempts == 0 {
		t.Fatal("no decisions after resume")
	}
}

// An open loop on rounds keeps its schedule, as without --conns: a schedule of 2000 requests at
// 1000/s is sent whole and once (every scheduled start taken, none added), never ahead of it (the
// last start is due 1.999s in, so the run cannot end sooner), and kept up with (the run ends
// within a quarter of the schedule past its last start). Only the last needs the machine's
// throughput: a run that fell behind is repeated, up to 5 times, as a busy machine falls behind
// on its own.
func TestRoundsOpenLoopKeepsItsRate(t *testing.T) {
	srv := redistest.Start(t)
	const rate, requests, attempts = 1000, 2000, 5
	due := time.Duration(requests-1) * time.Second / rate // the last request's scheduled start
	for attempt := 1; ; attempt++ {
		cfg, _ := roundsConfig(t, srv, limiter.FixedWindow)
		cfg.OpenRate, cfg.Requests, cfg.Duration, cfg.Hold = rate, requests, time.Minute, 0
		sum, err := bench.New(cfg).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		st := sum.Strategies[0]
		t.Logf("run %d: %d decisions (%d errors) in %s", attempt, st.Attempts, st.Errors, sum.Duration)
		if st.Attempts != requests {
			t.Fatalf("%d decisions for a schedule of %d at %d/s on 4 connections", st.Attempts, requests, rate)
		}
		if sum.Duration < due {
			t.Fatalf("the run ended %s in, before its last scheduled start at %s: ahead of the schedule", sum.Duration, due)
		}
		if sum.Duration <= due+due/4 {
			return
		}
		if attempt == attempts {
			t.Fatalf("%d runs each ended more than a quarter of the schedule past its last start (the last at %s): the rounds fall behind %d/s", attempts, sum.Duration, rate)
		}
	}
}

// On a cluster a round's calls on keys of every master go out as one pipeline per master
// (go-redis's), each answered from its own: the evidence holds and nothing errors.
func TestRoundsOnACluster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	rdb := cluster.Client(t)
	cfg := engineConfig(t, rdb, limiter.SlidingWindow, limiter.Lua)
	cfg.Conns, cfg.KeyCount = 4, 6
	// Each key its own hash tag, so the six spread over the masters.
	cfg.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s:%s:%d}", t.Name(), s, i) }
	slots := map[int64]bool{}
	for i := 0; i < cfg.KeyCount; i++ {
		slot, err := rdb.ClusterKeySlot(context.Background(), cfg.KeyFor("lua", i)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[min(slot/(16384/3), 2)] = true // master i of the test cluster's 3 holds the i-th third
	}
	if len(slots) < 2 {
		t.Fatalf("the keys fall on %d master(s); the test needs them on several", len(slots))
	}
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	heldOnACluster(t, sum)
}

// heldOnACluster fails t unless the run's one strategy (lua, on 4 connections) held its limit
// under contention without an error.
func heldOnACluster(t *testing.T, sum bench.Summary) {
	t.Helper()
	lua := sum.Strategies[0]
	if lua.Errors != 0 || lua.Overshoot != 0 || lua.Rejected == 0 {
		t.Fatalf("lua on a cluster, 4 connections: %d errors %v, overshoot %d, %d rejected; want none, none and contended",
			lua.Errors, lua.ErrorSamples, lua.Overshoot, lua.Rejected)
	}
}

// byMaster is a cluster's shared rueidis client that records, for each DoMulti, the masters
// its EVALSHA calls went to, and how many calls each key had.
type byMaster struct {
	*rueidisCluster
	masterOf func(slot uint16) string
	mu       sync.Mutex
	rounds   int
	spread   []string // a round whose calls went to several masters: their addresses
	perKey   map[string]int
}

// rueidisCluster is what the rounds ask of a cluster's rueidis client, its mode among it.
type rueidisCluster struct {
	redisconn.SharedClient
	mode rueidis.ClientMode
}

func (c *rueidisCluster) Mode() rueidis.ClientMode { return c.mode }

func (b *byMaster) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	masters := map[string]bool{}
	b.mu.Lock()
	for i := range multi {
		if c := &multi[i]; c.Commands()[0] == "EVALSHA" {
			masters[b.masterOf(c.Slot())] = true
			b.perKey[c.Commands()[3]]++ // EVALSHA sha numkeys key...
		}
	}
	if len(masters) > 0 {
		b.rounds++
	}
	if len(masters) > 1 {
		b.spread = append(b.spread, fmt.Sprint(slices.Sorted(maps.Keys(masters))))
	}
	b.mu.Unlock()
	return b.rueidisCluster.DoMulti(ctx, multi...)
}

// On a cluster through rueidis (the hammer's path there) each round's acquires go to one
// master, the connections' rounds taking the masters in turn, so that a round costs one write
// and one read however many masters there are; every key is still called about as often as
// the others (each master's share of the rounds is its share of the keys), and the evidence
// holds: the shipped script is contended and never overshoots.
func TestRoundsOnAClusterSendEachRoundToOneMaster(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	cc := cluster.Client(t)
	ctx := context.Background()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	shared, timeout, err := redisconn.Shared(cc)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	seen := &byMaster{rueidisCluster: &rueidisCluster{shared, rueidis.ClientModeCluster}, perKey: map[string]int{}, masterOf: func(slot uint16) string {
		for _, s := range slots {
			if int(slot) >= s.Start && int(slot) <= s.End {
				return s.Nodes[0].Addr
			}
		}
		return "none"
	}}
	cfg := engineConfig(t, cc, limiter.SlidingWindow)
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Lua, cc,
		limiter.Config{Limit: 20, Window: time.Second, Shared: seen, SharedTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Strategies = []bench.StrategyRun{{Name: "lua", Limiter: lim}}
	cfg.Conns, cfg.KeyCount = 4, 12
	id := time.Now().UnixNano()
	// Each key its own hash tag, so the twelve spread over the masters (several of them on one
	// slot only count as one master's keys).
	cfg.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s.%d:%s:%d}", t.Name(), id, s, i) }
	masters := map[string]bool{}
	for i := range cfg.KeyCount {
		slot, err := cc.ClusterKeySlot(ctx, cfg.KeyFor("lua", i)).Result()
		if err != nil {
			t.Fatal(err)
		}
		masters[seen.masterOf(uint16(slot))] = true
	}
	if len(masters) < 2 {
		t.Fatalf("the %d keys fall on %d master(s); the test needs them on several to show a round goes to one", cfg.KeyCount, len(masters))
	}
	sum, err := bench.New(cfg).Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	heldOnACluster(t, sum)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.spread) > 0 {
		t.Errorf("%d of %d rounds went to several masters, the first to %s; want each to one", len(seen.spread), seen.rounds, seen.spread[0])
	}
	low, high := math.MaxInt, 0
	for i := range cfg.KeyCount {
		n := seen.perKey[cfg.KeyFor("lua", i)]
		low, high = min(low, n), max(high, n)
	}
	// About as often: each key's calls are its workers' in their connections' rounds on its
	// master, and connections keep about the same pace, but a 2-core machine is not fair.
	if len(seen.perKey) != cfg.KeyCount || low == 0 || low*4 < high {
		t.Errorf("calls per key from %d to %d over %d keys on %d masters; want all %d keys called about as often",
			low, high, len(seen.perKey), len(masters), cfg.KeyCount)
	}
}

// Refusals are judged in rounds as alone: a script that refuses with room (its released
// requests never leave the set) is caught, the shipped one is not blamed (TestRoundsKeepTheEvidence).
func TestRoundsCatchARefusalWithRoom(t *testing.T) {
	srv := redistest.Start(t)
	var custom bench.StrategySnapshot
	for attempt := 1; attempt <= 5; attempt++ {
		load := defaultLoad(t, limiter.Concurrency, customStrategy(t, srv, "strict/concurrency_release_leaks.lua", limiter.Concurrency, contract.Spec{}), 2*time.Second)
		load.Conns = 4
		load.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s.%d}:%s:%d", t.Name(), attempt, s, i) }
		sum, err := bench.New(load).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if custom = sum.Strategies[0]; custom.FalseRejects > 0 {
			checkRefusedCall(t, custom.FirstFalseReject)
			return
		}
		t.Logf("attempt %d: no false reject yet (%d rejected)", attempt, custom.Rejected)
	}
	t.Errorf("a limiter whose releases leak was not caught refusing with room in 5 runs of 2s on 4 connections (%d rejected)", custom.Rejected)
}

// Traces are recorded in rounds as alone: an off-by-one script caught on 4 connections names
// the requests behind its first overshoot, each its one EVALSHA with the script's admitting
// reply, stamped with its round's [sent, replied] (a pipeline's replies are read together), and
// they account for the count the evidence proved.
func TestRoundsTraceTheFirstOvershoot(t *testing.T) {
	srv := redistest.Start(t)
	for attempt := 1; ; attempt++ {
		load := defaultLoad(t, limiter.Concurrency, customStrategy(t, srv, "buggy/concurrency_off_by_one.lua", limiter.Concurrency, contract.Spec{}), 3*time.Second)
		load.Conns = 4
		load.KeyFor = func(s string, i int) string { return fmt.Sprintf("t:{%s.%d}:%s:%d", t.Name(), attempt, s, i) }
		sum, err := bench.New(load).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		st := sum.Strategies[0]
		if st.Overshoot == 0 {
			if st.FirstOvershoot != nil {
				t.Fatalf("no overshoot, yet a trace: %+v", st.FirstOvershoot)
			}
			if attempt == 5 {
				t.Fatal("the off-by-one script was not caught in 5 runs of 3s on 4 connections")
			}
			continue
		}
		ov := st.FirstOvershoot
		if ov == nil || ov.Held == nil || *ov.Held <= ov.Limit || len(ov.Requests) == 0 {
			t.Fatalf("overshoot %d (peak %d); first_overshoot %+v", st.Overshoot, st.Peak, ov)
		}
		if got := int64(len(ov.Requests)) + ov.Omitted + ov.Missing; got != *ov.Held {
			t.Errorf("held %d; shown %d + omitted %d + no longer kept %d = %d", *ov.Held, len(ov.Requests), ov.Omitted, ov.Missing, got)
		}
		for _, r := range ov.Requests {
			if len(r.Steps) != 1 || r.Steps[0].Op != "EVALSHA" {
				t.Fatalf("%s: steps %+v, want its one EVALSHA", r.ID, r.Steps)
			}
			s := r.Steps[0]
			var reply []int64
			if err := json.Unmarshal(s.Reply, &reply); err != nil || len(reply) < 2 || reply[0] != 1 {
				t.Errorf("%s: reply %s, want the script's admit {1, count, ...}", r.ID, s.Reply)
			}
			if s.SentUs <= 0 || s.SentUs > s.RepliedUs || s.RepliedUs > (sum.Duration+time.Second).Microseconds() {
				t.Errorf("%s: sent %dµs, replied %dµs in a run of %v", r.ID, s.SentUs, s.RepliedUs, sum.Duration)
			}
		}
		return
	}
}

// checkRefusedCall asserts that a first false reject made in rounds carries its refused call:
// one EVALSHA, the script's refusal {0, count} as its reply, stamped inside the call's round.
func checkRefusedCall(t *testing.T, f *refusal.FalseReject) {
	t.Helper()
	if f == nil || f.Request == nil {
		t.Fatalf("first false reject %+v without its request", f)
	}
	req := f.Request
	if len(req.Steps) != 1 || req.Steps[0].Op != "EVALSHA" {
		t.Fatalf("refused request %+v: want its one EVALSHA", req)
	}
	s := req.Steps[0]
	var reply []int64
	if err := json.Unmarshal(s.Reply, &reply); err != nil || len(reply) < 2 || reply[0] != 0 {
		t.Errorf("reply %s: want the script's refusal {0, count}", s.Reply)
	}
	if float64(s.SentUs) < f.SentMs*1000-1 || float64(s.RepliedUs) > f.RepliedMs*1000+1 {
		t.Errorf("the step ran in [%d, %d]µs, outside the refused call's [%.3f, %.3f]ms", s.SentUs, s.RepliedUs, f.SentMs, f.RepliedMs)
	}
}

// scriptsSeen is a cluster's rueidis client that counts the script calls sent through it.
type scriptsSeen struct {
	*rueidisCluster
	scripts atomic.Int64
}

func (s *scriptsSeen) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for i := range multi {
		if multi[i].Commands()[0] == "EVALSHA" {
			s.scripts.Add(1)
		}
	}
	return s.rueidisCluster.DoMulti(ctx, multi...)
}

// With --conns on a cluster the rounds go to each master on connections of their own
// (limiter.Config.Nodes), none through rueidis, and the evidence is what it is on every other
// path: the shipped script contended and exact, an off-by-one one caught overshooting.
func TestRoundsOnAClusterOnEachMastersOwnConnection(t *testing.T) {
	cc := redistest.SharedCluster(t).Client(t)
	shared, timeout, err := redisconn.Shared(cc)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	nodes, ok := redisconn.NodeOptions(cc)
	if !ok {
		t.Fatal("no node options for a cluster client")
	}
	seen := &scriptsSeen{rueidisCluster: &rueidisCluster{shared, rueidis.ClientModeCluster}}
	transport := limiter.Config{Shared: seen, SharedTimeout: timeout, Nodes: nodes}
	id := time.Now().UnixNano()
	keyFor := func(s string, i int) string { return fmt.Sprintf("t:{%s.%d:%s:%d}", t.Name(), id, s, i) }

	cfg := engineConfig(t, cc, limiter.SlidingWindow)
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Lua, cc,
		limiter.Config{Limit: 20, Window: time.Second, Shared: seen, SharedTimeout: timeout, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Strategies = []bench.StrategyRun{{Name: "lua", Limiter: lim}}
	cfg.Conns, cfg.KeyCount, cfg.KeyFor = 4, 12, keyFor
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	heldOnACluster(t, sum)
	if n := seen.scripts.Load(); n != 0 {
		t.Errorf("%d script calls went through rueidis; want every one on the masters' own connections", n)
	}

	for attempt := 1; ; attempt++ {
		load := defaultLoad(t, limiter.Concurrency, customStrategyVia(t, cc, "buggy/concurrency_off_by_one.lua", limiter.Concurrency, contract.Spec{}, transport), 3*time.Second)
		load.Conns, load.KeyFor = 4, func(s string, i int) string { return keyFor(fmt.Sprintf("%s.%d", s, attempt), i) }
		sum, err := bench.New(load).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Strategies[0].Overshoot > 0 {
			return
		}
		if attempt == 5 {
			t.Fatalf("an off-by-one script on each master's own connection was not caught in %d runs of 3s", attempt)
		}
	}
}
