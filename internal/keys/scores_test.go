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

	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
)

// Counters <id>:<n> of a fixed window whose predecessor expires within the current window stay
// counters; those whose predecessor outlives it (a sliding window) are a pair with an estimate.
func TestCounterPairsAgainstFixedWindowOverlap(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	w := time.Minute
	now := fixedNow.Add(15 * time.Second) // a quarter into the window
	cur := now.UnixMilli() / w.Milliseconds()
	write := func(id string, prevTTL time.Duration) {
		must(t, rdb.Set(ctx, kind.WindowKeyAt(id, cur-1), 8, prevTTL).Err())
		must(t, rdb.Set(ctx, kind.WindowKeyAt(id, cur), 3, 2*w+time.Second).Err())
	}
	write("fixed:u1", 30*time.Second) // dies before the window ends at now + 45s
	write("sliding:u1", w+46*time.Second)
	write("old:u1", 2*w)
	must(t, rdb.Set(ctx, kind.WindowKeyAt("old:u1", cur-2), 4, 50*time.Second).Err())
	must(t, rdb.Set(ctx, kind.WindowKeyAt("alone:u1", cur), 4, w).Err())
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
	n := func(id string, i int64) string { return kind.WindowKeyAt(id, cur+i) }
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
		zs = append(zs, redis.Z{Score: scores.UnitSeconds.Score(fixedNow.Add(threshold - time.Duration(i+1)*time.Minute)), Member: m})
		live = append(live, m)
	}
	for i := 0; i < 5; i++ { // deadlines passed 1 to 5 minutes ago: expired, not yet 10m
		m := "recent-" + strconv.Itoa(i)
		zs = append(zs, redis.Z{Score: scores.UnitSeconds.Score(fixedNow.Add(-time.Duration(i+1) * time.Minute)), Member: m})
		live = append(live, m)
	}
	zs = append(zs, redis.Z{Score: scores.UnitSeconds.Score(fixedNow.Add(-10*time.Minute + time.Millisecond)), Member: "just-short"})
	live = append(live, "just-short")
	for i := 0; i < 25; i++ { // deadlines passed 10 minutes ago or more
		zs = append(zs, redis.Z{Score: scores.UnitSeconds.Score(fixedNow.Add(-10*time.Minute - time.Duration(i)*time.Minute)), Member: "lost-" + strconv.Itoa(i)})
	}
	must(t, rdb.ZAdd(ctx, key, zs...).Err())
	must(t, rdb.Expire(ctx, key, threshold).Err())
	sel, err := Select(ctx, rdb, []string{key}, SelectOptions{})
	must(t, err)

	in, err := Inspect(ctx, rdb, sel, InspectOptions{Stale: 10 * time.Minute, Clock: fixedClock()})
	must(t, err)
	k := in.Keys[0]
	if k.Kind != kind.Concurrency || k.Scores != scores.Deadline || !k.ScoresGuessed || k.Stale != 25 || k.Expired == nil || *k.Expired != 31 {
		t.Errorf("inspect: %s scores=%s guessed=%v expired=%v, want a concurrency set of guessed deadlines, 25 stale, 31 expired", show(k), k.Scores, k.ScoresGuessed, k.Expired)
	}
	// Read as start times, deadlines three days ahead are no times at all: nothing is touched.
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 10 * time.Minute, Batch: 10, Scores: scores.Start, Clock: fixedClock()})
	must(t, err)
	if res.Keys[0].Skipped != SkipNotTimes || res.TotalRemoved != 0 {
		t.Errorf("--scores start: %+v, want skipped as not times", res.Keys[0])
	}
	for _, mode := range []scores.Mode{scores.ModeAuto, scores.Deadline} {
		dry, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 10 * time.Minute, Batch: 10, DryRun: true, Scores: mode, Clock: fixedClock()})
		must(t, err)
		if pk := dry.Keys[0]; pk.Removed != 25 || pk.Remaining != 46 || pk.Scores != scores.Deadline || pk.Guessed != (mode == scores.ModeAuto) {
			t.Errorf("--scores %s dry run: %+v, want 25 of 71 as deadlines", mode, pk)
		}
	}
	res, err = Purge(ctx, rdb, sel, PurgeOptions{OlderThan: 10 * time.Minute, Batch: 10, Scores: scores.Deadline, Clock: fixedClock()})
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
		redis.Z{Score: scores.UnitSeconds.Score(fixedNow.Add(-time.Second)), Member: "s-1"},
		redis.Z{Score: scores.UnitMillis.Score(fixedNow.Add(-time.Hour)), Member: "ms-1"},
		redis.Z{Score: scores.UnitMillis.Score(fixedNow.Add(-time.Second)), Member: "ms-2"}).Err())
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
