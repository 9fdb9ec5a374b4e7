package hammer

import (
	"fmt"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

// underAdmitted is a notice when the custom strategy admitted far fewer requests than its
// limit allows over the run, though it was contended and nothing errored: the usual sign of a
// contract that fits by accident (a reply read as "admitted" for another reason, an argument
// in the wrong place) rather than a limiter at work. Judge fails the run for it only under the
// shipped contract, which the user did not choose; under the user's own it is a notice: a
// limiter may rightly admit little, and the hammer cannot know the script's intent. A limiter
// whose requests hold slots admits as many as their hold times let it: no estimate there.
func underAdmitted(r Rules, sum bench.Summary) string {
	if r.Limiter.Describe().Releases || r.Window <= 0 || sum.Duration <= 0 {
		return ""
	}
	for _, st := range sum.Strategies {
		if st.Name != string(limiter.Custom) || st.Errors > 0 || !st.Contended {
			continue
		}
		// Under contention a limiter admits about its limit per window of load, and a burst more.
		load := bench.ActiveLoad(r.Profile, r.Window, sum.Duration)
		allowed := float64(r.Limit) * (load.Seconds()/r.Window.Seconds() + 1)
		if float64(st.Admitted) < allowed/2 {
			return fmt.Sprintf("custom admitted %d requests, under half the about %.0f its limit allows in %s of load",
				st.Admitted, allowed, load.Round(time.Millisecond))
		}
	}
	return ""
}

// shippedContract reports whether the custom script runs under the limiter's shipped contract
// because the user gave none of --script-keys, --script-args and --script-allowed.
func (r Rules) shippedContract() bool {
	if !r.Script {
		return false
	}
	if r.Contract == nil {
		return true
	}
	given := *r.Contract
	return given.Keys == "" && given.Args == "" && given.Allowed == ""
}

// misfitHint says how a script that does not fit the shipped contract is described instead.
func misfitHint(k limiter.Kind) string {
	d := limiter.DefaultContract(k)
	return fmt.Sprintf("the script was called with the shipped contract (KEYS '%s', ARGV '%s', admitted when %s): if it takes other KEYS or ARGV, or replies otherwise, describe them with --script-keys, --script-args and --script-allowed (limitctl hammer --help)",
		d.Keys, d.Args, contract.DefaultAllowed)
}

// describeContract is the line that says how the custom script is called, before any load, so
// a run whose contract does not fit shows why from its first line. A template the user did not
// pass is marked (shipped): the limiter's own contract filled it in.
func describeContract(o Options) string {
	c, given := o.Contract.Spec, o.Contract.Given
	origin := func(given string) string {
		if given == "" {
			return " (shipped)"
		}
		return ""
	}
	line := fmt.Sprintf("custom: KEYS %s%s, ARGV %s%s, admitted when %s", quoteTemplate(c.Keys), origin(given.Keys),
		quoteTemplate(c.Args), origin(given.Args), c.Allowed)
	if o.Limiter.Describe().Releases {
		if c.ReleaseScript != "" {
			line += fmt.Sprintf(", release script %s with KEYS %s, ARGV %s", c.ReleaseFile, quoteTemplate(c.ReleaseKeys), quoteTemplate(c.ReleaseArgs))
		} else {
			line += ", release " + c.Release
		}
	}
	line += ", clock " + c.Clock
	if o.Contract.Clock.AnswersTime() {
		line += " (the hammer answers the script's TIME with each call's own time)"
	}
	var names []string
	for _, st := range o.Strategies {
		names = append(names, string(st))
	}
	for _, a := range o.Rules().assertions(names) {
		if a.Implied {
			line += ", judged by " + a.Expr + " (give --assert on custom.overshoot to set another bound)"
		}
	}
	return line
}

func quoteTemplate(t string) string {
	if strings.TrimSpace(t) == "" {
		return "(none)"
	}
	return "'" + t + "'"
}
