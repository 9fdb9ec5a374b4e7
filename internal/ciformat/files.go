package ciformat

import (
	"errors"
	"fmt"
	"io"

	"github.com/limitctl/limitctl/internal/outfile"
)

// Files names where a command's CI reports go; an empty name writes nothing there.
type Files struct {
	JUnit       string // --junit: the file is replaced whole
	StepSummary string // $GITHUB_STEP_SUMMARY: appended to, as every step of a GitHub Actions job does
}

// Write writes the JUnit report and appends the Markdown to the step summary, each where a file
// is named; built is the error of building the JUnit report, reported as that file's. Every
// failure names its file, and the others are still written. wroteJUnit says the JUnit file was.
func (f Files) Write(junit, markdown []byte, built error) (wroteJUnit bool, err error) {
	var errs []error
	if f.JUnit != "" {
		err := built
		if err == nil {
			err = outfile.Write(f.JUnit, func(w io.Writer) error { _, err := w.Write(junit); return err })
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--junit %s: %v", f.JUnit, err))
		}
		wroteJUnit = err == nil
	}
	if f.StepSummary != "" {
		if err := outfile.Append(f.StepSummary, markdown); err != nil {
			errs = append(errs, fmt.Errorf("GITHUB_STEP_SUMMARY %s: %v", f.StepSummary, err))
		}
	}
	return wroteJUnit, errors.Join(errs...)
}
