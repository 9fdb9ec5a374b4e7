package lint

import (
	"fmt"
	"slices"
	"strings"
)

// Severities of a Diagnostic.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Diagnostic is one finding in one script. Its JSON shape is the contract of
// `limitctl lint -o json`: field names scripts and CI parse.
type Diagnostic struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Rule     string `json:"rule"`
	Message  string `json:"message"`
}

// String formats d as `file:line:col: severity: rule: message`, the shape
// compilers use, so editors can jump to the line.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s: %s", d.File, d.Line, d.Col, d.Severity, d.Rule, d.Message)
}

// LineWidth bounds a diagnostic line on a terminal or in a CI log.
const LineWidth = 100

// Fit is String fitted to width columns for a terminal or a log: the message's first clause
// (what was found, before the first "; " or ": " outside brackets and quotes) when the whole
// message does not fit, else the rule's few words; the whole message is the explanation
// (Message, in JSON and behind lint --explain). A line that fits stays whole.
func (d Diagnostic) Fit(width int) string {
	full := d.String()
	if len([]rune(full)) <= width {
		return full
	}
	head := fmt.Sprintf("%s:%d:%d: %s: %s: ", d.File, d.Line, d.Col, d.Severity, d.Rule)
	if brief := firstClause(d.Message); len([]rune(head+brief)) <= width {
		return head + brief
	}
	for _, r := range rules {
		if r.Name == d.Rule {
			return head + r.Short
		}
	}
	return full
}

// Explanation is the whole message as lines indented by four spaces and wrapped to width, to
// print under the line Fit gave.
func (d Diagnostic) Explanation(width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(d.Message) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width-4 {
			lines, line = append(lines, "    "+line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, "    "+line)
}

// firstClause is s up to its first "; " or ": " outside brackets and quotes.
func firstClause(s string) string {
	depth, quote := 0, rune(0)
	for i, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case depth == 0 && (c == ';' || c == ':') && strings.HasPrefix(s[i+1:], " "):
			return s[:i]
		}
	}
	return s
}

// HasErrors reports whether ds should fail a check: any error, or with strict
// any warning too.
func HasErrors(ds []Diagnostic, strict bool) bool {
	for _, d := range ds {
		if d.Severity == SeverityError || strict && d.Severity == SeverityWarning {
			return true
		}
	}
	return false
}

// sortDiagnostics orders by line, column and rule; the message breaks the
// remaining ties so the output never depends on walk order.
func sortDiagnostics(ds []Diagnostic) {
	slices.SortFunc(ds, func(a, b Diagnostic) int {
		if c := a.Line - b.Line; c != 0 {
			return c
		}
		if c := a.Col - b.Col; c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}
