package hammer

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/limitctl/limitctl/internal/hammer/timeline"
	"github.com/limitctl/limitctl/internal/human"
)

// TimelineFlags are the flags of a shared run's timeline: MaxMiB bounds what this process
// publishes (--evidence-max-mib); the hidden ones are for tests and measures: Shift moves this
// process's clock (the stamps it gives, as another host's clock would be), ProbeDelay slows each
// of its TIME round trips (a bound that wide), Off publishes no call (what publishing costs).
type TimelineFlags struct {
	Shift, ProbeDelay time.Duration
	Off               bool
	// MaxMiB bounds the calls this process publishes (--evidence-max-mib; 0: no bound).
	MaxMiB float64
}

// DefaultEvidenceMaxMiB is --evidence-max-mib's default: at about 12 bytes a decision, some
// 22 million decisions of one process (minutes of a fast run), kept in Redis as long as the
// summaries are (ReportTTL).
const DefaultEvidenceMaxMiB = 256

// maxBytes is a bound of mib MiB in bytes: 0 stays no bound, any other at least a byte (a
// bound too small to hold a flush still stops at the first), one too large for an int64 none.
func maxBytes(mib float64) int64 {
	b := mib * (1 << 20)
	switch {
	case mib <= 0 || b >= math.MaxInt64:
		return 0
	case b < 1:
		return 1
	}
	return int64(b)
}

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
		MaxBytes: maxBytes(o.Timeline.MaxMiB)}
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
