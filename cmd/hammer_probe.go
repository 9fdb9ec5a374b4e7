package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// probeRun checks, before any load, that the user may send everything the run will: the
// cleanup's SCAN and UNLINK, the Redis witness, and one decision (and release) per strategy on
// a throw-away key of the run. An ACL user short of one command otherwise runs the whole
// duration as counted errors, or leaves its keys behind. Only permission errors stop the run
// here; any other error is the run's to count.
func probeRun(ctx context.Context, f *Factory, rdb redis.UniversalClient, o *hammerOptions, runID string, strategies []bench.StrategyRun) error {
	probeKey := func(what string) string { return hammerKey(o.prefix, runID, "probe-"+what, 0, 1) }
	if !o.keepKeys {
		// Before anything is written, so a user who cannot clean up leaves nothing behind.
		if err := probeCleanup(ctx, rdb, o.prefix+":{"+runID+"*", probeKey("cleanup")); isPermissionError(err) {
			return fmt.Errorf("the run's keys could not be deleted at the end: %s (grant SCAN and UNLINK, or pass --keep-keys)", permissionMessage(err))
		}
	}
	err := probeDecisions(ctx, f, rdb, o, strategies, probeKey)
	if err != nil && !o.keepKeys {
		cleanupKeys(rdb, o.prefix, runID, f.Conn.Timeout, f.IO.ErrOut)
	}
	return err
}

func probeCleanup(ctx context.Context, rdb redis.UniversalClient, pattern, key string) error {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return err
	}
	for _, m := range masters {
		if err := m.Scan(ctx, 0, pattern, 10).Err(); err != nil {
			return err
		}
	}
	return rdb.Unlink(ctx, key).Err()
}

func probeDecisions(ctx context.Context, f *Factory, rdb redis.UniversalClient, o *hammerOptions, strategies []bench.StrategyRun, probeKey func(string) string) error {
	if o.witness == "redis" && o.kind == limiter.Concurrency {
		w := bench.NewRedisWitness(rdb, probeKey("witness"), o.limit, o.staleAfter, f.Conn.Timeout)
		if err := w.Probe(ctx); isPermissionError(err) {
			return fmt.Errorf("--witness redis cannot run: %s", permissionMessage(err))
		}
	}
	for _, s := range strategies {
		key := probeKey(s.Name)
		d, err := s.Limiter.Acquire(ctx, key, f.Now())
		if err == nil {
			err = s.Limiter.Release(ctx, key, d)
		}
		if isPermissionError(err) {
			return fmt.Errorf("strategy %s cannot run: %s", s.Name, permissionMessage(err))
		}
	}
	return nil
}

// isPermissionError is an ACL refusal (NOPERM) or failed authentication: retrying cannot help.
func isPermissionError(err error) bool {
	return err != nil && bench.Classify(err) == "noperm"
}

// permissionMessage is the server's refusal in one line, saying NOPERM even where Redis 7.0
// does not (a script calling a command the user may not run).
func permissionMessage(err error) string {
	msg := oneLine(err.Error())
	if !strings.Contains(strings.ToUpper(msg), "NOPERM") && !strings.Contains(msg, "AUTH") && !strings.Contains(msg, "WRONGPASS") {
		msg = "NOPERM: " + msg + " (the script calls a command this user may not run)"
	}
	return msg
}
