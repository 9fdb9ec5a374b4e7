package verdict

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
)

// MaxErrorRate is the share of a strategy's decisions that may fail before the run does: past
// it the strategy's numbers describe an outage, not the limiter. --inject and --on-error open
// ask for errors, so they lift the rule.
const MaxErrorRate = 0.01

// Verdict words, one per strategy after a run (SPEC section 8).
const (
	Overshoot  = "OVERSHOOT"
	TooStrict  = "TOO STRICT"
	Both       = Overshoot + ", " + TooStrict
	Errors     = "errors"
	NoEvidence = "no evidence"
	NotJudged  = "not judged"
	Exact      = "exact"
	// Leaks stands beside exact, OVERSHOOT and TOO STRICT ("exact, LEAKS"), and alone
	// where the limit's side proved nothing (no evidence, not judged, errors).
	Leaks = "LEAKS"
)

// Tone is what every view colours a verdict by; its value is the class the HTML report styles.
type Tone string

// The tones.
const (
	ToneGood Tone = "good" // judged, nothing wrong found
	ToneWarn Tone = "warn" // nothing proven either way
	ToneBad  Tone = "bad"  // proven wrong: overshoot, refusals with room, keys that never go away
)

// Verdict says in plain words who overshot or refused with room, by how much, and on what
// evidence: Word is one of the Verdict constants, Text the numbers behind it ("peak 64 of 20
// (+44), 29,022 events in 8.0s"). The summary's verdict lines, the HTML report and anything
// else that judges a strategy for a person read it from here, so they never disagree.
type Verdict struct {
	Word, Text string
}

// Tone is how the verdict reads at a glance, the same in every view (ToneGood, ToneWarn,
// ToneBad): anything proven wrong is bad, a verdict without evidence either way is a warning;
// "" for a word that is none of the verdicts, which a view leaves plain rather than pass it for
// good.
func (v Verdict) Tone() Tone {
	switch {
	case strings.Contains(v.Word, Overshoot), strings.Contains(v.Word, TooStrict),
		strings.Contains(v.Word, Leaks):
		return ToneBad
	case v.Word == Exact:
		return ToneGood
	case v.Word == NoEvidence, v.Word == NotJudged, v.Word == Errors:
		return ToneWarn
	}
	return ""
}

// Badge is the label every view shows in the verdict's coloured box, painted by its Tone: the
// verdict's word ("exact", "OVERSHOOT", "exact, LEAKS"), the same on the terminal, the dashboard,
// the HTML report and the step summary.
func (v Verdict) Badge() string { return v.Word }

// Leaking reports whether the verdict found keys left behind.
func (v Verdict) Leaking() bool { return strings.Contains(v.Word, Leaks) }

// Judge gives a strategy's verdict over a run of duration d of a kind limiter against limit.
// OVERSHOOT and TOO STRICT stand on their evidence whatever else happened (both when both);
// otherwise errors on more than MaxErrorRate of decisions leave the limiter unjudged;
// otherwise a strategy that never contended the limit proved nothing; otherwise it was exact:
// contended, never over the limit, never refusing with room. Admits too late to judge, failed
// releases and refusals left unjudged are added when there were any.
func Judge(st bench.StrategySnapshot, kind limiter.Kind, limit int64, d time.Duration) Verdict {
	peak := fmt.Sprintf("peak %s of %s", human.Count(st.Peak), human.Count(limit))
	var v Verdict
	over := func() string {
		t := fmt.Sprintf("%s (+%s), %s %s in %s", peak, human.Count(st.Overshoot),
			human.Count(st.OvershootEvent), human.Plural(st.OvershootEvent, "event", "events"), human.Clock(d))
		if st.FailOpenAdmits > 0 {
			t += fmt.Sprintf(", %s admitted failing open", human.Count(st.FailOpenAdmits))
		}
		return t
	}
	switch {
	case st.Overshoot > 0 && st.FalseRejects > 0:
		v = Verdict{Both, over() + dropped(st) + "; " + tooStrict(st, kind)}
	case st.Overshoot > 0:
		v = Verdict{Overshoot, over() + dropped(st)}
	case st.FalseRejects > 0:
		v = Verdict{TooStrict, tooStrict(st, kind)}
	case TooManyErrors(st):
		v = Verdict{Errors, fmt.Sprintf("%s of %s decisions failed (%s); %s", human.Count(st.Errors),
			human.Count(st.Attempts), strings.Join(human.ErrorKinds(st.ErrorsByKind), ", "), peak)}
	case !st.Contended:
		v = Verdict{NoEvidence, peak + ": the limit was never reached, so nothing was tested"}
	case WhyNotJudged(st, kind, limit) != "":
		v = Verdict{NotJudged, peak + ": " + WhyNotJudged(st, kind, limit) + firstHitHint(st)}
	default:
		v = Verdict{Exact, fmt.Sprintf("%s, 0 events, 0 false rejects", peak)}
		if st.NoRefusalJudged {
			v.Text = fmt.Sprintf("%s, 0 events", peak)
		}
		if st.CaughtFrom != nil && *st.CaughtFrom > 1 {
			v.Text += "; " + Escaped(*st.CaughtFrom, kind) + " where it was thinnest"
		}
		v.Text += firstHitHint(st)
		if st.Errors > 0 {
			v.Text += fmt.Sprintf(" (%s %s)", human.Count(st.Errors), human.Plural(st.Errors, "error", "errors"))
		}
	}
	if st.RefusalsUnjudged != "" && st.Rejected > 0 {
		v.Text += "; refusals not judged: " + st.RefusalsUnjudged
	}
	if late := st.Unjudged - st.Unbounded; late > 0 {
		v.Text += fmt.Sprintf(", %s %s too late to judge", human.Count(late), human.Plural(late, "admit", "admits"))
	}
	if st.Unbounded > 0 {
		v.Text += fmt.Sprintf(", %s %s not judged (no start or end in time order)", human.Count(st.Unbounded), human.Plural(st.Unbounded, "admit", "admits"))
	}
	if st.ReleaseErrors > 0 {
		v.Text += fmt.Sprintf(", %s %s failed", human.Count(st.ReleaseErrors), human.Plural(st.ReleaseErrors, "release", "releases"))
	}
	if st.Abandoned > 0 {
		v.Text += fmt.Sprintf(", %s abandoned", human.Count(st.Abandoned))
	}
	if st.Leaks != nil && st.Leaks.Total() > 0 {
		switch v.Word {
		case Exact, Overshoot, TooStrict, Both:
			v.Word += ", " + Leaks
			v.Text = leaksText(*st.Leaks) + "; " + v.Text
		default:
			v.Word, v.Text = Leaks, leaksText(*st.Leaks)+"; "+v.Word+": "+v.Text
		}
	}
	return v
}

// WhyNotJudged says why the evidence cannot back a verdict of exact although the limit was
// contended, or "" when it can: when the allowances (skew, lateness, the server's clock, calls
// slower than a window) left admits unjudged and no more of them judged than its limit (an
// overshoot needs one more than the limit judged together; a run that admitted only the limit,
// all judged, was judged), or when the
// limiter refused while the evidence's peak stayed 0 (a lateness as long as the window lets
// every window start anywhere, so no set of admits is ever proven together), 0 overshoot and 0
// false rejects say nothing about the limiter. A strategy with an overshoot or a false reject
// proven is judged: its evidence stands.
func WhyNotJudged(st bench.StrategySnapshot, kind limiter.Kind, limit int64) string {
	if st.Admitted == 0 || st.Overshoot > 0 || st.FalseRejects > 0 {
		return ""
	}
	if why := powerTooWeak(st, kind, limit); why != "" {
		return why
	}
	by := st.Allowances
	if by == "" {
		by = "calls slower than the evidence allows"
	}
	switch {
	case st.Unjudged >= st.Admitted:
		return by + " left no admit judged"
	case st.Unjudged > 0 && st.Admitted-st.Unjudged <= limit:
		return fmt.Sprintf("%s left %s of %s admits unjudged: no more than the limit were judged, so none could be proven one too many",
			by, human.Count(st.Unjudged), human.Count(st.Admitted))
	case st.Rejected > 0 && st.Peak == 0:
		return "the limiter refused, but the evidence never saw a request admitted (or held) with another: " + by + " blur every window"
	}
	return ""
}

// LoadOnFor says why a run should load on for st's evidence so far (its power included), or "":
// the only verdict it could give is "not judged", for a reason more of the same load removes (too
// few admits judged together, an overshoot proven no better than the limit). A strategy proven
// wrong, never contended or failing its calls gains nothing from more of the same.
func LoadOnFor(st bench.StrategySnapshot, kind limiter.Kind, limit int64) string {
	if !st.Contended || TooManyErrors(st) {
		return ""
	}
	return WhyNotJudged(st, kind, limit)
}

// powerTooWeak says why the evidence's power is no better than the limit itself (SPEC section
// 10), or "": an overshoot it would first have proven is the limit or more (doubling, or more,
// may have gone unseen), or none it searched for. A power of +1 is the best there is, whatever
// the limit. Live snapshots carry no power: nothing is said of them.
func powerTooWeak(st bench.StrategySnapshot, kind limiter.Kind, limit int64) string {
	if st.CaughtFrom == nil {
		return ""
	}
	k := *st.CaughtFrom
	unit := perWindow(kind)
	switch {
	case k == 0:
		return fmt.Sprintf("an overshoot of up to +%s %s could have escaped this evidence (%s)",
			human.Count(fold.PowerSearched(limit)), unit, orCalls(st.Allowances))
	case k > 1 && k >= limit:
		return fmt.Sprintf("%s, so it proves nothing short of the limit itself (%s)", Escaped(k, kind), orCalls(st.Allowances))
	}
	return ""
}

// Escaped is what a power of k (CaughtFrom: the smallest overshoot the evidence would have
// proven wherever a wrong limiter put it) leaves unproven, in words: "an overshoot of up to +5
// per window could have escaped this evidence". It is a worst case: an overshoot that size
// placed where the evidence was thinnest; one elsewhere, or larger, is caught.
func Escaped(k int64, kind limiter.Kind) string {
	return fmt.Sprintf("an overshoot of up to +%s %s could have escaped this evidence", human.Count(k-1), perWindow(kind))
}

// PowerText is the evidence's power in words, as the HTML report states it for every strategy:
// "an overshoot of +1 per window would have been proven by this run's evidence", or that none of
// up to twice the limit would have been; "" when it was not measured.
func PowerText(st bench.StrategySnapshot, kind limiter.Kind, limit int64) string {
	switch {
	case st.CaughtFrom == nil:
		return ""
	case *st.CaughtFrom == 0:
		return fmt.Sprintf("no overshoot of up to +%s %s would have been proven by this run's evidence",
			human.Count(fold.PowerSearched(limit)), perWindow(kind))
	}
	return fmt.Sprintf("an overshoot of +%s %s would have been proven by this run's evidence",
		human.Count(*st.CaughtFrom), perWindow(kind))
}

// firstHitHint tells, where it is so, that windows anchored at the calls that opened them would
// have seen more than the model every correct fixed window fits: what --window-start first-hit
// would prove, if the limiter's contract says so.
func firstHitHint(st bench.StrategySnapshot) string {
	if st.CaughtFromFirstHit == nil {
		return ""
	}
	return fmt.Sprintf("; with --window-start first-hit (if each window starts at the call that opens it) from +%s",
		human.Count(*st.CaughtFromFirstHit))
}

// perWindow is how an overshoot of the kind is counted: admits over the limit in one window,
// or requests held over the limit at once.
func perWindow(kind limiter.Kind) string { return kind.Describe().Model.Unit() }

// orCalls names what widened the evidence, or the calls' own timing when nothing else did.
func orCalls(allowances string) string {
	if allowances == "" {
		return "the calls' timing"
	}
	return allowances
}

// leaksText is the leaks in words, with the first sample: "left 1 key without a TTL
// (bench:{r}:custom:exp: string of 2, no TTL)".
func leaksText(l bench.Leaks) string {
	var parts []string
	if l.KeysWithoutTTL > 0 {
		parts = append(parts, fmt.Sprintf("%s %s without a TTL", human.Count(l.KeysWithoutTTL), human.Plural(l.KeysWithoutTTL, "key", "keys")))
	}
	if l.KeysTTLTooLong > 0 {
		parts = append(parts, fmt.Sprintf("%s %s with a TTL far beyond the limiter's need", human.Count(l.KeysTTLTooLong), human.Plural(l.KeysTTLTooLong, "key", "keys")))
	}
	text := "left " + strings.Join(parts, " and ")
	if len(l.Samples) > 0 {
		k := l.Samples[0]
		ttl := "no TTL"
		if k.TTLMs >= 0 {
			ttl = "TTL " + ttlText(time.Duration(k.TTLMs)*time.Millisecond)
		}
		text += fmt.Sprintf(" (%s: %s of %s, %s)", k.Key, k.Type, human.Count(k.Size), ttl)
	}
	return text
}

// dropped says, when the first overshoot's trace caught the limiter counting fewer requests than
// it certainly held, that it dropped held requests: "; the limiter counted 4 while 20 were held:
// it dropped held requests (stale time shorter than its clock's unit?)".
func dropped(st bench.StrategySnapshot) string {
	if st.FirstOvershoot == nil || st.FirstOvershoot.DroppedHeld == nil {
		return ""
	}
	d := st.FirstOvershoot.DroppedHeld
	return fmt.Sprintf("; the limiter counted %s while %s were held: it dropped held requests (stale time shorter than its clock's unit?)",
		human.Count(d.Counted), human.Count(d.Held))
}

// tooStrict is the evidence of the false rejects in words, from the one with the least room,
// whose numbers hold for all of them: "refused 1,204 while at most 3 of 20 were held, the first
// at 412ms".
func tooStrict(st bench.StrategySnapshot, kind limiter.Kind) string {
	n, t := human.Count(st.FalseRejects), st.Tightest
	var text string
	switch {
	case t == nil:
		text = "refused " + n + " with room"
	case t.TokensLeft == nil && t.AbandonedReclaimable != nil && *t.AbandonedReclaimable > 0:
		m := *t.AbandonedReclaimable
		text = fmt.Sprintf("refused %s while %s of the %s held %s abandoned more than stale-after ago (at most %s held)", n,
			human.Count(m), human.Count(t.Limit), human.Plural(m, "was", "were"), human.Count(t.HeldOrAdmitted))
	default:
		text = "refused " + n + " while " + t.Counted(kind.Describe().Model, "were")
	}
	if f := st.FirstFalseReject; f != nil {
		text += ", the first at " + human.Latency(time.Duration(f.SentMs*float64(time.Millisecond)))
	}
	return text
}

// TooManyErrors reports whether more than MaxErrorRate of the strategy's decisions failed.
func TooManyErrors(st bench.StrategySnapshot) bool {
	return st.Attempts > 0 && float64(st.Errors) > MaxErrorRate*float64(st.Attempts)
}

// ttlText is a TTL as a person reads it, in days past two of them.
func ttlText(d time.Duration) string {
	if d > 48*time.Hour {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + " days"
	}
	return human.Clock(d)
}

// InSnapshot is st's verdict at the moment snap was taken: what the dashboard asks of each panel.
func InSnapshot(snap bench.Snapshot, st bench.StrategySnapshot) Verdict {
	return Judge(st, snap.Limiter, snap.Limit, snap.Elapsed)
}
