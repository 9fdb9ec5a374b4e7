package limiter

import (
	"context"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/wire"
)

// Groups parts the indexes of keys by the master that serves the acquires on them (the master
// of the slot of the call's first key, which routes it), in the order of each group's first
// key: a round whose calls are all in one group is one write and one read on one master's
// connection, where a round spread over every master is a write, a read and a goroutine per
// master (rueidis's DoMulti), the client's cost growing with the cluster. Only a cluster
// through Config.Shared has more than one group; anything else (a single node, a master
// found through Sentinels, go-redis's pipelines, a topology that cannot be read, a call with
// no key) is one group of every key, in order.
//
// The groups are the cluster's as they were when asked: after a failover or a resharding a
// group's keys may be served by several masters, and a round's calls still reach theirs (the
// client routes each by its slot and follows MOVED and ASK), only at the cost of a spread round.
func (b *Batch) Groups(ctx context.Context, keys []string, now time.Time) [][]int {
	all := make([]int, len(keys))
	for i := range all {
		all[i] = i
	}
	if b == nil || b.shared == nil || len(keys) < 2 {
		return [][]int{all}
	}
	var m *slotMap
	switch {
	case b.nq.topo != nil:
		m = b.nq.topo.slots(ctx)
	case isCluster(b.shared):
		m = readSlots(ctx, b.shared, b.sq.timeout)
	}
	if m == nil {
		return [][]int{all}
	}
	var groups [][]int
	group := map[int16]int{}
	for i, k := range keys {
		route := b.lim.route(k, now)
		if route == "" {
			return [][]int{all}
		}
		master := m.owner[wire.Slot(route)]
		if master < 0 {
			return [][]int{all} // a slot no master serves (a cluster being set up)
		}
		g, ok := group[master]
		if !ok {
			g = len(groups)
			group[master] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// route is the first key of the acquire on key at now (which routes it on a cluster), or ""
// when the call has none.
func (s *scripted) route(key string, now time.Time) string {
	keys, _ := s.kind.args(s.cfg, nil, nil, key, now, "")
	return first(keys)
}

func (c *contracted) route(key string, now time.Time) string {
	keys, _ := c.caller.Expand(&contract.Call{Key: key, Now: now})
	return first(keys)
}

func first(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}
