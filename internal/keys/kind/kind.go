// Package kind tells what a key is to a rate limiter from the values it holds: the layouts of
// limitctl's limiters and of other libraries', each documented with an example in docs/kinds.md.
package kind

import (
	"strings"
	"time"
	"unicode"
)

// Kind is what a key is to a rate limiter, read from its structure.
type Kind string

// The kinds inspect reports.
const (
	Concurrency Kind = "concurrency" // sorted set of in-flight request ids scored by start time
	WindowLog   Kind = "window_log"  // sorted set of admitted request ids scored by request time, or a list of request times
	Counter     Kind = "counter"     // string holding an integer (fixed window)
	Bucket      Kind = "bucket"      // hash with a tokens field and a refill time field (token bucket)
	GCRA        Kind = "gcra"        // string or hash field holding a theoretical arrival time
	// SlidingCounter is one of a pair of fixed-window counters <id>:<index> and
	// <id>:<index-1> that together estimate a sliding window (upstash/ratelimit's layout).
	SlidingCounter Kind = "sliding_counter"
	Unknown        Kind = "unknown"
)

// ZSetShape is what kind detection looks at in a sorted set.
type ZSetShape struct {
	Key            string
	Size           int64
	TTL            time.Duration // negative: no TTL
	OldestMember   string
	NewestMember   string
	Timestamps     bool // the sampled scores read as plausible times in the resolved unit
	Deadlines      bool // the scores are deadlines (--scores deadline, or guessed)
	Oldest, Newest time.Time
	Now            time.Time
}

// OfZSet decides between concurrency set, window log and unknown. The heuristic, in order:
//
//  1. Structure first: the scores must read as timestamps (the newest score is a plausible time
//     in the resolved unit) and the members must look like request ids (1-128 printable
//     characters without spaces, holding at least one digit: "a1b2c3-17", a UUID, a
//     millisecond timestamp). Otherwise the set is something else (a leaderboard, a queue):
//     unknown.
//  2. Naming hints: a key naming in-flight work (concurren*, inflight, semaphore, funnel, or a
//     "sem", "conc", "lease", "lock" segment) is a concurrency set; one naming a window
//     (sliding, window, or a "log", "sw" segment) is a window log. Both or neither: no hint.
//  3. TTL against score spread: both shipped scripts refresh the TTL on every call (to
//     stale_after, or to twice the window), so TTL + newest age approximates the horizon the
//     set covers. A window log keeps every request of its window, so its members spread over
//     a good part of that horizon; a concurrency set holds requests only while they run, so its
//     members cluster near now against a generous stale_after. Spread of at least a quarter
//     of the horizon: window log; less: concurrency.
//  4. Inconclusive (no TTL, or fewer than two members): window log, the far more common
//     sorted-set limiter.
//
// Scores that are deadlines (after step 2) make a concurrency set: a deadline is a lease's
// expiry, which is how job throttlers (sidekiq-throttled) keep in-flight work.
func OfZSet(s ZSetShape) Kind {
	if !s.Timestamps || !requestID(s.OldestMember) || !requestID(s.NewestMember) {
		return Unknown
	}
	if k, ok := FromName(s.Key); ok {
		return k
	}
	if s.Deadlines {
		return Concurrency
	}
	if s.TTL > 0 && s.Size >= 2 {
		horizon := s.TTL + s.Now.Sub(s.Newest)
		spread := s.Newest.Sub(s.Oldest)
		if spread*4 >= horizon {
			return WindowLog
		}
		return Concurrency
	}
	return WindowLog
}

// requestID reports whether a member looks like a unique request id.
func requestID(m string) bool {
	if len(m) == 0 || len(m) > 128 {
		return false
	}
	digit := false
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c > '~' {
			return false
		}
		if c >= '0' && c <= '9' {
			digit = true
		}
	}
	return digit
}

var (
	concurrencyWords    = []string{"concurren", "inflight", "in_flight", "in-flight", "semaphore", "funnel"}
	concurrencySegments = map[string]bool{"sem": true, "conc": true, "lease": true, "leases": true, "lock": true, "locks": true}
	windowWords         = []string{"sliding", "window"}
	windowSegments      = map[string]bool{"log": true, "sw": true, "swl": true}
)

// FromName reads a naming hint from the key; ok is false when it has none or both.
func FromName(key string) (Kind, bool) {
	lower := strings.ToLower(key)
	segments := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	has := func(words []string, segs map[string]bool) bool {
		for _, w := range words {
			if strings.Contains(lower, w) {
				return true
			}
		}
		for _, s := range segments {
			if segs[s] {
				return true
			}
		}
		return false
	}
	conc, window := has(concurrencyWords, concurrencySegments), has(windowWords, windowSegments)
	switch {
	case conc && !window:
		return Concurrency, true
	case window && !conc:
		return WindowLog, true
	}
	return "", false
}
