package cmd

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"

	"github.com/limitctl/limitctl/internal/bench"
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
	cs := f.IO.ErrColorScheme()
	if format == "table" {
		cs = f.IO.ColorScheme()
	}
	for _, n := range hammer.ClockNotes(res.Options) {
		fmt.Fprintln(words, fitLine(n, width))
	}
	for _, line := range res.VerdictLines(func(word string) string { return paintVerdict(cs, word) }) {
		fmt.Fprintln(words, fitLine(line, width))
	}
	if format != "json" { // the JSON holds the assertions
		for _, line := range res.AssertionLines(func(passed bool, word string) string {
			if passed {
				return cs.Good(word)
			}
			return cs.Bad(word)
		}) {
			fmt.Fprintln(words, line)
		}
	}
	return nil
}

// paintVerdict colours a verdict word by what it claims: a wrong answer on either side of the
// limit (OVERSHOOT, TOO STRICT, both) and errors red, no evidence yellow, exact green; a word
// not named here stays plain rather than be painted as a pass it may not be.
func paintVerdict(cs ColorScheme, word string) string {
	switch word {
	case bench.VerdictOvershoot, bench.VerdictTooStrict, bench.VerdictBoth, bench.VerdictErrors:
		return cs.Bad(word)
	case bench.VerdictNoEvidence:
		return cs.Warn(word)
	case bench.VerdictExact:
		return cs.Good(word)
	}
	return word
}

// fitLine cuts a line to the terminal's width (0: no bound) so that it never wraps; colour
// codes take no room.
func fitLine(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}
