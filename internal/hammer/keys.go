package hammer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redisconn"
)

// KeyScheme owns the names of a run's keys: every key the hammer writes is named here.
type KeyScheme struct {
	Prefix string
	RunID  string
	Keys   int // limiter keys per strategy
}

// Key names a strategy's i-th limiter key. With one key per strategy every key of the run
// shares the {run-id} hash tag; with more, each index gets its own tag so keys spread over a
// cluster's slots.
func (k KeyScheme) Key(strategy string, i int) string {
	if k.Keys <= 1 {
		return fmt.Sprintf("%s:{%s}:%s", k.Prefix, k.RunID, strategy)
	}
	return fmt.Sprintf("%s:{%s-%d}:%s", k.Prefix, k.RunID, i, strategy)
}

// Witness names the shared Redis witness of a limiter key.
func (k KeyScheme) Witness(key string) string { return key + ":witness" }

// Probe names the throw-away key the pre-run permission probe writes for what.
func (k KeyScheme) Probe(what string) string {
	return fmt.Sprintf("%s:{%s}:probe-%s", k.Prefix, k.RunID, what)
}

// Participants names the set of processes running with this run id (participants.go).
func (k KeyScheme) Participants() string {
	return fmt.Sprintf("%s:{%s}:participants", k.Prefix, k.RunID)
}

// pattern is what the clean-up SCANs for.
func (k KeyScheme) pattern() string { return k.Prefix + ":{" + k.RunID + "*" }

// Describe says where the run's keys live, for the --keep-keys notice.
func (k KeyScheme) Describe() string { return k.Prefix + ":{" + k.RunID + "..." }

// cleanup deletes the run's keys on every master (SCAN, never KEYS), bounded in time, also
// after an interrupt. What it could not delete comes back as warnings.
func (k KeyScheme) cleanup(rdb redis.UniversalClient, timeout time.Duration) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+timeout)
	defer cancel()
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return []string{"could not delete the run's keys: " + oneLine(err.Error())}
	}
	var warnings []string
	for _, m := range masters {
		iter := m.Scan(ctx, 0, k.pattern(), 1000).Iterator()
		var batch []string
		flush := func() {
			if len(batch) > 0 {
				// One UNLINK per key: in a cluster the keys of one batch may sit in different slots.
				pipe := m.Pipeline()
				for _, key := range batch {
					pipe.Unlink(ctx, key)
				}
				pipe.Exec(ctx)
				batch = batch[:0]
			}
		}
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				flush()
			}
		}
		flush()
		if err := iter.Err(); err != nil && !errors.Is(err, context.Canceled) {
			warnings = append(warnings, fmt.Sprintf("could not delete all of the run's keys on %s: %s", redisconn.NodeAddr(m), oneLine(err.Error())))
		}
	}
	return warnings
}

// probeCleanup checks the user may SCAN every master and UNLINK, before anything is written.
func (k KeyScheme) probeCleanup(ctx context.Context, rdb redis.UniversalClient) error {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return err
	}
	for _, m := range masters {
		if err := m.Scan(ctx, 0, k.pattern(), 10).Err(); err != nil {
			return err
		}
	}
	return rdb.Unlink(ctx, k.Probe("cleanup")).Err()
}
