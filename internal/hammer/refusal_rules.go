package hammer

import (
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
)

// RefusalRules reads from a strategy's calling contract what its limiter may rightly do, so
// the false-reject judges allow for it: whether a fixed window is epoch-aligned, the units the
// script is given time and stale-after in, whether a bucket may refill in steps, whether the
// concurrency slots are released at all. The shipped strategies are aligned, given
// milliseconds and a rate, and release their members.
func RefusalRules(o Options, st limiter.Strategy) (epochAligned bool, rules bench.RefusalRules) {
	if st != limiter.Custom || o.Contract == nil {
		return o.Limiter == limiter.FixedWindow, rules
	}
	c := o.Contract
	given := placeholdersIn(c.Spec.Keys + " " + c.Spec.Args)
	// A window named by its index or start is counted on its own key: aligned to the epoch.
	epochAligned = o.Limiter == limiter.FixedWindow && (given["window_index"] || given["prev_window_index"] || given["window_start_ms"])
	if given["now_s_int"] && !given["now_ms"] && !given["now_us"] && !given["now_ns"] && !given["now_s"] {
		rules.TimeUnit = time.Second // whole seconds: every time it compares may be a second off
	}
	// Given the window, a bucket may refill so many tokens per window, in steps; given only a
	// rate, it refills continuously.
	if o.Limiter == limiter.TokenBucket {
		for name := range given {
			if strings.HasPrefix(name, "window_") || name == "prev_window_index" {
				rules.RefillStep = o.Window
			}
		}
	}
	if o.Limiter == limiter.Concurrency {
		rules.NoStaleAfter = !given["stale_after_ms"] && !given["stale_after_s"]
		if given["stale_after_s"] {
			rules.StaleUnit = time.Second
		}
		rules.NoRelease = c.Release == nil
	}
	return epochAligned, rules
}

// placeholdersIn names every placeholder a template uses, also inside arithmetic
// ({now_ms + window_ms} uses now_ms and window_ms); {{ is a literal brace.
func placeholdersIn(template string) map[string]bool {
	names := map[string]bool{}
	for i := 0; i < len(template); i++ {
		if template[i] != '{' {
			continue
		}
		if i+1 < len(template) && template[i+1] == '{' {
			i++
			continue
		}
		end := strings.IndexByte(template[i:], '}')
		if end < 0 {
			break
		}
		for _, word := range strings.FieldsFunc(template[i+1:i+end], func(r rune) bool {
			return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) {
			names[word] = true
		}
		i += end
	}
	return names
}
