package bench_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/trace"
)

// Clocks far apart (--skew 600ms: the workers disagree by up to 1.2s) make a bucket decide late
// calls by a clock well ahead of theirs, or find its key expired by a clock ahead (the shipped
// script's TTL leaves a second of margin; a TTL of exactly the time to refill, as redis_rate's
// EX ceil(reset_after), leaves none): the evidence forgives the refill of the lateness it judges,
// so no correct bucket is blamed, whichever clock it runs on.
func TestBucketEvidenceIsSoundUnderLargeSkew(t *testing.T) {
	srv := redistest.Start(t)
	ship, err := limiter.New(limiter.TokenBucket, limiter.Lua, srv.Client(t), limiter.Config{Limit: 20, Burst: 20, Rate: 20, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name string
		run  bench.StrategyRun
	}{
		{"lua", bench.StrategyRun{Name: "lua", Limiter: ship, EpochAligned: true}},
		{"redis_rate style on the virtual clock", customStrategy(t, srv, "gcra_server_time.lua", limiter.TokenBucket, contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0"})},
		{"Spring style on the virtual clock", customStrategy(t, srv, "token_bucket_two_keys.lua", limiter.TokenBucket, contract.Spec{Keys: "{key}.tokens {key}.timestamp", Args: `{rate_per_s} {burst} "" {cost}`})},
		{"tokens and time of refill", customStrategy(t, srv, "token_bucket_tokens.lua", limiter.TokenBucket, contract.Spec{})},
	}
	for _, r := range runs {
		run, name := r.run, r.name
		t.Run(name, func(t *testing.T) {
			cfg := defaultLoad(t, limiter.TokenBucket, run, 3500*time.Millisecond)
			cfg.Skew = 600 * time.Millisecond
			sum, err := bench.New(cfg).Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := sum.Strategies[0]
			t.Logf("admitted %d rejected %d unjudged %d peak %d", s.Admitted, s.Rejected, s.Unjudged, s.Peak)
			if s.Errors != 0 || s.Rejected == 0 {
				t.Fatalf("not a clean contended run: %d errors, %d rejected", s.Errors, s.Rejected)
			}
			if s.Overshoot != 0 {
				t.Errorf("a correct bucket under a 600ms skew: overshoot %d (peak %d, %d events)", s.Overshoot, s.Peak, s.OvershootEvent)
			}
		})
	}
}

// monotoneScript records, in order, the TIME each call was answered and the stamp it was given.
const monotoneScript = `local t = redis.call('TIME')
local log = KEYS[1] .. ':log'
redis.call('RPUSH', log, string.format('%d %s', tonumber(t[1]) * 1000000 + tonumber(t[2]), ARGV[1]))
redis.call('PEXPIRE', log, 60000)
return 1`

// timeLog hammers monotoneScript on one key with 64 workers for d and returns the TIME answered
// and the stamp of every call, in the order Redis ran them.
func timeLog(t *testing.T, srv *redistest.Server, mode *roundMode, skew time.Duration, noMark bool, d time.Duration) (answered, stamps []int64) {
	t.Helper()
	c, err := contract.Compile(contract.Spec{Keys: "{key}", Args: "{now_us}", Allowed: "reply == 1", Clock: "virtual"}, limiter.DefaultContract(limiter.SlidingWindow))
	if err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	lcfg := limiter.Config{Limit: 1_000_000, Window: time.Second, CustomSource: monotoneScript, Contract: c, NoTimeMark: noMark}
	if mode != nil && mode.direct {
		lcfg.Direct = directOf(srv)
	}
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Custom, rdb, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	run := bench.StrategyRun{Name: "custom", Limiter: lim, MonotoneTime: !noMark}
	cfg := defaultLoad(t, limiter.SlidingWindow, run, d)
	cfg.Limit, cfg.Skew, cfg.Hold, cfg.Profile = 1_000_000, skew, 0, limiter.ProfileSteady
	if mode != nil {
		cfg.Conns = mode.conns
	}
	key := cfg.KeyFor("custom", 0)
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := sum.Strategies[0]; s.Errors != 0 || s.Admitted == 0 {
		t.Fatalf("not a clean run: %d admitted, errors %v %v", s.Admitted, s.ErrorsByKind, s.ErrorSamples)
	}
	for _, e := range rdb.LRange(context.Background(), key+":log", 0, -1).Val() {
		var a, s int64
		if _, err := fmt.Sscan(e, &a, &s); err != nil {
			t.Fatalf("log entry %q: %v", e, err)
		}
		answered, stamps = append(answered, a), append(stamps, s)
	}
	return answered, stamps
}

// On the virtual clock TIME never goes back on a key, in the order Redis ran the calls, however
// their stamps were reordered on the way (by the network, or a skew between the workers): each
// call is answered the later of its stamp and the newest TIME answered before it. Without the
// key's mark, the same load answers a TIME earlier than one already answered: the reordering the
// mark undoes is there (each run is repeated until it is, and until some call was answered the
// mark rather than its own stamp). A call at a time, and in the rounds of every mode the hammer
// sends them in.
func TestVirtualClockTimeIsMonotonePerKey(t *testing.T) {
	srv := redistest.Start(t)
	modes := []*roundMode{nil}
	for i := range roundModes {
		modes = append(modes, &roundModes[i])
	}
	for _, mode := range modes {
		for _, skew := range []time.Duration{0, 200 * time.Millisecond} {
			name := "one call at a time"
			if mode != nil {
				name = "rounds " + mode.String()
			}
			t.Run(fmt.Sprintf("%s/skew=%s", name, skew), func(t *testing.T) { testMonotone(t, srv, mode, skew) })
		}
	}
}

// testMonotone is TestVirtualClockTimeIsMonotonePerKey in one mode at one skew.
func testMonotone(t *testing.T, srv *redistest.Server, mode *roundMode, skew time.Duration) {
	wentBack := false
	for attempt := 1; attempt <= 20 && !wentBack; attempt++ {
		answered, _ := timeLog(t, srv, mode, skew, true, 500*time.Millisecond)
		for i := 1; i < len(answered) && !wentBack; i++ {
			wentBack = answered[i] < answered[i-1]
		}
	}
	if !wentBack {
		t.Fatalf("without the mark TIME never went back in 20 runs: no reordering to undo")
	}
	raised := 0
	for attempt := 1; attempt <= 20 && raised == 0; attempt++ {
		answered, stamps := timeLog(t, srv, mode, skew, false, 500*time.Millisecond)
		for i := range answered {
			if answered[i] < stamps[i] {
				t.Fatalf("call %d answered %d, before its own stamp %d", i, answered[i], stamps[i])
			}
			if i > 0 && answered[i] < answered[i-1] {
				t.Fatalf("TIME went back: call %d of %d answered %d after %d", i, len(answered), answered[i], answered[i-1])
			}
			if answered[i] > stamps[i] {
				raised++
			}
		}
		t.Logf("run %d: %d calls, %d answered the mark rather than their stamp", attempt, len(answered), raised)
	}
	if raised == 0 {
		t.Fatalf("no call was answered the mark in 20 runs: the mark was never tested")
	}
}

// On the virtual clock, with TIME monotone per key, the windows' evidence stays sound and sharp:
// a sliding log that reads TIME (judged over its calls' spans of TIME and of the real clock its
// TTL runs on) and a fixed window judged epoch-aligned (an admit whose span crosses a window's
// end left out) are exact when correct, at the default skew and at 200ms, and caught when one
// request too generous per window (each run until it is caught, at most 30s).
func TestMonotoneVirtualClockWindowEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) skips it")
	}
	srv := redistest.Start(t)
	sliding := contract.Spec{Args: "{limit} {window_ms} {member}", Allowed: "reply == 1"}
	counter := contract.Spec{Keys: "{key}:{window_index}", Args: "{limit} {window_ms} {cost}", Allowed: "reply[1] <= reply[2]", Clock: "virtual"}
	cases := []struct {
		file  string
		kind  limiter.Kind
		spec  contract.Spec
		buggy bool
	}{
		{"sliding_log_server_time.lua", limiter.SlidingWindow, sliding, false},
		{"buggy/sliding_log_server_time_one_too_many.lua", limiter.SlidingWindow, sliding, true},
		{"fixed_window_counter.lua", limiter.FixedWindow, counter, false},
		{"buggy/fixed_window_off_by_one.lua", limiter.FixedWindow, contract.Spec{Clock: "virtual"}, true},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			run := customStrategy(t, srv, c.file, c.kind, c.spec)
			if !run.MonotoneTime {
				t.Fatalf("not on the virtual clock: %+v", run)
			}
			if c.buggy {
				for attempt := 1; attempt <= 6; attempt++ {
					got := fixtureRun(t, srv, c.file, c.kind, c.spec, 5*time.Second)
					t.Logf("5s run %d: overshoot %d, peak %d, admitted %d, unjudged %d", attempt, got.Overshoot, got.Peak, got.Admitted, got.Unjudged)
					if got.Errors != 0 {
						t.Fatalf("errors %v %v", got.ErrorsByKind, got.ErrorSamples)
					}
					if got.Overshoot > 0 {
						return
					}
				}
				t.Fatalf("one request too many per window not caught in 30s")
			}
			for i, skew := range []time.Duration{-1, -1, -1, 200 * time.Millisecond} {
				cfg := defaultLoad(t, c.kind, customStrategy(t, srv, c.file, c.kind, c.spec), 3*time.Second)
				if skew >= 0 {
					cfg.Skew = skew
				}
				sum, err := bench.New(cfg).Run(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				got := sum.Strategies[0]
				t.Logf("run %d (skew %s): admitted %d rejected %d unjudged %d peak %d", i+1, cfg.Skew, got.Admitted, got.Rejected, got.Unjudged, got.Peak)
				if got.Errors != 0 || got.Rejected == 0 {
					t.Fatalf("not a clean contended run: %d rejected, errors %v %v", got.Rejected, got.ErrorsByKind, got.ErrorSamples)
				}
				if got.Overshoot != 0 || got.FalseRejects != 0 {
					t.Errorf("run %d (skew %s): a correct limiter blamed: overshoot %d (peak %d), false rejects %d (first %+v)",
						i+1, cfg.Skew, got.Overshoot, got.Peak, got.FalseRejects, got.FirstFalseReject)
					logRealSpread(t, got.FirstOvershoot)
				}
			}
		})
	}
}

// logRealSpread logs how far apart in real time the calls behind an overshoot ran: from the
// first one's sending to the last one's reply.
func logRealSpread(t *testing.T, o *trace.Overshoot) {
	t.Helper()
	if o == nil {
		return
	}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range o.Requests {
		for _, st := range r.Steps {
			first, last = min(first, st.SentUs), max(last, st.RepliedUs)
		}
	}
	t.Logf("first overshoot at %.0fms: %d requests shown (%d missing), sent to replied over %s of real time",
		o.AtMs, len(o.Requests), o.Missing, time.Duration(last-first)*time.Microsecond)
	if o.FromMs != nil && o.ToMs != nil {
		t.Logf("judged together over [%.0fms, %.0fms]", *o.FromMs, *o.ToMs)
	}
}
