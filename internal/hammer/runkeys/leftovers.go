package runkeys

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// StrategyOf names the strategy whose limiter state key is: its limiter key, a key its
// decisions write beside it (a window's counter), or any key a custom script wrote under its
// {key}. The keys the hammer keeps for itself (the Redis witness, shared admits, the virtual
// clock's mark, probes, the participants) and every key the scheme does not own are no
// strategy's.
func (k Scheme) StrategyOf(key string) (string, bool) {
	if !k.Owns(key) {
		return "", false
	}
	_, rest, _ := strings.Cut(key, "}:")
	name, suffix, _ := strings.Cut(rest, ":")
	if custom, ok := customName(rest); ok {
		name, suffix = custom, strings.TrimPrefix(rest[len(custom):], ":")
	}
	chunk, isChunk := strings.CutPrefix(suffix, admitsSuffix)
	switch {
	case rest == "participants", strings.HasPrefix(name, "probe-"), suffix == "witness", isChunk && digits(chunk),
		strings.HasSuffix(suffix, limiter.TimeKeySuffix):
		return "", false
	}
	return name, true
}

// leftoverBatch is how many keys one pipeline of the end-of-run read asks about.
const leftoverBatch = 256

// leakRecheck is how long after the first read a key that seemed to leak is read again; at most
// maxSuspects such keys are read again, the rest counted as first read.
const (
	leakRecheck = 250 * time.Millisecond
	maxSuspects = 10_000
)

// Leftovers reads every key of the run on every master (SCAN for the run's patterns, never
// KEYS) and sorts what each strategy's keys hold: keys without a TTL, keys whose TTL is longer
// than leakTTL, and the largest set, sorted set, list or stream. Two pipelines per batch of keys
// (TYPE and PTTL, then the size by type: -1 for a type it cannot size); memory stays bounded by
// the samples kept and at most maxSuspects suspects. A key that expired between the two is
// skipped: it leaked nothing.
//
// A key counts as leaking only if it still does when read again leakRecheck later: a client's
// write and its EXPIRE sent as two commands (the naive strategy's pipeline, another process of
// a shared run still under load) leave a key without a TTL for the moment between them, which
// is no leak; a key still without one a quarter of a second later was left so.
func (k Scheme) Leftovers(ctx context.Context, rdb redis.UniversalClient, leakTTL time.Duration) (map[string]bench.Leftovers, error) {
	var scans []ownedScan
	for _, pattern := range k.patterns() {
		scans = append(scans, ownedScan{pattern, k.StrategyOf})
	}
	return readOwned(ctx, rdb, scans, leakTTL)
}

// ownedScan is a SCAN pattern and whose each key it finds is (ok false: no strategy's).
type ownedScan struct {
	pattern string
	owner   func(key string) (strategy string, ok bool)
}

// readOwned reads the keys scans find on every master into what each strategy's keys hold, as
// Leftovers says. A key two scans find is read once per strategy that owns it.
func readOwned(ctx context.Context, rdb redis.UniversalClient, scans []ownedScan, leakTTL time.Duration) (map[string]bench.Leftovers, error) {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return nil, err
	}
	found := map[string]bench.Leftovers{}
	var suspects suspectSet
	for _, m := range masters {
		var batch []string
		var owners []string
		// Several patterns may find one key: each strategy reads it once. (One pattern's repeats,
		// which SCAN may return, only repeat a size; the suspects drop them.)
		var seen map[[2]string]bool
		if len(scans) > 1 {
			seen = map[[2]string]bool{}
		}
		for _, scan := range scans {
			iter := m.Scan(ctx, 0, scan.pattern, 1000).Iterator()
			for iter.Next(ctx) {
				key := iter.Val()
				st, ok := scan.owner(key)
				if ok && seen != nil {
					ok = !seen[[2]string{st, key}]
					seen[[2]string{st, key}] = true
				}
				if ok {
					batch, owners = append(batch, key), append(owners, st)
				}
				if len(batch) == leftoverBatch {
					if err := readLeftovers(ctx, m, batch, owners, leakTTL, found, &suspects); err != nil {
						return nil, err
					}
					batch, owners = batch[:0], owners[:0]
				}
			}
			if err := iter.Err(); err != nil {
				return nil, err
			}
		}
		if err := readLeftovers(ctx, m, batch, owners, leakTTL, found, &suspects); err != nil {
			return nil, err
		}
	}
	if err := recheck(ctx, suspects.list, leakTTL); err != nil {
		return nil, err
	}
	for _, sus := range suspects.list {
		if sus.leaks {
			l := found[sus.owner]
			countLeak(&l.Leaks, sus.state)
			found[sus.owner] = l
		}
	}
	return found, nil
}

// suspectSet holds the keys that seemed to leak when first read, each once per strategy (SCAN may
// return a key twice); past maxSuspects a key is counted as first read, so memory stays bounded.
type suspectSet struct {
	list []suspect
	seen map[string]bool
}

// add keeps s to be read again, or past maxSuspects counts it in found as it was first read.
func (ss *suspectSet) add(s suspect, found map[string]bench.Leftovers) {
	id := s.owner + "\x00" + s.state.Key
	if ss.seen[id] {
		return
	}
	if ss.seen == nil {
		ss.seen = map[string]bool{}
	}
	ss.seen[id] = true
	if len(ss.list) < maxSuspects {
		ss.list = append(ss.list, s)
		return
	}
	l := found[s.owner]
	countLeak(&l.Leaks, s.state)
	found[s.owner] = l
}

// countLeak counts a leaking key in l, with its state among the first samples.
func countLeak(l *bench.Leaks, state bench.KeyState) {
	if state.TTLMs == -1 {
		l.KeysWithoutTTL++
	} else {
		l.KeysTTLTooLong++
	}
	if len(l.Samples) < bench.MaxLeakSamples {
		l.Samples = append(l.Samples, state)
	}
}

// suspect is a key that seemed to leak when first read.
type suspect struct {
	m     *redis.Client
	owner string
	state bench.KeyState
	leaks bool // still, when read again
}

// recheck reads the suspects' TTLs again after leakRecheck, one pipeline per master.
func recheck(ctx context.Context, suspects []suspect, leakTTL time.Duration) error {
	if len(suspects) == 0 {
		return nil
	}
	t := time.NewTimer(leakRecheck)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	byMaster := map[*redis.Client][]int{}
	for i := range suspects {
		byMaster[suspects[i].m] = append(byMaster[suspects[i].m], i)
	}
	for m, indexes := range byMaster {
		ttls := make([]*redis.DurationCmd, len(indexes))
		if _, err := m.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j, i := range indexes {
				ttls[j] = p.PTTL(ctx, suspects[i].state.Key)
			}
			return nil
		}); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		for j, i := range indexes {
			ttl := ttls[j].Val()
			suspects[i].leaks = leaking(ttl, leakTTL)
			if ttl >= 0 {
				suspects[i].state.TTLMs = ttl.Milliseconds()
			} else {
				suspects[i].state.TTLMs = -1
			}
		}
	}
	return nil
}

// readLeftovers reads one batch of keys (owners[i] is keys[i]'s strategy) into found, and
// those that seem to leak into suspects.
func readLeftovers(ctx context.Context, m *redis.Client, keys, owners []string, leakTTL time.Duration, found map[string]bench.Leftovers, suspects *suspectSet) error {
	if len(keys) == 0 {
		return nil
	}
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	if _, err := m.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			types[i], ttls[i] = p.Type(ctx, key), p.PTTL(ctx, key)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	sizes := make([]*redis.IntCmd, len(keys))
	if _, err := m.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			sizes[i] = sizeOf(ctx, p, types[i].Val(), key)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) && !rediserr.IsReply(err) {
		return err // a size Redis refused (NOPERM, a module's type) is only unknown
	}
	for i, key := range keys {
		typ, ttl := types[i].Val(), ttls[i].Val()
		if typ == "none" || ttl == -2 {
			continue // expired since the scan
		}
		state := bench.KeyState{Key: key, Type: typ, Size: -1, TTLMs: -1}
		if sizes[i] != nil && sizes[i].Err() == nil {
			state.Size = sizes[i].Val() // -1: a type it cannot size (a module's), or not permitted
		}
		if ttl >= 0 {
			state.TTLMs = ttl.Milliseconds()
		}
		if leaking(ttl, leakTTL) {
			suspects.add(suspect{m: m, owner: owners[i], state: state}, found)
		}
		l := found[owners[i]]
		if growsWithTraffic(typ) && (l.Largest == nil || state.Size > l.Largest.Size) {
			l.Largest = &bench.KeySize{Key: key, Type: typ, Size: state.Size}
		}
		found[owners[i]] = l
	}
	return nil
}

// leaking reports whether a key whose PTTL reads ttl leaks: it has none (-1), or one beyond
// leakTTL (bench.LeakTTL); -2, a key that is gone, leaks nothing.
func leaking(ttl, leakTTL time.Duration) bool { return ttl == -1 || ttl > leakTTL }

// growsWithTraffic reports whether a key of type typ can hold one entry per request, so that
// its size says whether the limiter's state grows with traffic (largest_key): a set, sorted
// set, list or stream; a counter or a bucket's hash holds the same few fields however busy.
func growsWithTraffic(typ string) bool {
	return typ == "zset" || typ == "list" || typ == "set" || typ == "stream"
}

// sizeOf queues the command that sizes a key of type typ: members, elements, fields, entries,
// or a string's bytes; nil for a type it cannot size.
func sizeOf(ctx context.Context, p redis.Pipeliner, typ, key string) *redis.IntCmd {
	switch typ {
	case "string":
		return p.StrLen(ctx, key)
	case "list":
		return p.LLen(ctx, key)
	case "set":
		return p.SCard(ctx, key)
	case "zset":
		return p.ZCard(ctx, key)
	case "hash":
		return p.HLen(ctx, key)
	case "stream":
		return p.XLen(ctx, key)
	}
	return nil
}
