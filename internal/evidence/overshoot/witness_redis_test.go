package overshoot

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

const witnessKey = "limitctl:{w}:lua:witness"

func TestRedisWitnessLeftoversOfAKilledRunAgeOut(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	now := time.Now().UnixMilli()
	stale := 2 * time.Second
	// A process killed mid-run left 19 held requests behind, decided more than stale-after ago:
	// the limiter reclaims them on its next call, so the witness must not count them either.
	for i := 0; i < 19; i++ {
		rdb.ZAdd(ctx, witnessKey, redis.Z{Score: float64(now - stale.Milliseconds() - 500), Member: "dead:" + string(rune('a'+i))})
	}
	w := NewRedisWitness(rdb, witnessKey, 20, stale, time.Second)
	w.AdmitHeld(1, now, now)
	w.AdmitHeld(2, now, now)
	if got := w.Finish(); got.Overshoot != 0 || got.Peak != 2 {
		t.Fatalf("after a killed run's leftovers: got %+v, want peak 2 and no overshoot", got)
	}
}

func TestRedisWitnessProcessesReleaseOnlyTheirOwnAdmits(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	a := NewRedisWitness(rdb, witnessKey, 2, 10*time.Second, time.Second)
	b := NewRedisWitness(rdb, witnessKey, 2, 10*time.Second, time.Second)
	now := time.Now().UnixMilli()
	a.AdmitHeld(1, now, now)
	b.AdmitHeld(1, now, now) // the same request number in another process is another request
	a.ReleaseHeld(2)         // a release whose admit failed or never happened changes nothing
	b.ReleaseHeld(9)
	b.AdmitHeld(3, now, now)
	if got := b.Result(); got.Overshoot != 1 || got.Peak != 3 {
		t.Fatalf("three held across two processes with limit 2: got %+v, want peak 3, overshoot 1", got)
	}
	a.ReleaseHeld(1)
	b.ReleaseHeld(1)
	b.ReleaseHeld(3)
	if n := rdb.ZCard(context.Background(), witnessKey).Val(); n != 0 {
		t.Fatalf("%d entries left after every release", n)
	}
}

func TestRedisWitnessNeverCountsRequestsTheLimiterMayHaveForgotten(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	w := NewRedisWitness(rdb, witnessKey, 2, time.Second, time.Second)
	base := time.Now().UnixMilli()
	w.AdmitHeld(1, base, base)
	w.AdmitHeld(2, base+100, base+100)
	w.AdmitHeld(3, base+200, base+1_001) // request 1 was decided stale-after ago
	if got := w.Result(); got.Overshoot != 0 || got.Peak != 2 {
		t.Fatalf("got %+v, want peak 2 and no overshoot", got)
	}
	w.AdmitHeld(4, base+900, base+1_050) // 100, 200, 900: decided within a second of the reply
	if got := w.Result(); got.Overshoot != 1 || got.Peak != 3 {
		t.Fatalf("three held, decided within stale-after: got %+v, want peak 3, overshoot 1", got)
	}
}

// failingZRem refuses ZREM while failing is set, as a dropped connection would.
type failingZRem struct {
	redis.Cmdable
	failing bool
}

func (f *failingZRem) ZRem(ctx context.Context, key string, members ...any) *redis.IntCmd {
	if f.failing {
		cmd := redis.NewIntCmd(ctx)
		cmd.SetErr(errors.New("EOF"))
		return cmd
	}
	return f.Cmdable.ZRem(ctx, key, members...)
}

func TestRedisWitnessResendsAFailedRelease(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	flaky := &failingZRem{Cmdable: rdb, failing: true}
	w := NewRedisWitness(flaky, witnessKey, 1, 10*time.Second, time.Second)
	now := time.Now().UnixMilli()
	w.AdmitHeld(1, now, now)
	w.ReleaseHeld(1) // lost on the way
	flaky.failing = false
	w.AdmitHeld(2, now, now) // carries the lost release: one held, not two
	if got := w.Result(); got.Overshoot != 0 {
		t.Fatalf("a failed release over-counted the next admit: got %+v", got)
	}
	flaky.failing = true
	w.ReleaseHeld(2)
	flaky.failing = false
	w.Finish()
	if n := rdb.ZCard(context.Background(), witnessKey).Val(); n != 0 {
		t.Fatalf("%d entries left after Finish resent the failed release", n)
	}
}
