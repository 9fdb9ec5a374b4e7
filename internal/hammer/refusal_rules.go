package hammer

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
)

// RefusalRules reads from a strategy's calling contract what its limiter may rightly do, so
// the false-reject judges allow for it: whether a bucket may refill in steps, the unit the
// script is given stale-after in, whether the concurrency slots are released at all (the
// window's alignment and the time's quantum are the contract's EpochAligned and TimeQuantum).
// The shipped strategies are given a rate and stale-after in milliseconds, and release their
// members.
func RefusalRules(o Options, st limiter.Strategy) (rules refusal.Rules) {
	if st != limiter.Custom || o.Contract == nil {
		return rules
	}
	c := o.Contract
	d := o.Limiter.Describe()
	// Given the window, a bucket may refill so many tokens per window, in steps; given only a
	// rate, it refills continuously (the other kinds' rules do not read it).
	if c.Uses("window_ms", "window_s", "window_us", "window_ns", "window_index", "prev_window_index", "window_start_ms") {
		rules.RefillStep = o.Window
	}
	if d.Releases {
		// Told no stale time, by the contract or by --stale-after (a time fixed in the script's
		// code), a script may be a plain semaphore, which never reclaims.
		rules.NoStaleAfter = !c.Uses("stale_after_ms", "stale_after_s") && !o.StaleAfterGiven
		if c.Uses("stale_after_s") {
			rules.StaleUnit = time.Second
		}
		rules.NoRelease = !c.Releases()
	}
	return rules
}
