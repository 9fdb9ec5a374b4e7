package tui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
)

// Progress is the dashboard's stand-in without a terminal (CI logs): one plain line per second
// while the run lasts, never an escape code. It drains snapshots until the engine closes the
// channel.
func Progress(w io.Writer, snapshots <-chan bench.Snapshot) error {
	last := time.Now() // the first line after a second of load, not after the first tick
	for snap := range snapshots {
		if snap.Done || time.Since(last) < time.Second {
			continue
		}
		last = time.Now()
		fmt.Fprintln(w, ProgressLine(snap))
	}
	return nil
}

// ProgressLine is one snapshot in one plain line:
//
//	[3s/10s] naive: 13801/s peak 64/20 overshoot 44 errors 0 p99 13.903ms | lua: ...
func ProgressLine(s bench.Snapshot) string {
	var b strings.Builder
	elapsed := s.Elapsed.Round(time.Second)
	if s.Total > 0 {
		fmt.Fprintf(&b, "[%s/%s]", elapsed, s.Total)
	} else {
		fmt.Fprintf(&b, "[%s %3.0f%%]", elapsed, s.Progress*100)
	}
	if s.Paused {
		b.WriteString(" paused")
	}
	for i, st := range s.Strategies {
		sep := " "
		if i > 0 {
			sep = " | "
		}
		fmt.Fprintf(&b, "%s%s: %.0f/s peak %d/%d overshoot %d errors %d p99 %sms", sep, st.Name, st.Throughput, st.Peak, s.Limit,
			st.Overshoot, st.Errors, strconv.FormatFloat(float64(st.Latency.P99)/float64(time.Millisecond), 'f', 3, 64))
	}
	return b.String()
}
