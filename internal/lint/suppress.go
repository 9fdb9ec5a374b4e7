package lint

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// ignoreDirective is a comment line `-- limitctl:ignore rule[, rule...]`,
// optionally followed by ` -- reason`. It silences those rules on the next
// line only, so a suppression cannot outlive the code it was written for.
var ignoreDirective = regexp.MustCompile(`^[ \t]*--[ \t]*limitctl:ignore\b(.*)$`)

// ignoredRules returns the rules the line before line (1-based) silences.
func ignoredRules(lines []string, line int) []string {
	if line < 2 || line-2 >= len(lines) {
		return nil
	}
	m := ignoreDirective.FindStringSubmatch(lines[line-2])
	if m == nil {
		return nil
	}
	names, _, _ := strings.Cut(m[1], "--")
	return strings.FieldsFunc(names, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// suppress drops the diagnostics that an ignore comment silences. A syntax
// error cannot be silenced: it means nothing else in the file was checked.
func suppress(ds []Diagnostic, lines []string) []Diagnostic {
	kept := ds[:0]
	for _, d := range ds {
		if d.Rule == RuleSyntax || !slices.Contains(ignoredRules(lines, d.Line), d.Rule) {
			kept = append(kept, d)
		}
	}
	return kept
}
