package hammer

import (
	"fmt"
	"strings"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

// shippedContract reports whether the custom script runs under the limiter's shipped contract
// because the user gave none of --script-keys, --script-args and --script-allowed.
func shippedContract(o Options) bool {
	if o.ScriptSource == "" {
		return false
	}
	if o.Contract == nil {
		return true
	}
	d, c := limiter.DefaultContract(o.Limiter), o.Contract.Spec
	return c.Keys == d.Keys && c.Args == d.Args && c.Allowed == contract.DefaultAllowed
}

// misfitHint says how a script that does not fit the shipped contract is described instead.
func misfitHint(o Options) string {
	d := limiter.DefaultContract(o.Limiter)
	return fmt.Sprintf("the script was called with the shipped contract (KEYS '%s', ARGV '%s', admitted when %s): if it takes other KEYS or ARGV, or replies otherwise, describe them with --script-keys, --script-args and --script-allowed (limitctl hammer --help)",
		d.Keys, d.Args, contract.DefaultAllowed)
}

// describeContract is the line that says how the custom script is called, before any load, so
// a run whose contract does not fit shows why from its first line.
func describeContract(o Options) string {
	c := o.Contract.Spec
	shipped := limiter.DefaultContract(o.Limiter)
	origin := func(v, d string) string {
		if v == d {
			return " (shipped)"
		}
		return ""
	}
	line := fmt.Sprintf("custom: KEYS %s%s, ARGV %s%s, admitted when %s", quoteTemplate(c.Keys), origin(c.Keys, shipped.Keys),
		quoteTemplate(c.Args), origin(c.Args, shipped.Args), c.Allowed)
	if o.Limiter == limiter.Concurrency {
		line += ", release " + c.Release
	}
	line += ", clock " + c.Clock
	var implied []string
	for _, a := range o.Assertions {
		if a.Implied {
			implied = append(implied, a.Expr)
		}
	}
	if len(implied) > 0 {
		line += ", judged by " + strings.Join(implied, " and ") + " (give --assert on custom.overshoot or custom.false_rejects to set another bound)"
	}
	return line
}

func quoteTemplate(t string) string {
	if strings.TrimSpace(t) == "" {
		return "(none)"
	}
	return "'" + t + "'"
}
