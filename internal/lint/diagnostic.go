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
