package redistest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MigrateSlot moves the slot of key, and every key in it, from the master that owns it to
// another master, as redis-cli --cluster reshard does: IMPORTING on the target, MIGRATING on
// the source, MIGRATE of the slot's keys in batches (clients meanwhile get ASK for keys already
// moved), then NODE on every master (and MOVED from then on). It returns the source's and the
// target's addresses.
func (c *Cluster) MigrateSlot(ctx context.Context, key string) (from, to string, err error) {
	clients := make([]*redis.Client, len(c.Masters))
	ids := make([]string, len(c.Masters))
	for i, m := range c.Masters {
		clients[i] = redis.NewClient(&redis.Options{Addr: m.Addr})
		defer clients[i].Close()
		if ids[i], err = clients[i].ClusterMyID(ctx).Result(); err != nil {
			return "", "", err
		}
	}
	slot, err := clients[0].ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return "", "", err
	}
	src := -1
	for i, cl := range clients {
		if n, err := cl.ClusterCountKeysInSlot(ctx, int(slot)).Result(); err == nil && n > 0 {
			src = i
		}
	}
	if src < 0 {
		return "", "", fmt.Errorf("no master holds a key of slot %d", slot)
	}
	dst := (src + 1) % len(clients)
	host, port, _ := net.SplitHostPort(c.Masters[dst].Addr)
	steps := []struct {
		cl   *redis.Client
		args []any
	}{
		{clients[dst], []any{"cluster", "setslot", slot, "importing", ids[src]}},
		{clients[src], []any{"cluster", "setslot", slot, "migrating", ids[dst]}},
	}
	for _, s := range steps {
		if err := s.cl.Do(ctx, s.args...).Err(); err != nil {
			return "", "", fmt.Errorf("%v: %w", s.args, err)
		}
	}
	for {
		keys, err := clients[src].ClusterGetKeysInSlot(ctx, int(slot), 10).Result()
		if err != nil {
			return "", "", err
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", host, port, "", 0, 5000, "replace", "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := clients[src].Do(ctx, args...).Err(); err != nil {
			return "", "", fmt.Errorf("MIGRATE: %w", err)
		}
		time.Sleep(20 * time.Millisecond) // the load meets the slot half moved
	}
	for _, i := range append([]int{dst, src}, others(len(clients), src, dst)...) {
		if err := clients[i].Do(ctx, "cluster", "setslot", slot, "node", ids[dst]).Err(); err != nil {
			return "", "", fmt.Errorf("SETSLOT NODE on %s: %w", c.Masters[i].Addr, err)
		}
	}
	return c.Masters[src].Addr, c.Masters[dst].Addr + " (slot " + strconv.FormatInt(slot, 10) + ")", nil
}

func others(n, a, b int) []int {
	var out []int
	for i := range n {
		if i != a && i != b {
			out = append(out, i)
		}
	}
	return out
}
