// Package keys inspects, purges and resets live rate-limiter keys: it finds them with SCAN on
// every master (never KEYS), reads what each key holds and asks internal/keys/kind what kind it
// is (with its scores read as times by internal/keys/scores), purges stale sorted-set members
// in bounded batches through the shipped purge_stale script, and deletes a limiter's whole
// state (a key with the keys that belong to it) in bounded batches. It returns values; it
// never prints, reads flags or exits.
package keys

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redisconn"
)

// DefaultScanCount is the SCAN COUNT hint: how many slots of the keyspace one SCAN call walks.
// A thousand keeps each call well under a millisecond while needing few round trips.
const DefaultScanCount = 1000

// Target is one key to act on and the master that holds it.
type Target struct {
	Key  string
	Node string
	// Named is true for a key given literally (checked, not scanned): when it is missing it was
	// never there, whereas a scanned key that is missing vanished after SCAN saw it.
	Named bool
}

// Selection is the keys that the command line names, on every master.
type Selection struct {
	Targets   []Target // sorted by key
	Scanned   int      // distinct keys looked at: SCAN's answers plus the literal keys
	Truncated bool     // MaxKeys was reached and more keys match
	Masters   int      // masters scanned (0 when only literal keys were named)
}

// Nodes counts the distinct nodes holding the selected keys.
func (s Selection) Nodes() int {
	seen := map[string]bool{}
	for _, t := range s.Targets {
		seen[t.Node] = true
	}
	return len(seen)
}

// SelectOptions bound a selection.
type SelectOptions struct {
	Count   int64  // SCAN COUNT hint (DefaultScanCount when 0)
	MaxKeys int    // stop once this many keys are selected (0: no bound)
	Type    string // SCAN TYPE filter, e.g. "zset" ("" for every type)
}

// IsPattern reports whether arg is a SCAN MATCH pattern rather than a literal key name.
func IsPattern(arg string) bool { return strings.ContainsAny(arg, "*?[") }

// Select resolves the command line's keys and patterns. A pattern is matched with SCAN MATCH
// on every master of a cluster (or the one server), never with KEYS, which blocks the server
// for the whole keyspace; a literal key is only routed to its master here, and its existence is
// checked by whoever reads it. No argument means every key ("*").
func Select(ctx context.Context, rdb redis.UniversalClient, args []string, opts SelectOptions) (Selection, error) {
	if len(args) == 0 {
		args = []string{"*"}
	}
	if opts.Count <= 0 {
		opts.Count = DefaultScanCount
	}
	var sel Selection
	seen := map[string]bool{}
	add := func(t Target) bool {
		if seen[t.Key] {
			return true
		}
		if opts.MaxKeys > 0 && len(sel.Targets) >= opts.MaxKeys {
			sel.Truncated = true
			return false
		}
		seen[t.Key] = true
		sel.Targets = append(sel.Targets, t)
		return true
	}
	var patterns []string
	for _, a := range args {
		if IsPattern(a) {
			patterns = append(patterns, a)
			continue
		}
		node, err := masterFor(ctx, rdb, a)
		if err != nil {
			return Selection{}, err
		}
		if !add(Target{Key: a, Node: node, Named: true}) {
			break
		}
	}
	if len(patterns) > 0 && !sel.Truncated {
		masters, err := redisconn.Masters(ctx, rdb)
		if err != nil {
			return Selection{}, fmt.Errorf("listing masters: %w", err)
		}
		sel.Masters = len(masters)
	scan:
		for _, m := range masters {
			for _, p := range patterns {
				more, err := scanNode(ctx, m, p, opts, add)
				if err != nil {
					return Selection{}, err
				}
				if !more {
					break scan
				}
			}
		}
	}
	sel.Scanned = len(sel.Targets)
	sort.Slice(sel.Targets, func(i, j int) bool { return sel.Targets[i].Key < sel.Targets[j].Key })
	return sel, nil
}

// scanNode walks one master's keyspace with SCAN MATCH pattern; more is false once add refuses.
func scanNode(ctx context.Context, node *redis.Client, pattern string, opts SelectOptions, add func(Target) bool) (more bool, err error) {
	addr := redisconn.NodeAddr(node)
	var cursor uint64
	for {
		var page []string
		if opts.Type != "" {
			page, cursor, err = node.ScanType(ctx, cursor, pattern, opts.Count, opts.Type).Result()
		} else {
			page, cursor, err = node.Scan(ctx, cursor, pattern, opts.Count).Result()
		}
		if err != nil {
			return false, fmt.Errorf("SCAN on %s: %w", addr, err)
		}
		for _, k := range page {
			if !add(Target{Key: k, Node: addr}) {
				return false, nil
			}
		}
		if cursor == 0 {
			return true, nil
		}
	}
}

// masterFor names the master that holds key: its slot's master on a cluster, else the server.
func masterFor(ctx context.Context, rdb redis.UniversalClient, key string) (string, error) {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		n, err := c.MasterForKey(ctx, key)
		if err != nil {
			return "", fmt.Errorf("finding the master of %s: %w", key, err)
		}
		return redisconn.NodeAddr(n), nil
	case *redis.Client:
		return redisconn.NodeAddr(c), nil
	}
	return "", fmt.Errorf("unsupported client type %T", rdb)
}
