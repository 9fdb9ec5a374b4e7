package ciformat

import (
	"time"

	"github.com/limitctl/limitctl/internal/lint"
)

// LintRun is one lint run as the CI formats report it: every file checked, in the order given
// (a clean file is a passing test case too), and what was found.
type LintRun struct {
	Files       []LintedFile
	Diagnostics []lint.Diagnostic
	// Strict: warnings fail the check too (--strict), so they are failures in JUnit.
	Strict bool
	// WorkDir is the directory paths are made relative to: the checkout a CI job runs in.
	WorkDir string
	// Version is limitctl's version, the SARIF tool's.
	Version string
	// Started is when the run began (the JUnit timestamp).
	Started time.Time
}

// LintedFile is one file lint read.
type LintedFile = lint.File

// fails reports whether d fails the run: an error, or with strict a warning too.
func (r LintRun) fails(d lint.Diagnostic) bool {
	return lint.HasErrors([]lint.Diagnostic{d}, r.Strict)
}

// byFile groups the diagnostics by file name, keeping their order.
func (r LintRun) byFile() map[string][]lint.Diagnostic {
	of := map[string][]lint.Diagnostic{}
	for _, d := range r.Diagnostics {
		of[d.File] = append(of[d.File], d)
	}
	return of
}
