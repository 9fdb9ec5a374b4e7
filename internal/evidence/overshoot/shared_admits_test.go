package overshoot

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/tally"
	"github.com/limitctl/limitctl/internal/redistest"
)

// chunkKey names the chunks as a run's key scheme would, under the limiter key's hash tag.
func chunkKey(key string, chunk int64) string { return key + ":chunk:" + strconv.FormatInt(chunk, 10) }

func TestSharedAdmitsJudgeEveryProcessTogether(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	now := time.Now()
	clock := func() time.Time { return now }
	// Two processes of one run, each admitting 5 in the same millisecond against a limit of 8:
	// neither overshoots alone, together they admitted 10.
	for kind, check := range map[string]func(horizonMs int64) Checker{
		"sliding-window": func(h int64) Checker { return NewSlidingChecker(8, 1000, h, false) },
		"fixed-window":   func(h int64) Checker { return NewSlidingChecker(8, 1000, h, true) },
		"token-bucket":   func(h int64) Checker { return NewBucketChecker(8, 8, 1, h) },
	} {
		t.Run(kind, func(t *testing.T) {
			key := "shared:{" + kind + "}"
			var checkers []Checker
			var shares []*SharedAdmits
			for p := 0; p < 2; p++ {
				s := NewSharedAdmits(rdb, SharedConfig{Window: time.Second, Horizon: time.Second, Now: clock, ChunkKey: chunkKey})
				shares = append(shares, s)
				checkers = append(checkers, s.Checker(key, check(2000), check(1)))
			}
			at := now.UnixMilli() - 100
			for _, c := range checkers {
				for i := 0; i < 5; i++ {
					c.Admit(evidence.Decision{AtMs: at, LateUs: -1}, nothing)
				}
			}
			if got := checkers[0].Result(); got.Overshoot != 0 {
				t.Fatalf("one process's live verdict before sharing: %+v, want no overshoot (5 of 8)", got)
			}
			checkers[0].Finish() // the first process finishes: it may not have seen the other's admits yet
			got := checkers[1].Finish()
			if got.Peak != 10 || got.Overshoot != 2 {
				t.Fatalf("the last process to finish judged %+v, want peak 10 and overshoot 2 over both processes", got)
			}
			n, err := rdb.Exists(context.Background(), chunkKey(key, tally.FloorDiv(at, chunkMs))).Result()
			if err != nil || n != 1 {
				t.Fatalf("the shared chunk is missing (%v)", err)
			}
			if ttl := rdb.PTTL(context.Background(), chunkKey(key, tally.FloorDiv(at, chunkMs))).Val(); ttl <= 0 {
				t.Fatalf("the shared chunk has TTL %s; it must expire", ttl)
			}
			for _, s := range shares {
				s.Close()
			}
		})
	}
}
