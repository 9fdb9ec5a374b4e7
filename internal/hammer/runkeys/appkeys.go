package runkeys

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// Identity is the i-th client identity of the run, an HTTP target's {key}: <run-id>.<i>, fresh
// for every run, so the limiter holds no state for it from before the run ('.' is never in a
// run id, so no other run's identity looks the same).
func (k Scheme) Identity(i int) string { return k.RunID + "." + strconv.Itoa(i) }

// IdentityOf is an HTTP target's i-th identity: the target's own, so that two targets never
// share a client (nor its limiter's state), and the run's trace of the application's commands
// knows whose a key is (redistrace.Identities): Identity(t*Keys + i) for the t-th of Targets.
func (k Scheme) IdentityOf(target string, i int) string {
	t := max(0, slices.Index(k.Targets, target))
	return k.Identity(t*max(1, k.Keys) + i)
}

// AppPattern is the SCAN pattern of the keys an HTTP target's limiter writes (--http-keys),
// with {key} where a client identity goes.
type AppPattern struct {
	Strategy string
	Pattern  string
}

// AppKeys are the keys HTTP targets' limiters write in the Redis the user names beside them:
// what matches their patterns for the run's identities is read for what it leaves behind and
// deleted after the load, and nothing else of that server is touched.
type AppKeys struct {
	Scheme   Scheme // the run's identities
	Patterns []AppPattern
}

// scans are the SCAN patterns the targets' keys are found by: a pattern with {key}, once per
// identity (the identity glob-escaped: it holds letters, digits, '-', '_' and '.'); one without,
// as given.
func (a AppKeys) scans() []ownedScan {
	var out []ownedScan
	for _, p := range a.Patterns {
		owner := func(string) (string, bool) { return p.Strategy, true }
		if !strings.Contains(p.Pattern, "{key}") {
			out = append(out, ownedScan{p.Pattern, owner})
			continue
		}
		for i := range max(1, a.Scheme.Keys) {
			out = append(out, ownedScan{strings.ReplaceAll(p.Pattern, "{key}", redisconn.GlobEscape(a.Scheme.IdentityOf(p.Strategy, i))), owner})
		}
	}
	return out
}

// Leftovers reads the targets' keys as Scheme.Leftovers reads the run's: keys without a TTL or
// with one beyond leakTTL, and the largest that can grow with traffic, per target.
func (a AppKeys) Leftovers(ctx context.Context, rdb redis.UniversalClient, leakTTL time.Duration) (map[string]bench.Leftovers, error) {
	return readOwned(ctx, rdb, a.scans(), leakTTL)
}

// Cleanup deletes the targets' keys (SCAN for their patterns on every master, UNLINK each key
// found), bounded in time; each failure is counted and reported.
func (a AppKeys) Cleanup(rdb redis.UniversalClient, timeout time.Duration) CleanupReport {
	var patterns []string
	for _, s := range a.scans() {
		patterns = append(patterns, s.pattern)
	}
	return unlinkMatching(rdb, timeout, patterns, func(string) bool { return true })
}

// Describe says which keys the targets' limiters left, for the --keep-keys notice.
func (a AppKeys) Describe() string {
	var parts []string
	for _, p := range a.Patterns {
		parts = append(parts, strings.ReplaceAll(p.Pattern, "{key}", a.Scheme.RunID+".<i>"))
	}
	return strings.Join(parts, " and ")
}
