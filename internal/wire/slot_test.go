package wire_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/wire"
)

// Slot places every key where the cluster itself does (CLUSTER KEYSLOT): the keys the load
// names, hash tags at every place, the edge cases of the spec (an empty tag, a '{' with no '}',
// a second tag, bytes beyond ASCII) and the spec's own check value.
func TestSlotIsTheClusters(t *testing.T) {
	keys := []string{
		"", "123456789", "a", "limitctl:hammer:lua:0", "rl:{user:42}:count", "{user1000}.following",
		"foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{", "}", "{}", "a{b", "a}b{c}", "{{}}", "\xff\xfe{\x00}",
		"naïve:{ключ}", "x{y}z{w}",
	}
	for i := range 500 {
		keys = append(keys, fmt.Sprintf("bench:{tag}:%d", i), fmt.Sprintf("t:{TestX.%d:lua:%d}", i*7919, i), fmt.Sprintf("k%d", i))
	}
	if got := wire.Slot("123456789"); got != 0x31C3 {
		t.Fatalf(`Slot("123456789") = %#x, want the spec's CRC16 check value 0x31c3`, got)
	}
	node := redistest.StartCluster(t, 1, 0).Client(t)
	ctx := context.Background()
	cmds, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.ClusterKeySlot(ctx, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		want := c.(*redis.IntCmd).Val()
		if got := wire.Slot(keys[i]); int64(got) != want {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT says %d", keys[i], got, want)
		}
	}
}
