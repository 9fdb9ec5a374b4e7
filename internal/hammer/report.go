package hammer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// ReportTTL is how long a process's summary stays in Redis for `hammer report`.
const ReportTTL = 24 * time.Hour

// ReportKey names where one process of a run leaves its summary: outside the run's {run-id}
// keys, so that a process's clean-up does not delete what the others left.
func (k KeyScheme) ReportKey(process string) string {
	return fmt.Sprintf("%s:report:{%s}:%s", k.Prefix, k.RunID, process)
}

func (k KeyScheme) reportPattern() string { return fmt.Sprintf("%s:report:{%s}:*", k.Prefix, k.RunID) }

// publish leaves this process's summary (latency histograms included) for `hammer report`.
func (s *session) publish(summary bench.Summary) error {
	doc, err := json.Marshal(summary)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	process := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), NewRunID())
	ctx, cancel := context.WithTimeout(context.Background(), s.deps.Timeout)
	defer cancel()
	return s.rdb.Set(ctx, s.keys.ReportKey(process), doc, ReportTTL).Err()
}

// Report merges the summaries every process of run left (with --run-id and --witness redis)
// into one, with Processes set.
func Report(ctx context.Context, rdb redis.UniversalClient, prefix, runID string) (bench.Summary, error) {
	keys := KeyScheme{Prefix: prefix, RunID: runID}
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return bench.Summary{}, err
	}
	var runs []bench.Summary
	for _, m := range masters {
		iter := m.Scan(ctx, 0, keys.reportPattern(), 1000).Iterator()
		for iter.Next(ctx) {
			doc, err := m.Get(ctx, iter.Val()).Bytes()
			if err == redis.Nil {
				continue // expired between SCAN and GET
			}
			if err != nil {
				return bench.Summary{}, err
			}
			var sum bench.Summary
			if err := json.Unmarshal(doc, &sum); err != nil {
				return bench.Summary{}, fmt.Errorf("%s does not hold a hammer summary: %v", iter.Val(), err)
			}
			runs = append(runs, sum)
		}
		if err := iter.Err(); err != nil {
			return bench.Summary{}, err
		}
	}
	if len(runs) == 0 {
		return bench.Summary{}, fmt.Errorf("no process of run %s left a summary under %s (run each with --run-id %s --witness redis)", runID, keys.reportPattern(), runID)
	}
	return bench.Merge(runs)
}
