package hammer

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/limitctl/limitctl/internal/hammer/timeline"
	"github.com/limitctl/limitctl/internal/human"
)

// TimelineTest holds the hidden flags of a shared run's timeline: Shift moves this process's
// clock (the stamps it gives, as another host's clock would be), ProbeDelay slows each of its
// TIME round trips (a bound that wide), Off publishes no call (what publishing costs).
type TimelineTest struct {
	Shift, ProbeDelay time.Duration
	Off               bool
	// MaxMiB bounds the calls this process publishes (--evidence-max-mib; 0: no bound).
	MaxMiB float64
}

// DefaultEvidenceMaxMiB is --evidence-max-mib's default: at about 12 bytes a decision, some
// 22 million decisions of one process (minutes of a fast run), kept in Redis as long as the
// summaries are (ReportTTL).
const DefaultEvidenceMaxMiB = 256

// processName names this process among the run's: its summary and its evidence.
func processName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), NewRunID())
}

// shiftedNow is now moved by the hidden --clock-shift.
func shiftedNow(now func() time.Time, shift time.Duration) func() time.Time {
	if shift == 0 {
		return now
	}
	return func() time.Time { return now().Add(shift) }
}

// newTimeline prepares the publishing of this process's calls, in a run shared by id with the
// Redis witness, so hammer report judges refusals over every process's (nil otherwise).
func (s *session) newTimeline() *timeline.Publisher {
	o := s.opts
	if o.RunID == "" || !o.RedisWitness || o.Timeline.Off {
		return nil
	}
	cfg := timeline.Config{Keys: s.keys, Process: s.process, KeyN: o.Keys, TTL: ReportTTL, Timeout: s.deps.Timeout,
		MaxBytes: int64(o.Timeline.MaxMiB * (1 << 20))}
	if d := o.Timeline.ProbeDelay; d > 0 {
		cfg.Read = func(ctx context.Context) (time.Time, error) {
			time.Sleep(d)
			return s.rdb.Time(ctx).Result()
		}
	}
	return timeline.New(s.rdb, cfg)
}

// startTimeline measures this process's clock before the load; without it the report judges
// no refusal of the run, and says so.
func (s *session) startTimeline(ctx context.Context) {
	if s.timeline == nil {
		return
	}
	if err := s.timeline.Start(ctx); err != nil {
		s.deps.notice("warning: could not measure this process's clock against the server's TIME, so hammer report will not judge refusals: " + human.FirstLine(err.Error()))
	}
}
