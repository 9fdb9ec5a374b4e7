package bench

import (
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Latencies are recorded in microseconds from 1µs to 10 minutes at 3 significant figures:
// a fixed-size histogram, so memory stays flat however long the run.
const (
	histMin     = 1
	histMax     = int64(10 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

// count adds one of c's counts: to counter, or with the rest of its round's.
func (s *strategyState) count(c *decisionCall, counter *atomic.Int64) {
	if c.round != nil {
		c.round.count(counter)
		return
	}
	counter.Add(1)
}

// record adds a decision's latency to the histogram.
func (s *strategyState) record(latency time.Duration) {
	us := max(histMin, min(histMax, latency.Microseconds()))
	s.histMu.Lock()
	s.hist.RecordValue(us) //nolint:errcheck // clamped into range above
	s.histMu.Unlock()
}

// countError counts a failed decision by its kind, and samples its message.
func (s *strategyState) countError(kind, msg string) {
	s.errMu.Lock()
	s.errKinds[kind]++
	s.errMu.Unlock()
	s.sampleError(msg)
}

// sampleError counts msg among the first distinct messages; later new ones are only counted
// by kind, so memory stays bounded whatever the server says.
func (s *strategyState) sampleError(msg string) {
	msg = trimMessage(msg)
	s.errMu.Lock()
	defer s.errMu.Unlock()
	for i := range s.errSamples {
		if s.errSamples[i].Message == msg {
			s.errSamples[i].Count++
			return
		}
	}
	if len(s.errSamples) < MaxErrorSamples {
		s.errSamples = append(s.errSamples, ErrorSample{Message: msg, Count: 1})
	}
}

// trimMessage keeps an error message to one line of at most MaxErrorMessage bytes.
func trimMessage(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if len(msg) > MaxErrorMessage {
		cut := MaxErrorMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}

// statusCounts counts an endpoint's answers by status code (100-599; any other in one slot).
type statusCounts struct{ n [600]atomic.Int64 }

func (c *statusCounts) add(status int) {
	if status >= 100 && status < len(c.n) {
		c.n[status].Add(1)
	} else if status != 0 {
		c.n[0].Add(1)
	}
}

// counts are the codes seen with their counts (0 for a status out of range); nil for no counter.
func (c *statusCounts) counts() map[int]int64 {
	if c == nil {
		return nil
	}
	out := map[int]int64{}
	for code := range c.n {
		if n := c.n[code].Load(); n > 0 {
			out[code] = n
		}
	}
	return out
}
