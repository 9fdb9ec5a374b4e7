package human

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// longVerdict is a verdict line of 150 characters as the summary prints it, its text starting
// at column 15.
const longVerdict = "custom  exact  peak 20 of 20, 0 events, 0 false rejects; exact as far as seen: " +
	"an overshoot under +3 per window would not be proven here (skew 200 ms)"

// checkHung fails unless lines are line broken at its spaces: none wider than width, the
// words all there in order, every continuation indented by indent spaces and no more.
func checkHung(t *testing.T, line string, lines []string, width, indent int) {
	t.Helper()
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("line %d is %d columns at width %d: %q", i, w, width, l)
		}
		if i == 0 {
			continue
		}
		if !strings.HasPrefix(l, strings.Repeat(" ", indent)) || strings.HasPrefix(l, strings.Repeat(" ", indent+1)) {
			t.Errorf("continuation %d not indented by %d: %q", i, indent, l)
		}
	}
	if got, want := strings.Fields(ansi.Strip(strings.Join(lines, " "))), strings.Fields(ansi.Strip(line)); !slices.Equal(got, want) {
		t.Errorf("the words changed:\n%q\nwant\n%q", got, want)
	}
}

func TestHangBreaksALongVerdictUnderItsTextColumn(t *testing.T) {
	if n := len(longVerdict); n != 150 {
		t.Fatalf("the fixture is %d characters, want 150", n)
	}
	lines := Hang(longVerdict, 80, 15)
	want := []string{
		"custom  exact  peak 20 of 20, 0 events, 0 false rejects; exact as far as seen:",
		"               an overshoot under +3 per window would not be proven here (skew",
		"               200 ms)",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("at 80 columns:\n%q\nwant\n%q", lines, want)
	}
	for width := 30; width <= 160; width++ {
		checkHung(t, longVerdict, Hang(longVerdict, width, 15), width, min(15, width/2))
	}
	if got := Hang(longVerdict, 0, 15); !slices.Equal(got, []string{longVerdict}) {
		t.Errorf("no bound: %q, want the line whole", got)
	}
	if got := Hang(longVerdict, 150, 15); !slices.Equal(got, []string{longVerdict}) {
		t.Errorf("a line that fits: %q, want it whole", got)
	}
}

// Colour codes take no room: a painted badge wraps as its plain words do, its codes intact.
func TestHangCountsColourCodesAsNoRoom(t *testing.T) {
	red := "\x1b[1;31mOVERSHOOT, TOO STRICT\x1b[m"
	line := "custom  " + red + "  peak 22 of 20 (+2), 5 events in 8.0s; refused 1,204 while at most 3 of 20 were held, the first at 412ms"
	plain := Hang(ansi.Strip(line), 80, 31)
	painted := Hang(line, 80, 31)
	if len(painted) != len(plain) || len(plain) < 2 {
		t.Fatalf("painted %q, plain %q", painted, plain)
	}
	for i := range plain {
		if ansi.Strip(painted[i]) != plain[i] {
			t.Errorf("line %d painted %q, plain %q", i, ansi.Strip(painted[i]), plain[i])
		}
	}
	if !strings.Contains(painted[0], red) {
		t.Errorf("the badge lost its colour: %q", painted[0])
	}
	checkHung(t, line, painted, 80, 31)
}

// A word wider than a whole line is cut at the width rather than run past it, and nothing of
// it is lost; a line is never cut with an ellipsis.
func TestLayCutsOnlyAWordWiderThanTheLine(t *testing.T) {
	key := "limitctl:{e840d40d}:custom:" + strings.Repeat("x", 70)
	lines := Hang("custom  LEAKS  1 key without a TTL ("+key+": string of 2, no TTL)", 60, 15)
	for _, l := range lines {
		if ansi.StringWidth(l) > 60 {
			t.Errorf("a %d-column line: %q", ansi.StringWidth(l), l)
		}
		if strings.Contains(l, "…") {
			t.Errorf("a cut line: %q", l)
		}
	}
	if joined := strings.ReplaceAll(strings.Join(lines, ""), " ", ""); !strings.Contains(joined, "("+key+":") {
		t.Errorf("the key did not survive: %q", lines)
	}
}

// The End of the piece after a break fits on the line it closes: the line is broken one piece
// earlier rather than run two columns past the width.
func TestLayLeavesRoomForTheEndOfABrokenLine(t *testing.T) {
	pieces := []Piece{{Text: "aaaa"}, {Text: "bbbb", Sep: " · ", End: " ·"}, {Text: "cccc", Sep: " · ", End: " ·"}}
	// "aaaa · bbbb" is 11 columns: at 12 "cccc" cannot follow and " ·" cannot close it.
	for width, want := range map[int][]string{
		12: {"aaaa ·", "  bbbb ·", "  cccc"},
		13: {"aaaa · bbbb ·", "  cccc"},
		18: {"aaaa · bbbb · cccc"},
	} {
		got := Lay(pieces, width, 2)
		if !slices.Equal(got, want) {
			t.Errorf("width %d: %q, want %q", width, got, want)
		}
	}
}

func TestWordsKeepTheSpacesBetweenThem(t *testing.T) {
	words := Words("  lua    exact  peak 20")
	want := []Piece{{Text: "lua", Sep: "  "}, {Text: "exact", Sep: "    "}, {Text: "peak", Sep: "  "}, {Text: "20", Sep: " "}}
	if !slices.Equal(words, want) {
		t.Errorf("%q, want %q", words, want)
	}
	if got := Lay(words, 0, 0); !slices.Equal(got, []string{"  lua    exact  peak 20"}) {
		t.Errorf("laid whole: %q", got)
	}
}
