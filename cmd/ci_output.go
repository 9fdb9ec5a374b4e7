package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/scriptcache"
)

// outputsAnnotation lists, on a command, the -o formats only it writes.
const outputsAnnotation = "limitctl/outputs"

// lintOutputs are lint's formats for CI: a SARIF log for code scanning and GitHub Actions
// annotations.
var lintOutputs = []string{"sarif", "github"}

// commandOutputs are the -o formats c writes besides table, json and tsv.
func commandOutputs(c *cobra.Command) []string {
	return strings.Fields(c.Annotations[outputsAnnotation])
}

// writeJUnit writes a --junit report, replacing the file.
func writeJUnit(f *Factory, path string, report []byte, err error) error {
	if err == nil {
		err = os.WriteFile(path, report, 0o644)
	}
	if err != nil {
		return fmt.Errorf("--junit %s: %v", path, scriptcache.UnwrapPathError(err))
	}
	fmt.Fprintf(f.IO.ErrOut, "JUnit report written to %s\n", path)
	return nil
}

// appendStepSummary appends Markdown to the file GitHub Actions names in $GITHUB_STEP_SUMMARY;
// without it nothing is written.
func appendStepSummary(f *Factory, markdown []byte) error {
	path := f.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = fh.Write(markdown)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY %s: %v", path, scriptcache.UnwrapPathError(err))
	}
	return nil
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

// writeHammerCI writes what CI reads of a hammer run: the --junit report, and the Markdown
// section of $GITHUB_STEP_SUMMARY. A run that ended without a result (runErr) is reported as a
// JUnit error, or a failure when it failed a check (the script's lint); bad input writes nothing.
func writeHammerCI(f *Factory, o *hammerOptions, started time.Time, res hammer.Result, runErr error) error {
	var junitErr error
	var report, summary []byte
	if runErr != nil {
		code, msg := classify(runErr, f.secrets())
		if code == ExitUsage {
			return nil // bad input: nothing ran, as with a flag refused before the run
		}
		runErr = errors.New(msg)
		report, junitErr = ciformat.ErrorJUnit("hammer", started, f.Now().Sub(started), runErr, code == ExitCheckFailed)
		summary = ciformat.ErrorStepSummary("hammer", runErr, code == ExitCheckFailed)
	} else {
		report, junitErr = ciformat.HammerJUnit(res, started, resolveVersion(f.Build).Version)
		summary = ciformat.HammerStepSummary(res)
	}
	if o.junit != "" {
		junitErr = writeJUnit(f, o.junit, report, junitErr)
	} else {
		junitErr = nil
	}
	return errors.Join(junitErr, appendStepSummary(f, summary))
}
