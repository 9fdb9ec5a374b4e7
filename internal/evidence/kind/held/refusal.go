package held

import (
	"math"
	"slices"
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// heldJudge judges a concurrency limiter's refusals.
//
// Rule: a request j is possibly held at instant t when its acquire can have run by then
// (sent <= t) and it was not yet released: its release had not been answered (a release runs
// before its reply comes back), or it never succeeded. A correct limiter decides k at one
// instant t in [sent_k, replied_k], and every member it counts then is a request possibly held
// at t (a refused request adds none). So if, at every t in that interval, fewer than limit
// requests were possibly held, the limiter had room whenever it decided: k is a false reject.
// This is a pointwise bound (the most held at any one instant), not a count of the requests
// that overlapped the interval, which would be too blunt to prove anything under load.
//
// A request whose release failed, whose acquire errored (it may have admitted, at any time
// after it was sent), or that ran with --on-error open, holds its slot until stale-after
// reclaims it. Limiters reclaim on two clocks, and a correct one may use either: by the time
// it was given (ZREMRANGEBYSCORE -inf now-stale_after: the member's stamp), or by the server's
// clock (a slot key SET with EX stale_after, a deadline on TIME). Such a request counts at k
// unless both have certainly passed: k's stamp is stale-after past the member's, and k was sent
// stale-after past the member's acquire reply on the monotonic clock (plus the server clock's
// rate and the rounding of stale-after to the unit the script is given it in). An acquire whose
// outcome is unknown may run after its error came back, so on the server's clock it is never
// certainly reclaimed. A script that is not given stale-after may hold a failed slot for ever.
//
// An abandoned request (Config.Abandon: admitted, never released, as by a crashed client) is
// such a request, held from its sending until stale-after reclaims it on both clocks. So a
// refusal for which fewer than limit requests are possibly held, where the others the limiter
// counts can only be abandoned requests stale-after past, is a false reject like any other:
// a correct limiter had reclaimed them. The stamps carry each worker's skew as the script was
// given it, and the limiter compares exactly those, so the skew needs no allowance of its own;
// the unit stale-after is given in and the time's quantum do (newHeldJudge). The evidence names
// how many of the limit only such abandoned requests can fill (abandoned_reclaimable).
type heldJudge struct {
	limit      int64
	staleStamp int64 // µs: stamps this far apart certainly reclaim; forever when never
	staleMono  int64 // µs: sent this long after the acquire's reply certainly reclaims; forever when never
	maxOpen    int

	spans []heldSpan // released requests: held over [from, to]
	open  []openHold // requests held until stale-after reclaims them
	// Requests forgotten while still possibly held: a refusal is judged only when every one of
	// them is certainly reclaimed for it (its stamp at or after blindStamp, sent at or after
	// blindMono).
	blindStamp, blindMono int64
	// reclaimedGone counts the abandoned requests settle forgot as reclaimed for every later
	// refusal: each is one a wrong limiter may still count.
	reclaimedGone int64
}

type heldSpan struct{ from, to int64 }

// maxOpenHolds bounds the requests of unknown fate a key keeps (an outage makes many).
const maxOpenHolds = 65536

type openHold struct {
	from      int64 // sent: held from then
	cut       int64 // the monotonic time after which stale-after runs (the acquire's reply); forever when unknown
	stamp     int64 // the latest stamp the limiter can have scored it by
	abandoned bool  // never released on purpose (Config.Abandon)
}

func newHeldJudge(s refusal.Spec) *heldJudge {
	j := &heldJudge{limit: s.Limit, staleStamp: refusal.Forever, staleMono: refusal.Forever, maxOpen: maxOpenHolds}
	if s.StaleAfter > 0 && !s.Rules.NoStaleAfter {
		// A script may round stale-after up to a whole number of the unit it is given it in
		// (EXPIRE of ceil seconds: a whole number of seconds stays as it is), a millisecond more
		// for the rounding of milliseconds, and compare times rounded to the unit it is given
		// them in, on either side of the comparison.
		stale := s.StaleAfter + 1000
		if u := s.Rules.StaleUnit.Microseconds(); u > 1000 {
			stale = (s.StaleAfter+u-1)/u*u + 1000
		}
		j.staleStamp = stale + 2*s.Grain()
		j.staleMono = stale + refusal.TTLSlack(s.StaleAfter)
		if s.Server {
			j.staleStamp = j.staleMono // the stamps are the monotonic [sent, replied] already
		}
	}
	return j
}

func (j *heldJudge) Add(calls []evidence.Decision) {
	for _, c := range calls {
		switch {
		case c.Outcome == evidence.Admitted && c.ReleaseOK:
			j.spans = append(j.spans, heldSpan{c.SentUs, c.ReleasedUs})
		case c.Outcome == evidence.Admitted:
			j.open = append(j.open, openHold{from: c.SentUs, cut: c.RepliedUs, stamp: c.ClockHiUs, abandoned: c.Abandoned})
		default:
			j.open = append(j.open, openHold{from: c.SentUs, cut: refusal.Forever, stamp: c.ClockHiUs})
		}
	}
}

// reclaimed reports whether every correct limiter has certainly reclaimed h by a decision
// sent at sent with its stamp no earlier than stamp.
func (j *heldJudge) reclaimed(h openHold, stamp, sent int64) bool {
	return after(h.stamp, j.staleStamp) <= stamp && after(h.cut, j.staleMono) <= sent
}

// after is t + d, where either may be forever.
func after(t, d int64) int64 {
	if t >= refusal.Forever-d || d == refusal.Forever {
		return refusal.Forever
	}
	return t + d
}

func (j *heldJudge) Judge(ready []*refusal.Group, _ int64, verdict refusal.Verdict) {
	sort.Slice(j.spans, func(a, b int) bool { return j.spans[a].from < j.spans[b].from })
	var active []heldSpan
	next := 0
	var starts, ends []int64
	for _, g := range ready {
		a, b := g.SentMin, g.RepliedMax
		if g.StampLo < j.blindStamp || a < j.blindMono {
			continue
		}
		held, reclaimed := int64(0), j.reclaimedGone
		for _, h := range j.open {
			switch {
			case h.from > b:
			case !j.reclaimed(h, g.StampLo, a):
				held++
			case h.abandoned:
				reclaimed++
			}
			if held >= j.limit {
				break
			}
		}
		if held >= j.limit {
			continue
		}
		// The groups come in order of a, so a span that ended before a is done with.
		for next < len(j.spans) && j.spans[next].from <= b {
			active = append(active, j.spans[next])
			next++
		}
		live := active[:0]
		for _, s := range active {
			if s.to >= a {
				live = append(live, s)
			}
		}
		active = live
		starts, ends = starts[:0], ends[:0]
		for _, s := range active {
			if s.from <= b {
				starts = append(starts, max(s.from, a))
				ends = append(ends, s.to)
			}
		}
		if held+int64(len(starts)) >= j.limit {
			held += mostAtOnce(starts, ends)
		} else {
			held += int64(len(starts))
		}
		if held < j.limit {
			verdict(g, held, math.NaN(), min(reclaimed, j.limit-held))
		}
	}
}

// mostAtOnce is the most of the closed intervals [starts[i], ends[i]] covering one instant;
// every start is within the judged interval, so the most is found at one of them.
func mostAtOnce(starts, ends []int64) int64 {
	slices.Sort(starts)
	slices.Sort(ends)
	most, ended := int64(0), 0
	for i, at := range starts {
		for ended < len(ends) && ends[ended] < at {
			ended++
		}
		most = max(most, int64(i+1-ended))
	}
	return most
}

// AddRefused implements Rule: a refusal holds nothing.
func (j *heldJudge) AddRefused(*refusal.Group) {}

func (j *heldJudge) Settle(floor int64) {
	spans := j.spans[:0]
	for _, s := range j.spans {
		if s.to >= floor { // a later refusal is sent at or after floor: an earlier span cannot overlap it
			spans = append(spans, s)
		}
	}
	j.spans = spans
	open := j.open[:0]
	for _, h := range j.open {
		if after(h.cut, j.staleMono) <= floor {
			// Reclaimed on the server's clock for every later refusal; on the stamps' clock for
			// every one stamped from blindStamp on, and the others are not judged.
			j.blindStamp = max(j.blindStamp, after(h.stamp, j.staleStamp))
			if h.abandoned {
				j.reclaimedGone++
			}
			continue
		}
		open = append(open, h)
	}
	j.open = open
	if len(j.open) > j.maxOpen {
		// Too many requests of unknown fate to keep (an outage): forget the oldest, and judge no
		// refusal for which one of them may still count.
		sort.Slice(j.open, func(a, b int) bool { return j.open[a].stamp < j.open[b].stamp })
		for _, h := range j.open[:len(j.open)-j.maxOpen] {
			j.blindStamp = max(j.blindStamp, after(h.stamp, j.staleStamp))
			j.blindMono = max(j.blindMono, after(h.cut, j.staleMono))
		}
		j.open = append(j.open[:0], j.open[len(j.open)-j.maxOpen:]...)
	}
}
