package tui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/human"
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

// progressWidth bounds a progress line, as CI logs and 100-column terminals show them whole.
const progressWidth = 100

// ProgressLine is one tick for a log: "[3s/10s] naive 17.2k/s peak 64/20 (+44) p99 13.5ms |
// lua 44.3k/s peak 20/20 p99 6.87ms", false rejects and errors only when there are some. Strategies that do not
// fit in progressWidth go on indented lines below (only the first starts with "[").
func ProgressLine(s bench.Snapshot) string {
	elapsed := s.Elapsed.Round(time.Second)
	head := fmt.Sprintf("[%s/%s]", elapsed, s.Total)
	if s.Total <= 0 {
		head = fmt.Sprintf("[%s %3.0f%%]", elapsed, s.Progress*100)
	}
	if s.Paused {
		head += " paused"
	}
	if s.Extending != "" {
		head += " loading on"
	}
	indent := strings.Repeat(" ", len(head))
	var lines []string
	line := head
	for i, st := range s.Strategies {
		part := fmt.Sprintf("%s %s/s peak %s/%s", st.Name, human.Compact(st.Throughput), progressCount(st.Peak), progressCount(s.Limit))
		if st.Overshoot > 0 {
			part += fmt.Sprintf(" (+%s)", progressCount(st.Overshoot))
		}
		if st.FalseRejects > 0 {
			part += fmt.Sprintf(" %s false %s", progressCount(st.FalseRejects), human.Plural(st.FalseRejects, "reject", "rejects"))
		}
		if st.Errors > 0 {
			part += fmt.Sprintf(" %s %s", progressCount(st.Errors), human.Plural(st.Errors, "error", "errors"))
		}
		part += " p99 " + human.Latency(st.Latency.P99)
		sep := " | "
		if i == 0 {
			sep = " "
		}
		if i > 0 && len(line)+len(sep)+len(part) > progressWidth {
			lines, line, sep = append(lines, line), indent, " "
		}
		line += sep + part
	}
	return strings.Join(append(lines, line), "\n")
}

// progressCount is a count in a progress line: whole up to 99,999, then compact (1.2M).
func progressCount(n int64) string {
	if n < 100_000 {
		return strconv.FormatInt(n, 10)
	}
	return human.Compact(float64(n))
}
