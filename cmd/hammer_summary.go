package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/human"
	htmlreport "github.com/limitctl/limitctl/internal/report"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// writeHammerSummary prints the final summary of hammer and hammer report. On a terminal (-o
// table): the strategies table fitted to its width, the run's shape, one verdict line per
// strategy and below them how each first overshoot happened, the assertions. Otherwise stdout
// holds only the data (tsv or JSON) and the verdicts, how-lines and assertions go to stderr, so
// a CI log still has lines a person reads at a glance. The error samples go to stderr in every
// format. On a terminal every line wraps at its spaces to the width, never cut (continuing
// under the verdict's text, the how-line's first token, or by noteIndent); a log keeps each
// line whole.
func writeHammerSummary(f *Factory, format tableprint.Format, res hammer.Result) error {
	errWidth := f.IO.ErrTerminalWidth()
	for _, line := range append(res.ErrorSampleLines(), res.LeftoverLines()...) {
		printHung(f.IO.ErrOut, line, errWidth)
	}
	width := f.IO.TerminalWidth()
	if err := writeResult(f.IO.Out, width, format, res); err != nil {
		return err
	}
	words, cs := f.IO.ErrOut, f.IO.ErrColorScheme()
	if format == tableprint.FormatTable {
		words, cs = f.IO.Out, f.IO.ColorScheme()
		fmt.Fprintln(words)
		for _, line := range res.ShapeLines() {
			printHung(words, line, width)
		}
	} else {
		width = errWidth
	}
	for _, n := range hammer.ClockNotes(res.Options) {
		printHung(words, n, width)
	}
	lines := res.VerdictLines(func(v verdict.Verdict) string { return paintVerdict(cs, v) }, width)
	lines = append(lines, res.RedisLines(width)...)
	lines = append(lines, res.HowLines(width)...)
	if format != tableprint.FormatJSON { // the JSON holds the assertions
		lines = append(lines, res.AssertionLines(func(passed bool, word string) string {
			if passed {
				return cs.Good(word)
			}
			return cs.Bad(word)
		}, width)...)
	}
	for _, line := range lines {
		fmt.Fprintln(words, line)
	}
	return nil
}

// finishHammer prints res as hammer prints a run (hammer, hammer report, judge), writes the
// HTML report at report ("": none; its points from rec, none when nil) and the CI files, and
// returns the run's outcome (Result.Err).
func finishHammer(f *Factory, format tableprint.Format, command, report, junit string, started time.Time, res hammer.Result, rec *htmlreport.Recorder) error {
	if err := writeHammerSummary(f, format, res); err != nil {
		if res.Interrupted {
			return res.Err() // the terminal went with the signal (SIGHUP): the run's ending is the exit code
		}
		return err
	}
	if report != "" {
		if rec == nil {
			rec = htmlreport.NewRecorder(htmlreport.DefaultMaxPoints)
		}
		if err := htmlreport.WriteRun(report, res, rec, f.Now()); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "report written to %s\n", report)
	}
	return checkOutcome(f, res.Err(), writeHammerCI(f, command, junit, started, res, nil))
}

// noteIndent is how far a note's continuation lines sit in, so that they read as one note.
const noteIndent = 2

// printHung writes line, wrapped at width (0: whole) with continuation lines noteIndent in.
func printHung(w io.Writer, line string, width int) {
	for _, l := range human.Hang(line, width, noteIndent) {
		fmt.Fprintln(w, l)
	}
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
