package ciformat

import (
	"fmt"
	"strings"
	"time"
)

// LintJUnit is the run as JUnit XML: a suite "limitctl lint", a test case per file (classname
// lint, the path as name) with one failure per diagnostic that fails the run (errors; warnings
// too with Strict), each naming line, column, rule and message. Every diagnostic of the file,
// warnings included, is also in its system-out: Jenkins and GitLab show only a test case's first
// failure.
func LintJUnit(r LintRun) ([]byte, error) {
	of := r.byFile()
	var cases []junitCase
	var total time.Duration
	for _, f := range r.Files {
		path, inside := relPath(r.WorkDir, f.Name)
		c := junitCase{Classname: "lint", Name: path, Time: seconds(f.Elapsed)}
		if inside {
			c.File = path
		}
		var out strings.Builder
		for _, d := range of[f.Name] {
			line := fmt.Sprintf("%s:%d:%d: %s: %s: %s", path, d.Line, d.Col, d.Severity, d.Rule, d.Message)
			out.WriteString(line + "\n")
			if r.fails(d) {
				c.Failures = append(c.Failures, junitResult{
					Message: fmt.Sprintf("%d:%d: %s: %s", d.Line, d.Col, d.Rule, d.Message), Type: d.Rule, Text: line})
			}
		}
		c.SystemOut = out.String()
		cases = append(cases, c)
		total += f.Elapsed
	}
	return junitDocument(junitSuiteOf("limitctl lint", r.Started, total, nil, cases))
}
