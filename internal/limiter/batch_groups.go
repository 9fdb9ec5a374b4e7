package limiter

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/contract"
)

// slotMask keeps a key's hash slot from what rueidis's builder gives (a single node's builder
// marks it with a flag bit).
const slotMask = 1<<14 - 1

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
	masters := b.slotMasters(ctx)
	if masters == nil {
		return [][]int{all}
	}
	var groups [][]int
	group := map[string]int{}
	for i, k := range keys {
		route := b.lim.route(k, now)
		if route == "" {
			return [][]int{all}
		}
		cmd := b.shared.B().Arbitrary("GET").Keys(route).Build()
		m := masters[cmd.Slot()&slotMask]
		if m == "" {
			return [][]int{all} // a slot no master serves (a cluster being set up)
		}
		g, ok := group[m]
		if !ok {
			g = len(groups)
			group[m] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// slotMasters is each hash slot's master (its node id, or host:port without one) as CLUSTER
// SLOTS answers through the shared client, or nil when it does not (the call failed) or the
// client is not a cluster's (a master found through Sentinels is not asked: its ACL may not
// allow the command, and a refusal would be logged on it every run).
func (b *Batch) slotMasters(ctx context.Context) []string {
	if m, ok := b.shared.(interface{ Mode() rueidis.ClientMode }); !ok || m.Mode() != rueidis.ClientModeCluster {
		return nil
	}
	timeout := b.sq.timeout
	if timeout <= 0 {
		timeout = 3 * time.Second // bounded even when the rounds are not: go-redis's default
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ranges, err := b.shared.DoMulti(ctx, b.shared.B().ClusterSlots().Build())[0].ToArray()
	if err != nil || len(ranges) == 0 {
		return nil
	}
	masters := make([]string, slotMask+1)
	for _, r := range ranges {
		fields, err := r.ToArray()
		if err != nil || len(fields) < 3 {
			return nil
		}
		start, err1 := fields[0].AsInt64()
		end, err2 := fields[1].AsInt64()
		node, err3 := fields[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(node) < 2 || start < 0 || end > slotMask || start > end {
			return nil
		}
		var addr string // the node id (since Redis 4), or host:port
		if len(node) > 2 {
			addr, _ = node[2].ToString()
		}
		if addr == "" {
			host, err1 := node[0].ToString()
			port, err2 := node[1].AsInt64()
			if err1 != nil || err2 != nil {
				return nil
			}
			addr = host + ":" + strconv.FormatInt(port, 10)
		}
		for s := start; s <= end; s++ {
			masters[s] = addr
		}
	}
	return masters
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
