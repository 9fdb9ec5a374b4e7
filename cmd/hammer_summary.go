package cmd

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// writeHammerSummary prints the final summary of hammer and hammer report. On a terminal (-o
// table): the strategies table fitted to its width, the run's shape, one verdict line per
// strategy and below them how each first overshoot happened, the assertions. Otherwise stdout
// holds only the data (tsv or JSON) and the verdicts, how-lines and assertions go to stderr, so
// a CI log still has lines a person reads at a glance. The error samples go to stderr in every
// format.
func writeHammerSummary(f *Factory, format tableprint.Format, res hammer.Result) error {
	for _, line := range res.ErrorSampleLines() {
		fmt.Fprintln(f.IO.ErrOut, line)
	}
	for _, line := range res.LeftoverLines() {
		fmt.Fprintln(f.IO.ErrOut, line)
	}
	width := f.IO.TerminalWidth()
	if err := writeResult(f.IO.Out, width, format, res); err != nil {
		return err
	}
	words := f.IO.ErrOut
	if format == tableprint.FormatTable {
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
	if format == tableprint.FormatTable {
		cs = f.IO.ColorScheme()
	}
	for _, n := range hammer.ClockNotes(res.Options) {
		fmt.Fprintln(words, fitLine(n, width))
	}
	for _, line := range res.VerdictLines(func(v verdict.Verdict) string { return paintVerdict(cs, v) }) {
		fmt.Fprintln(words, fitLine(line, width))
	}
	for _, line := range res.HowLines(width) {
		fmt.Fprintln(words, fitLine(line, width))
	}
	if format != tableprint.FormatJSON { // the JSON holds the assertions
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

// paintVerdict is the verdict's badge coloured by its tone, as every view shows them: anything
// proven wrong (OVERSHOOT, TOO STRICT, LEAKS) red, nothing proven either way (no evidence, not
// judged, errors) yellow, exact green; a word that is no verdict stays plain rather than pass
// for green.
func paintVerdict(cs ColorScheme, v verdict.Verdict) string {
	word := v.Badge()
	switch v.Tone() {
	case verdict.ToneBad:
		return cs.Bad(word)
	case verdict.ToneGood:
		return cs.Good(word)
	case verdict.ToneWarn:
		return cs.Warn(word)
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
