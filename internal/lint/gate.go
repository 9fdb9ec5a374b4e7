package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
)

// Gate is what a tool about to send a script to Redis (hammer --script)
// should do with its diagnostics: print report, and stop only when block.
// A syntax error does not block: gopher-lua's parser is not Redis' Lua, so
// a script it cannot parse may still compile on the server, which is the
// judge (SCRIPT LOAD refuses what does not). It comes back as a warning that
// says so. Every other error is a defect Redis itself would hit, and blocks.
func Gate(ds []Diagnostic) (report []Diagnostic, block bool) {
	report = make([]Diagnostic, 0, len(ds))
	for _, d := range ds {
		if d.Rule == RuleSyntax {
			d.Severity = SeverityWarning
			d.Message += "; the linter could not check this script, so Redis decides when it loads it"
		} else if d.Severity == SeverityError {
			block = true
		}
		report = append(report, d)
	}
	return report, block
}

// Unparsed reports whether ds say the file did not parse, in which case no
// other rule ran.
func Unparsed(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Rule == RuleSyntax {
			return true
		}
	}
	return false
}

// Refusal is the error of a script lint stopped before any load (exit 4): the rules that
// blocked, where, and the two ways on (a suppression above each line, or --no-lint).
func Refusal(file string, diags []Diagnostic) error {
	var rules []string
	lines := map[string][]string{}
	for _, d := range diags {
		if d.Severity != SeverityError || d.Rule == RuleSyntax {
			continue
		}
		if !slices.Contains(rules, d.Rule) {
			rules = append(rules, d.Rule)
		}
		lines[d.Rule] = append(lines[d.Rule], fmt.Sprint(d.Line))
	}
	found := make([]string, len(rules))
	for i, r := range rules {
		found[i] = fmt.Sprintf("%s (%s %s)", r, human.Plural(len(lines[r]), "line", "lines"), strings.Join(lines[r], ", "))
	}
	return &exitcode.LintRefusedError{Msg: fmt.Sprintf("lint refused %s before any load: %s; fix it, silence a line with '-- limitctl:ignore %s' on the line above it, or pass --no-lint",
		file, strings.Join(found, ", "), strings.Join(rules, ", "))}
}

// WarningsLine is the one line the lint warnings before a run come to: how many, of which rules,
// and the command that lists them.
func WarningsLine(file string, warnings []Diagnostic) string {
	if len(warnings) == 0 {
		return ""
	}
	var rules []string
	for _, d := range warnings {
		if !slices.Contains(rules, d.Rule) {
			rules = append(rules, d.Rule)
		}
	}
	return fmt.Sprintf("lint: %d %s in %s (%s); limitctl lint %s lists them", len(warnings), human.Plural(len(warnings), "warning", "warnings"),
		file, strings.Join(rules, ", "), shellQuote(file))
}

// shellQuote quotes a path for a command line the user may copy, when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' || r == '@' ||
			'0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
