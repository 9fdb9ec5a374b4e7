package limiter

import (
	"context"
	"testing"

	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/redistest"
)

// A script called through rueidis with keys of two slots is the server's to refuse
// (CROSSSLOT, as go-redis's call gets), not a panic of the client's; one with no keys runs.
func TestASharedCallWithKeysOfTwoSlotsIsRefusedByTheServer(t *testing.T) {
	cc := redistest.SharedCluster(t).Client(t)
	shared, timeout, err := redisconn.Shared(cc)
	if err != nil || shared == nil {
		t.Fatalf("rueidis client of the cluster: %v", err)
	}
	defer shared.Close()
	ctx := context.Background()
	var q sharedQueue
	q.reset(shared, timeout)
	cross := q.Do(ctx, "eval", "return 1", 2, "{a}x", "{b}y")
	none := q.Do(ctx, "eval", "return 7", 0)
	q.exec(ctx)
	if err := cross.Err(); !rediserr.IsCrossSlot(err) {
		t.Errorf("keys of two slots: %v, want CROSSSLOT", err)
	}
	if v, err := none.Result(); v != int64(7) || err != nil {
		t.Errorf("no keys: %v, %v; want 7", v, err)
	}
}
