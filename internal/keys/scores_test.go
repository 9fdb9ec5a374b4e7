package keys

import (
	"context"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestSampleRanks(t *testing.T) {
	cases := map[int64][]int64{
		0: nil, 1: {0}, 2: {0, 1}, 3: {0, 1, 2}, 5: {0, 1, 2, 3, 4}, 6: {0, 1, 3, 4, 5}, 1000: {0, 250, 500, 750, 999},
	}
	for size, want := range cases {
		if got := sampleRanks(size); !reflect.DeepEqual(got, want) {
			t.Errorf("sampleRanks(%d) = %v, want %v", size, got, want)
		}
	}
}

func TestReadScores(t *testing.T) {
	ms := func(d time.Duration) float64 { return UnitMillis.Score(fixedNow.Add(d)) }
	s := func(d time.Duration) float64 { return UnitSeconds.Score(fixedNow.Add(d)) }
	cases := []struct {
		name    string
		samples []float64
		unit    ScoreUnit
		mode    ScoreMode
		want    scoreReading
		ok      bool
	}{
		{"start times", []float64{ms(-time.Hour), ms(-time.Minute), ms(-time.Second)}, UnitAuto, ScoresAuto, scoreReading{UnitMillis, ScoresStart, true}, true},
		{"a clock a little ahead is no deadline", []float64{ms(-time.Minute), ms(500 * time.Millisecond), ms(900 * time.Millisecond)}, UnitAuto, ScoresAuto,
			scoreReading{UnitMillis, ScoresStart, true}, true},
		{"most ahead: deadlines", []float64{s(-time.Hour), s(time.Minute), s(3 * time.Hour)}, UnitAuto, ScoresAuto, scoreReading{UnitSeconds, ScoresDeadline, true}, true},
		{"half ahead is not most", []float64{s(-time.Hour), s(-time.Minute), s(time.Minute), s(time.Hour)}, UnitAuto, ScoresAuto, scoreReading{UnitSeconds, ScoresStart, true}, true},
		// Deadlines days ahead: times only when they may be deadlines.
		{"deadlines 3 days ahead", []float64{s(72 * time.Hour), s(73 * time.Hour)}, UnitAuto, ScoresDeadline, scoreReading{UnitSeconds, ScoresDeadline, false}, true},
		{"start times cannot be 3 days ahead", []float64{s(72 * time.Hour), s(73 * time.Hour)}, UnitAuto, ScoresStart, scoreReading{}, false},
		// Old members in seconds, new ones in milliseconds: no one unit.
		{"mixed units", []float64{s(-time.Hour), ms(-time.Minute), ms(-time.Second)}, UnitAuto, ScoresAuto, scoreReading{}, false},
		{"ranks", []float64{1, 2, 3}, UnitAuto, ScoresAuto, scoreReading{}, false},
		{"explicit unit is trusted", []float64{1, 2, 3}, UnitSeconds, ScoresStart, scoreReading{UnitSeconds, ScoresStart, false}, true},
	}
	for _, c := range cases {
		got, ok := readScores(c.samples, fixedNow, c.unit, c.mode)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if !mixedUnits([]float64{s(-time.Hour), ms(-time.Second)}, fixedNow) || mixedUnits([]float64{1, ms(-time.Second)}, fixedNow) {
		t.Errorf("mixedUnits: seconds and milliseconds mix; a rank and a time do not (not times)")
	}
}

func TestTATTime(t *testing.T) {
	epoch2017 := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
	full := fixedNow.Add(1500 * time.Millisecond)
	cases := []struct {
		name string
		v    float64
		ok   bool
	}{
		{"redis_rate: seconds since 2017", full.Sub(epoch2017).Seconds(), true},
		{"unix ms", float64(full.UnixMilli()), true},
		{"unix s", float64(full.UnixMicro()) / 1e6, true},
		{"unix ns", float64(full.UnixNano()), true},
		{"a price", 12.5, false}, // 2017-01-01 plus 12.5s is no TAT in 2025
		{"a TAT a year old", float64(fixedNow.Add(-365 * 24 * time.Hour).UnixMilli()), false},
		{"negative", -3, false},
	}
	for _, c := range cases {
		at, ok := tatTime(c.v, fixedNow)
		if ok != c.ok || ok && (at.Sub(full) > time.Millisecond || full.Sub(at) > time.Millisecond) {
			t.Errorf("%s: tatTime(%v) = %v %v, want %v %v", c.name, c.v, at, ok, full, c.ok)
		}
	}
	if !tatMatchesTTL(full, 2*time.Second, fixedNow) || tatMatchesTTL(full, time.Hour, fixedNow) || tatMatchesTTL(full, -1, fixedNow) {
		t.Errorf("tatMatchesTTL: an expiry at the TAT matches, an hour later or none does not")
	}
}

func TestInferWindow(t *testing.T) {
	for _, w := range []time.Duration{time.Second, 10 * time.Second, time.Minute, 90 * time.Second, time.Hour, 24 * time.Hour} {
		now := fixedNow.Add(12345 * time.Millisecond)
		idx := now.UnixMilli() / w.Milliseconds()
		for behind := int64(0); behind <= 2; behind++ {
			if got, ok := inferWindow(idx-behind, now); !ok || got != w {
				t.Errorf("window %s, index %d behind: inferred %s %v", w, behind, got, ok)
			}
		}
	}
	if _, ok := inferWindow(fixedNow.UnixMilli()*2, fixedNow); ok {
		t.Errorf("an index beyond now in ms is no window index")
	}
}

func TestWindowKey(t *testing.T) {
	for key, want := range map[string]int64{"a:12": 12, "@upstash/ratelimit:u:179607097": 179607097, "a:012": 0, "a:": 0, "12": 0, "a:-3": 0, "a:x": 0} {
		_, n, ok := windowKey(key)
		if ok != (want > 0) || n != want && ok {
			t.Errorf("windowKey(%q) = %d %v, want %d", key, n, ok, want)
		}
	}
}

// Counters <id>:<n> of a fixed window whose predecessor expires within the current window stay
// counters; those whose predecessor outlives it (a sliding window) are a pair with an estimate.
func TestCounterPairsAgainstFixedWindowOverlap(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	w := time.Minute
	now := fixedNow.Add(15 * time.Second) // a quarter into the window
	cur := now.UnixMilli() / w.Milliseconds()
	write := func(id string, prevTTL time.Duration) {
		must(t, rdb.Set(ctx, windowKeyAt(id, cur-1), 8, prevTTL).Err())
		must(t, rdb.Set(ctx, windowKeyAt(id, cur), 3, 2*w+time.Second).Err())
	}
	write("fixed:u1", 30*time.Second) // dies before the window ends at now + 45s
	write("sliding:u1", w+46*time.Second)
	write("old:u1", 2*w)
	must(t, rdb.Set(ctx, windowKeyAt("old:u1", cur-2), 4, 50*time.Second).Err())
	must(t, rdb.Set(ctx, windowKeyAt("alone:u1", cur), 4, w).Err())
	// Per-user counters whose ids are consecutive: no TTL, or one far longer than the window.
	must(t, rdb.Set(ctx, "users:1001", 4, 0).Err())
	must(t, rdb.Set(ctx, "users:1002", 4, 0).Err())
	write("long:u1", 24*time.Hour)
	clock := LocalClock(func() time.Time { return now })
	sel, err := Select(ctx, rdb, []string{"fixed:u1:*", "sliding:u1:*", "old:u1:*", "alone:u1:*", "users:*", "long:u1:*"}, SelectOptions{})
	must(t, err)
	in, err := Inspect(ctx, rdb, sel, InspectOptions{Clock: clock, Limit: 8, HasLimit: true})
	must(t, err)
	got := map[string]string{}
	for _, k := range in.Keys {
		est := "-"
		if k.Estimate != nil {
			est = strconv.FormatInt(*k.Estimate, 10)
		}
		got[k.Key] = string(k.Kind) + " est=" + est + " window=" + k.Window.String() + " pair=" + k.PairKey + " flags=" + flagList(k.Flags)
	}
	n := func(id string, i int64) string { return windowKeyAt(id, cur+i) }
	// 3 + floor(0.75 * 8) = 9 > 8: over the limit although neither counter is.
	want := map[string]string{
		n("fixed:u1", -1):   "counter est=- window=0s pair= flags=",
		n("fixed:u1", 0):    "counter est=- window=0s pair= flags=",
		n("sliding:u1", -1): "sliding_counter est=9 window=1m0s pair=" + n("sliding:u1", 0) + " flags=OVER_LIMIT",
		n("sliding:u1", 0):  "sliding_counter est=9 window=1m0s pair=" + n("sliding:u1", -1) + " flags=OVER_LIMIT",
		n("old:u1", -2):     "sliding_counter est=- window=1m0s pair=" + n("old:u1", -1) + " flags=",
		n("old:u1", -1):     "sliding_counter est=9 window=1m0s pair=" + n("old:u1", 0) + " flags=OVER_LIMIT",
		n("old:u1", 0):      "sliding_counter est=9 window=1m0s pair=" + n("old:u1", -1) + " flags=OVER_LIMIT",
		n("alone:u1", 0):    "counter est=- window=0s pair= flags=",
	}
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s:\n got %s\nwant %s", k, got[k], want[k])
			}
		}
	}
}

func flagList(fs []Flag) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f))
	}
	return strings.Join(s, ",")
}

// Purge by deadline removes exactly the members whose deadline passed at least --older-than
// ago, never one whose deadline is ahead, and no script call removes more than the batch.
func TestPurgeByDeadlineInBoundedBatches(t *testing.T) {
	s := singleServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	defer rdb.Close()
	hook := &countingHook{}
	rdb.AddHook(hook)
	ctx := context.Background()
	key := "deadline:jobs"
	threshold := 3 * 24 * time.Hour // deadlines days ahead: start times could never be that far
	var zs []redis.Z
	var live []string
	for i := 0; i < 40; i++ { // started between 40 and 1 minutes ago: deadlines ahead
		m := "live-" + strconv.Itoa(i)
		zs = append(zs, redis.Z{Score: UnitSeconds.Score(fixedNow.Add(threshold - time.Duration(i+1)*time.Minute)), Member: m})
		live = append(live, m)
	}
	for i := 0; i < 5; i++ { // deadlines passed 1 to 5 minutes ago: expired, not yet 10m
		m := "recent-" + strconv.Itoa(i)
		zs = append(zs, redis.Z{Score: UnitSeconds.Score(fixedNow.Add(-time.Duration(i+1) * time.Minute)), Member: m})
		live = append(live, m)
	}
	zs = append(zs, redis.Z{Score: UnitSeconds.Score(fixedNow.Add(-10*time.Minute + time.Millisecond)), Member: "just-short"})
	live = append(live, "just-short")
	for i := 0; i < 25; i++ { // deadlines passed 10 minutes ago or more
		zs = append(zs, redis.Z{Score: UnitSeconds.Score(fixedNow.Add(-10*time.Minute - time.Duration(i)*time.Minute)), Member: "lost-" + strconv.Itoa(i)})
	}
	must(t, rdb.ZAdd(ctx, key, zs...).Err())
	must(t, rdb.Expire(ctx, key, threshold).Err())
	sel, err := Select(ctx, rdb, []string{key}, SelectOptions{})
	must(t, err)

	in, err := Inspect(ctx, rdb, sel, InspectOptions{Stale: 10 * time.Minute, Clock: fixedClock()})
	must(t, err)
	k := in.Keys[0]
	if k.Kind != KindConcurrency || k.Scores != ScoresDeadline || !k.ScoresGuessed || k.Stale != 25 || k.Expired == nil || *k.Expired != 31 {
		t.Errorf("inspect: %s scores=%s guessed=%v expired=%v, want a concurrency set of guessed deadlines, 25 stale, 31 expired", show(k), k.Scores, k.ScoresGuessed, k.Expired)
	}
	// Read as start times, deadlines three days ahead are no times at all: nothing is touched.
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 10 * time.Minute, Batch: 10, Scores: ScoresStart, Clock: fixedClock()})
	must(t, err)
	if res.Keys[0].Skipped != SkipNotTimes || res.TotalRemoved != 0 {
		t.Errorf("--scores start: %+v, want skipped as not times", res.Keys[0])
	}
	for _, mode := range []ScoreMode{ScoresAuto, ScoresDeadline} {
		dry, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 10 * time.Minute, Batch: 10, DryRun: true, Scores: mode, Clock: fixedClock()})
		must(t, err)
		if pk := dry.Keys[0]; pk.Removed != 25 || pk.Remaining != 46 || pk.Scores != ScoresDeadline || pk.Guessed != (mode == ScoresAuto) {
			t.Errorf("--scores %s dry run: %+v, want 25 of 71 as deadlines", mode, pk)
		}
	}
	res, err = Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 10 * time.Minute, Batch: 10, Scores: ScoresDeadline, Clock: fixedClock()})
	must(t, err)
	if res.TotalRemoved != 25 || !reflect.DeepEqual(hook.removed, []int64{10, 10, 5}) {
		t.Errorf("removed %d in calls %v, want 25 in 10+10+5", res.TotalRemoved, hook.removed)
	}
	left, err := rdb.ZRange(ctx, key, 0, -1).Result()
	must(t, err)
	sort.Strings(left)
	sort.Strings(live)
	if !reflect.DeepEqual(left, live) {
		t.Errorf("left %v\nwant %v", left, live)
	}
}

// A set whose old members are scored in seconds and new ones in milliseconds is left alone:
// a millisecond cutoff would remove every second-scored member, live or not.
func TestPurgeSkipsASetMixingUnits(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	key := "mixed:units"
	must(t, rdb.ZAdd(ctx, key,
		redis.Z{Score: UnitSeconds.Score(fixedNow.Add(-time.Second)), Member: "s-1"},
		redis.Z{Score: UnitMillis.Score(fixedNow.Add(-time.Hour)), Member: "ms-1"},
		redis.Z{Score: UnitMillis.Score(fixedNow.Add(-time.Second)), Member: "ms-2"}).Err())
	sel, err := Select(ctx, rdb, []string{key}, SelectOptions{})
	must(t, err)
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: time.Minute, Batch: 10, Clock: fixedClock()})
	must(t, err)
	if res.Keys[0].Skipped != SkipMixedUnits || res.TotalRemoved != 0 {
		t.Errorf("%+v, want skipped: %s", res.Keys[0], SkipMixedUnits)
	}
	if n, _ := rdb.ZCard(ctx, key).Result(); n != 3 {
		t.Errorf("%d members left, want all 3", n)
	}
}
