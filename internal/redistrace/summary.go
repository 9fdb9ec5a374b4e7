package redistrace

import (
	"fmt"

	"github.com/limitctl/limitctl/internal/human"
	"math"
	"strconv"
	"strings"
)

// Summary is what one HTTP target's commands show (the JSON's redis, per HTTP strategy).
type Summary struct {
	// Source is how they were read: SourceMonitor or SourceProxy.
	Source   string `json:"source"`
	Decision string `json:"decision"`
	Why      string `json:"why"`
	// Commands counts the commands on the target's identities by name; PerAdmit and
	// PerRefusal are how many of each an admit and a refusal sent, fitted over the run's
	// slices of time (nil without admits, or refusals).
	Commands   map[string]int64   `json:"commands"`
	PerAdmit   map[string]float64 `json:"per_admit"`
	PerRefusal map[string]float64 `json:"per_refusal"`
	// Keys and Clients count the keys touched and the application's connections seen; Dropped
	// the commands beyond what the trace keeps (counted, not kept).
	Keys    int   `json:"keys"`
	Clients int   `json:"clients"`
	Dropped int64 `json:"dropped"`
}

// Line is the summary's line: the decision, why, and the commands an admit and a refusal send.
func (s *Summary) Line() string {
	line := s.Decision + ": " + s.Why
	if per := perText(s.PerAdmit); per != "" {
		line += "; an admit " + per
	}
	if per := perText(s.PerRefusal); per != "" {
		line += "; a refusal " + per
	}
	return line
}

// perText is commands per decision as "GET 1, INCR 1", most first; those under 0.05 left out.
func perText(per map[string]float64) string {
	counts := map[string]int64{}
	for name, v := range per {
		if v >= 0.05 {
			counts[name] = int64(math.Round(v * 10))
		}
	}
	var parts []string
	for _, name := range sortedNames(counts) {
		parts = append(parts, name+" "+strconv.FormatFloat(float64(counts[name])/10, 'f', -1, 64))
	}
	return strings.Join(parts, ", ")
}

// sliceUs is the length of the slices of time the commands per admit and per refusal are
// fitted over: short beside a window, long beside a request's round trip.
const sliceUs = 50_000

// Summaries are every target's summary, by target, once the trace has stopped.
func (t *Tracer) Summaries() []*Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	beginUs := t.sinceBase(t.begin)
	out := make([]*Summary, len(t.tallies))
	for i, ta := range t.tallies {
		decision, why := ta.decide()
		out[i] = &Summary{Source: t.source, Decision: decision, Why: why, Commands: ta.byName, Keys: len(ta.keys),
			Clients: len(ta.clients), Dropped: t.dropped}
		out[i].PerAdmit, out[i].PerRefusal = t.perDecision(i, beginUs, ta)
	}
	return out
}

// Live is a target's summary while the run goes: its decision so far and its commands counted
// ("GET 4,412  INCR 69"), the most first.
func (t *Tracer) Live(target int) (decision, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if target < 0 || target >= len(t.tallies) {
		return "", ""
	}
	ta := t.tallies[target]
	decision, _ = ta.decide()
	var parts []string
	for _, name := range sortedNames(ta.byName) {
		parts = append(parts, name+" "+human.Compact(float64(ta.byName[name])))
	}
	return decision, strings.Join(parts, "  ")
}

// perDecision fits each command's count per slice of the run to a·admits + f·refusals (least
// squares, neither below 0): a and f are the commands an admit and a refusal send. A request's
// commands ran somewhere between its sending and its answer, so it counts in each slice it
// spans by the share of its span there.
func (t *Tracer) perDecision(target int, beginUs int64, ta *tally) (perAdmit, perRefusal map[string]float64) {
	if ta.admits == 0 && ta.refusals == 0 {
		return nil, nil
	}
	type slice struct{ admits, refusals float64 }
	slices := map[int64]*slice{}
	at := func(us int64) int64 { return int64(math.Floor(float64(us) / sliceUs)) }
	for _, r := range t.reqs {
		if r.Target != target || r.NotDecided || !(r.Admitted || r.Refused) {
			continue
		}
		from, to := r.SentUs, max(r.RepliedUs, r.SentUs+1)
		for k := at(from); k <= at(to-1); k++ {
			share := float64(min(to, (k+1)*sliceUs)-max(from, k*sliceUs)) / float64(to-from)
			s := slices[k]
			if s == nil {
				s = &slice{}
				slices[k] = s
			}
			if r.Admitted {
				s.admits += share
			} else {
				s.refusals += share
			}
		}
	}
	counts := map[string]map[int64]float64{}
	for i := range t.cmds {
		c := &t.cmds[i]
		if c.Target != target {
			continue
		}
		if counts[c.Name] == nil {
			counts[c.Name] = map[int64]float64{}
		}
		counts[c.Name][at(c.AtUs-beginUs)]++
	}
	var saa, sff, saf float64
	for _, s := range slices {
		saa, sff, saf = saa+s.admits*s.admits, sff+s.refusals*s.refusals, saf+s.admits*s.refusals
	}
	if ta.admits > 0 {
		perAdmit = map[string]float64{}
	}
	if ta.refusals > 0 {
		perRefusal = map[string]float64{}
	}
	for name, bySlice := range counts {
		var ya, yf float64
		for k, n := range bySlice {
			if s := slices[k]; s != nil {
				ya, yf = ya+s.admits*n, yf+s.refusals*n
			}
		}
		a, f := fit(saa, sff, saf, ya, yf)
		a, f = snap(a, f, float64(ta.admits), float64(ta.refusals), float64(ta.byName[name]))
		if perAdmit != nil {
			perAdmit[name] = round1(a)
		}
		if perRefusal != nil {
			perRefusal[name] = round1(f)
		}
	}
	return perAdmit, perRefusal
}

// fit solves [saa saf; saf sff]·[a f] = [ya yf] with a, f ≥ 0 (the least squares of two
// non-negative unknowns: the unconstrained solution, else the better of the two with one at 0).
func fit(saa, sff, saf, ya, yf float64) (a, f float64) {
	if det := saa*sff - saf*saf; det > 1e-9*saa*sff && saa > 0 && sff > 0 {
		a, f = (ya*sff-yf*saf)/det, (yf*saa-ya*saf)/det
		if a >= 0 && f >= 0 {
			return a, f
		}
	}
	// One of them 0: the other alone.
	var onlyA, onlyF float64
	if saa > 0 {
		onlyA = math.Max(0, ya/saa)
	}
	if sff > 0 {
		onlyF = math.Max(0, yf/sff)
	}
	residual := func(a, f float64) float64 { // up to the constant Σc²
		return a*a*saa + f*f*sff + 2*a*f*saf - 2*a*ya - 2*f*yf
	}
	if residual(onlyA, 0) <= residual(0, onlyF) {
		return onlyA, 0
	}
	return 0, onlyF
}

// snap takes the whole numbers nearest a fit (each rounded down, or that plus one) whose count over the
// run, a·admits + f·refusals, comes nearest the command's total, when one comes within 2% (and
// 2) of it: a request sends a whole number of each command, and the total is exact where the
// fit over slices of time is not (a few admits beside many refusals weigh little in it). A fit
// no whole numbers match (retries, a script loaded once) stands, to a tenth.
func snap(a, f, admits, refusals, total float64) (float64, float64) {
	bestA, bestF, bestErr := a, f, math.Inf(1)
	for _, ca := range []float64{math.Floor(a), math.Floor(a) + 1} {
		for _, cf := range []float64{math.Floor(f), math.Floor(f) + 1} {
			err := math.Abs(ca*admits + cf*refusals - total)
			if err <= 0.02*total+2 && err < bestErr {
				bestA, bestF, bestErr = ca, cf, err
			}
		}
	}
	return bestA, bestF
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// String is the summary in one line with its source, for logs and tests.
func (s *Summary) String() string { return fmt.Sprintf("%s (%s)", s.Line(), s.Source) }
