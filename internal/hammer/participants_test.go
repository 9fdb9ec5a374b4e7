package hammer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestParticipantsLastOneLeavesAndDeadOnesAgeOut(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	key := runkeys.Scheme{Prefix: "limitctl", RunID: "p"}.Participants()
	// A process killed with SIGKILL long ago: it never left.
	rdb.ZAdd(ctx, key, redis.Z{Score: float64(time.Now().Add(-time.Hour).UnixMilli()), Member: "dead"})
	a, err := join(ctx, rdb, key, time.Second, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := join(ctx, rdb, key, time.Second, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if others, err := a.leave(time.Second); err != nil || others != 1 {
		t.Fatalf("first to leave: %d others (%v), want 1 (the dead one must not count)", others, err)
	}
	if others, err := b.leave(time.Second); err != nil || others != 0 {
		t.Fatalf("last to leave: %d others (%v), want 0", others, err)
	}
	// While the last one deletes the keys, a new process with the id is refused.
	if _, err := join(ctx, rdb, key, time.Second, time.Now); !errors.Is(err, errRunClosing) {
		t.Fatalf("join during the clean-up: %v, want errRunClosing", err)
	}
	// A clean-up that died midway does not block the id for ever.
	later := func() time.Time { return time.Now().Add(time.Minute) }
	c, err := join(ctx, rdb, key, time.Second, later)
	if err != nil {
		t.Fatalf("join after a stale closing mark: %v", err)
	}
	c.leave(time.Second)
}
