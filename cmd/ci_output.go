package cmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/buildinfo"
	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// outputsAnnotation lists, on a command, the -o formats only it writes.
const outputsAnnotation = "limitctl/outputs"

// commandOutputs are the -o formats c writes besides tableprint.Formats.
func commandOutputs(c *cobra.Command) []tableprint.Format {
	var formats []tableprint.Format
	for _, name := range strings.Fields(c.Annotations[outputsAnnotation]) {
		formats = append(formats, tableprint.Format(name))
	}
	return formats
}

// writeCI writes a command's CI reports (ciformat.Files) and says where the JUnit report went.
func writeCI(f *Factory, files ciformat.Files, junit, markdown []byte, built error) error {
	wrote, err := files.Write(junit, markdown, built)
	if wrote {
		fmt.Fprintf(f.IO.ErrOut, "JUnit report written to %s\n", files.JUnit)
	}
	return err
}

// checkOutcome returns the command's own outcome when it has one (a failed check stays exit 3
// whatever the formats), after saying on stderr why a CI file could not be written; else the
// write's error.
func checkOutcome(f *Factory, outcome, writeErr error) error {
	if outcome == nil {
		return writeErr
	}
	if writeErr != nil {
		fmt.Fprintf(f.IO.ErrOut, "limitctl: %v\n", writeErr)
	}
	return outcome
}

// writeHammerCI writes what CI reads of a hammer run (ciformat.HammerReports): the --junit
// report, and the Markdown section of $GITHUB_STEP_SUMMARY. Bad input writes nothing.
func writeHammerCI(f *Factory, o *hammerOptions, started time.Time, res hammer.Result, runErr error) error {
	failed := false
	if runErr != nil {
		code, msg := classify(runErr, f.secrets())
		if code == ExitUsage {
			return nil // nothing ran, as with a flag refused before the run
		}
		runErr, failed = errors.New(msg), code == ExitCheckFailed || code == ExitLintRefused
	}
	report, summary, err := ciformat.HammerReports(res, runErr, failed, started, f.Now().Sub(started), buildinfo.Resolve(f.Build).Version)
	return writeCI(f, ciformat.Files{JUnit: o.junit, StepSummary: f.Getenv("GITHUB_STEP_SUMMARY")}, report, summary, err)
}
