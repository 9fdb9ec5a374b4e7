package cmd

import (
	"fmt"

	"github.com/limitctl/limitctl/internal/hammer"
)

// writeHammerSummary prints the final summary of hammer and hammer report. On a terminal (-o
// table): the strategies table fitted to its width, the run's shape, one verdict line per
// strategy, the assertions. Otherwise stdout holds only the data (tsv or JSON) and the verdicts
// and assertions go to stderr, so a CI log still has a line a person reads at a glance. The
// error samples go to stderr in every format.
func writeHammerSummary(f *Factory, format string, res hammer.Result) error {
	for _, line := range res.ErrorSampleLines() {
		fmt.Fprintln(f.IO.ErrOut, line)
	}
	width := f.IO.TerminalWidth()
	if err := writeResult(f.IO.Out, width, format, res); err != nil {
		return err
	}
	words := f.IO.ErrOut
	if format == "table" {
		words = f.IO.Out
		fmt.Fprintln(words)
		for _, line := range res.ShapeLines() {
			fmt.Fprintln(words, fitLine(line, width))
		}
	} else {
		width = 0 // stderr: whole lines in a log; cut only to a $COLUMNS given for a terminal
		if f.IO.StderrTTY {
			width = f.IO.Columns
		}
	}
	for _, line := range res.VerdictLines() {
		fmt.Fprintln(words, fitLine(line, width))
	}
	if format != "json" { // the JSON holds the assertions
		for _, line := range res.AssertionLines() {
			fmt.Fprintln(words, line)
		}
	}
	return nil
}

// fitLine cuts a line to the terminal's width (0: no bound) so that it never wraps.
func fitLine(s string, width int) string {
	if width <= 0 || len([]rune(s)) <= width {
		return s
	}
	return string([]rune(s)[:width-1]) + "…"
}
