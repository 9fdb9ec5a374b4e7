package hammer

import (
	"fmt"
	"strings"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
)

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
	return given.Keys == "" && given.Args == "" && given.Allowed == "" && given.AdmitAt == ""
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
	if c.AdmitAt != "" {
		line += ", going at " + c.AdmitAt + " (ms)"
	}
	if o.Limiter.Describe().Releases {
		if c.ReleaseScript != "" {
			line += fmt.Sprintf(", release script %s with KEYS %s, ARGV %s", c.ReleaseFile, quoteTemplate(c.ReleaseKeys), quoteTemplate(c.ReleaseArgs))
		} else {
			line += ", release " + c.Release
		}
	}
	if n := len(o.Contract.Setup); n > 0 {
		line += fmt.Sprintf(", set up by %d %s on every key before the load", n, human.Plural(n, "step", "steps"))
	}
	line += ", clock " + c.Clock
	if o.Contract.Clock.AnswersTime() {
		line += " (the hammer answers the script's TIME with each call's own time, never going back per key)"
	}
	var names []string
	for _, st := range o.Strategies {
		names = append(names, string(st))
	}
	var implied []string
	for _, a := range o.Rules().assertions(names) {
		if a.Implied {
			implied = append(implied, a.Expr)
		}
	}
	if len(implied) > 0 {
		line += ", judged by " + strings.Join(implied, " and ") + " (give --assert on custom.overshoot, custom.false_rejects or custom.leaks to set another bound)"
	}
	return line
}

func quoteTemplate(t string) string {
	if strings.TrimSpace(t) == "" {
		return "(none)"
	}
	return "'" + t + "'"
}
