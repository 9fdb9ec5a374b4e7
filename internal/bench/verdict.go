package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/human"
)

// MaxErrorRate is the share of a strategy's decisions that may fail before the run does: past
// it the strategy's numbers describe an outage, not the limiter. --inject and --on-error open
// ask for errors, so they lift the rule.
const MaxErrorRate = 0.01

// Verdict words, one per strategy after a run.
const (
	VerdictOvershoot  = "OVERSHOOT"
	VerdictErrors     = "errors"
	VerdictNoEvidence = "no evidence"
	VerdictHeld       = "held"
)

// Verdict says in plain words who overshot, by how much, and on what evidence: Word is one of
// the Verdict constants, Text the numbers behind it ("peak 64 of 20 (+44), 29,022 events in
// 8.0s"). The summary's verdict lines, the HTML report and anything else that judges a
// strategy for a person read it from here, so they never disagree.
type Verdict struct {
	Word, Text string
}

// Judge gives a strategy's verdict over a run of duration d against limit. OVERSHOOT stands on
// its evidence whatever else happened; otherwise errors on more than MaxErrorRate of decisions
// leave the limiter unjudged; otherwise a strategy that never contended the limit proved
// nothing; otherwise it held. Admits too late to judge and failed releases are added when there
// were any.
func (st StrategySnapshot) Judge(limit int64, d time.Duration) Verdict {
	peak := fmt.Sprintf("peak %s of %s", human.Count(st.Peak), human.Count(limit))
	var v Verdict
	switch {
	case st.Overshoot > 0:
		v = Verdict{VerdictOvershoot, fmt.Sprintf("%s (+%s), %s %s in %s", peak, human.Count(st.Overshoot),
			human.Count(st.OvershootEvent), human.Plural(st.OvershootEvent, "event", "events"), human.Clock(d))}
		if st.FailOpenAdmits > 0 {
			v.Text += fmt.Sprintf(", %s admitted failing open", human.Count(st.FailOpenAdmits))
		}
	case st.TooManyErrors():
		v = Verdict{VerdictErrors, fmt.Sprintf("%s of %s decisions failed (%s); %s", human.Count(st.Errors),
			human.Count(st.Attempts), strings.Join(human.ErrorKinds(st.ErrorsByKind), ", "), peak)}
	case !st.Contended:
		v = Verdict{VerdictNoEvidence, peak + ": the limit was never reached, so nothing was tested"}
	default:
		v = Verdict{VerdictHeld, fmt.Sprintf("%s, 0 events", peak)}
		if st.Errors > 0 {
			v.Text += fmt.Sprintf(" (%s %s)", human.Count(st.Errors), human.Plural(st.Errors, "error", "errors"))
		}
	}
	if st.Unjudged > 0 {
		v.Text += fmt.Sprintf(", %s %s too late to judge", human.Count(st.Unjudged), human.Plural(st.Unjudged, "admit", "admits"))
	}
	if st.ReleaseErrors > 0 {
		v.Text += fmt.Sprintf(", %s %s failed", human.Count(st.ReleaseErrors), human.Plural(st.ReleaseErrors, "release", "releases"))
	}
	return v
}

// TooManyErrors reports whether more than MaxErrorRate of the strategy's decisions failed.
func (st StrategySnapshot) TooManyErrors() bool {
	return st.Attempts > 0 && float64(st.Errors) > MaxErrorRate*float64(st.Attempts)
}
