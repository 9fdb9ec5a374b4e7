package slidingcounter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The kind's shipped script, and the fixtures in upstash's calling style under testdata/limiters.
const (
	shippedScript = "../../../../scripts/sliding_window_counter.lua"
	fixtures      = "../../../../testdata/limiters"
)

func readScript(t *testing.T, path string) *redis.Script {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range lint.Lint(filepath.Base(path), src) {
		t.Errorf("%s", d)
	}
	return redis.NewScript(string(src))
}

// windowKeys are a key's counters of the window nowMs falls in and the one before, by the epoch.
func windowKeys(key string, nowMs, windowMs int64) []string {
	i := floorDiv(nowMs, windowMs)
	return []string{fmt.Sprintf("%s:%d", key, i), fmt.Sprintf("%s:%d", key, i-1)}
}

func TestTheShippedScriptAdmitsTheLimitThenWhatThePreviousWindowsWeightLeaves(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Shared(t).Client(t)
	script := readScript(t, shippedScript)
	const limit, windowMs = 10, 60_000
	base := (time.Now().UnixMilli()/windowMs + 10) * windowMs // a window's start, in the future
	call := func(key string, nowMs int64) (allowed, estimate int64) {
		t.Helper()
		v, err := script.Run(ctx, rdb, windowKeys(key, nowMs, windowMs), limit, nowMs, windowMs).Int64Slice()
		if err != nil || len(v) != 2 {
			t.Fatalf("reply %v, %v; want {allowed, estimate}", v, err)
		}
		return v[0], v[1]
	}
	key := "swc:{" + t.Name() + "}"
	for i := int64(1); i <= limit; i++ {
		if a, e := call(key, base+1000); a != 1 || e != i {
			t.Fatalf("call %d in a fresh window: {%d, %d}; want {1, %d}", i, a, e, i)
		}
	}
	if a, e := call(key, base+2000); a != 0 || e != limit {
		t.Fatalf("the call past the limit: {%d, %d}; want {0, %d}", a, e, limit)
	}
	// 55% into the next window 10·0.45 = 4.5 of the previous count, floored to 4: 6 more.
	next := base + windowMs + windowMs*55/100
	for i := int64(1); i <= 6; i++ {
		if a, e := call(key, next); a != 1 || e != 4+i {
			t.Fatalf("call %d at 0.55: {%d, %d}; want {1, %d}", i, a, e, 4+i)
		}
	}
	if a, e := call(key, next); a != 0 || e != limit {
		t.Fatalf("the 7th call at 0.55: {%d, %d}; want {0, %d}", a, e, limit)
	}
	// Every counter written lives two windows; a refusal writes nothing.
	for _, k := range windowKeys(key, next, windowMs) {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= windowMs*time.Millisecond || ttl > 2*windowMs*time.Millisecond {
			t.Errorf("%s: PTTL %v; want within two windows and over one", k, ttl)
		}
	}
	if n, _ := rdb.Get(ctx, windowKeys(key, next, windowMs)[0]).Int64(); n != 6 {
		t.Errorf("the window's counter after 6 admits and a refusal: %d; want 6", n)
	}
}

func TestTheShippedScriptDecidesAsTheFlooredMemberAndIsHeld(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Shared(t).Client(t)
	script := readScript(t, shippedScript)
	const limit, windowMs = 10, 1000
	rng := rand.New(rand.NewPCG(7, 53))
	r := newRun(rng, windowMs*1000, limit, Stamps, 12)
	key := "swc:{" + t.Name() + "}"
	counts := map[int64]int64{}
	var ds []decision
	for _, sent := range r.sends {
		nowMs := sent / 1000
		v, err := script.Run(ctx, rdb, windowKeys(key, nowMs, windowMs), limit, nowMs, windowMs).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		// The floored member, in whole numbers.
		k := floorDiv(nowMs, windowMs)
		weighted := counts[k-1] * (windowMs - (nowMs - k*windowMs)) / windowMs
		want := counts[k]+weighted < limit
		if (v[0] == 1) != want {
			t.Fatalf("at %dms with %d and %d counted: allowed %d; want %v", nowMs, counts[k], counts[k-1], v[0], want)
		}
		o := evidence.Refused
		if want {
			counts[k]++
			o = evidence.Admitted
		}
		ds = append(ds, stamped(nowMs*1000, 0, o))
	}
	s := Spec{Limit: limit, Window: time.Second, Align: EpochAligned, Grain: time.Millisecond}
	if res := check(s, ds); res.Proven || res.Peak != limit {
		t.Errorf("its own decisions: %+v; want held, at a peak of the limit", res)
	}
	if fr := falseRejects(s, ds); len(fr) > 0 {
		t.Errorf("its own decisions: %d false rejects, the first: %s", len(fr), fr[0].How(0))
	}
}

// driveFixture calls a fixture in upstash's calling style once per send of r, one call at a time
// (each passed its send's time in ms), and returns its decisions.
func driveFixture(t *testing.T, rdb *redis.Client, script *redis.Script, key string, r run) []decision {
	t.Helper()
	ctx := context.Background()
	windowMs := r.windowUs / 1000
	var ds []decision
	for _, sent := range r.sends {
		nowMs := sent / 1000
		keys := append(windowKeys(key, nowMs, windowMs), "")
		v, err := script.Run(ctx, rdb, keys, r.limit, nowMs, windowMs, 1).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		o := evidence.Refused
		if v[0] >= 0 { // upstash's success: remaining >= 0
			o = evidence.Admitted
		}
		ds = append(ds, stamped(nowMs*1000, 0, o))
	}
	return ds
}

func TestUpstashStyleFixturesAreJudgedByWhatTheyDo(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	s := Spec{Limit: 10, Window: time.Second, Align: EpochAligned, Grain: time.Millisecond}
	for _, c := range []struct {
		file                    string
		overshoot, falseRejects bool
	}{
		{"sliding_two_counters.lua", false, false},
		{"buggy/sliding_two_counters_ignores_previous.lua", true, false},
		{"buggy/sliding_two_counters_admits_at_limit.lua", true, false},
		{"buggy/sliding_two_counters_elapsed_weight.lua", true, false},
		{"strict/sliding_two_counters_counts_refused.lua", false, true},
	} {
		t.Run(c.file, func(t *testing.T) {
			script := readScript(t, filepath.Join(fixtures, c.file))
			r := newRun(rand.New(rand.NewPCG(3, 53)), s.windowUs(), s.Limit, Stamps, 12)
			ds := driveFixture(t, rdb, script, "swc:{"+t.Name()+"}", r)
			res, fr := check(s, ds), falseRejects(s, ds)
			if res.Proven != c.overshoot || (len(fr) > 0) != c.falseRejects {
				t.Errorf("overshoot proven %v (%+v), %d false rejects; want overshoot %v, false rejects %v", res.Proven, res, len(fr), c.overshoot, c.falseRejects)
			}
			if res.First != nil {
				t.Logf("%s", res.First.How(r.sends[0]))
			}
			if len(fr) > 0 {
				t.Logf("%s", fr[0].How(r.sends[0]))
			}
		})
	}
}

func TestTheExpiresEarlyFixtureKeepsItsCounterOneWindow(t *testing.T) {
	// The one bug real time shows: a test that passes its own now cannot wait for TTLs, so its
	// counter's life is read instead (the hammer's default load catches it: the simulated member).
	ctx := context.Background()
	rdb := redistest.Shared(t).Client(t)
	const windowMs = 60_000
	nowMs := time.Now().UnixMilli()
	for file, most := range map[string]int64{
		"sliding_two_counters.lua":                     2*windowMs + 1000,
		"buggy/sliding_two_counters_expires_early.lua": windowMs,
	} {
		key := "swc:{" + t.Name() + "}:" + file
		keys := append(windowKeys(key, nowMs, windowMs), "")
		if err := readScript(t, filepath.Join(fixtures, file)).Run(ctx, rdb, keys, 10, nowMs, windowMs, 1).Err(); err != nil {
			t.Fatal(err)
		}
		ttl := rdb.PTTL(ctx, keys[0]).Val().Milliseconds()
		if ttl > most || ttl < most-1000 || (ttl <= windowMs+1000) != (most == windowMs) {
			t.Errorf("%s: its counter lives %dms; want about %dms", file, ttl, most)
		}
	}
}
