package trace

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The summary's how-line from the 80x24 run: at every width it fits, keeps its tokens
// whole and in order where they fit, ends a line broken between two events in " ·" and
// continues under its first token.
func TestWrapNeverRunsPastTheWidth(t *testing.T) {
	head := "naive  how: "
	tokens := []string{"r76 ZCARD → 19 (+0.00ms)", "r65 ZCARD → 19 (+0.05ms)", "r76 ZADD (+2.82ms)", "r65 ZADD (+2.92ms)",
		"→ 21 held at 0.03s, limit 20", "(r76, r65 raced; 19 more in the JSON)"}
	want80 := []string{
		"naive  how: r76 ZCARD → 19 (+0.00ms) · r65 ZCARD → 19 (+0.05ms) ·",
		"            r76 ZADD (+2.82ms) · r65 ZADD (+2.92ms) → 21 held at 0.03s, limit 20",
		"            (r76, r65 raced; 19 more in the JSON)",
	}
	if got := Wrap(head, tokens, 80); !slices.Equal(got, want80) {
		t.Errorf("at 80 columns:\n%q\nwant\n%q", got, want80)
	}
	for width := 30; width <= 120; width++ {
		lines := Wrap(head, tokens, width)
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("width %d: line %d is %d columns: %q", width, i, w, l)
			}
			if i > 0 && (!strings.HasPrefix(l, "            ") || l[12] == ' ') {
				t.Errorf("width %d: line %d is not under the first token: %q", width, i, l)
			}
		}
		joined := strings.Join(lines, "\n")
		for _, tok := range tokens {
			if ansi.StringWidth(tok) <= width-12 && !strings.Contains(joined, tok) {
				t.Errorf("width %d: the token %q was broken:\n%s", width, tok, joined)
			}
		}
		words := strings.Fields(strings.ReplaceAll(strings.Join(append([]string{head}, tokens...), " "), " · ", " "))
		if got := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(joined, " ·\n", " "), " · ", " ")); !slices.Equal(got, words) {
			t.Errorf("width %d: the words changed:\n%q\nwant\n%q", width, got, words)
		}
		if width < 12+len(tokens[5])+2 {
			continue // a token may be broken at its spaces, an end mark dropped for room
		}
		for i, l := range lines[1:] {
			if next := strings.TrimSpace(l); slices.Contains(tokens[1:4], next[:strings.Index(next, ")")+1]) && !strings.HasSuffix(lines[i], " ·") {
				t.Errorf("width %d: a line broken between two events does not end in \" ·\": %q", width, lines[i])
			}
		}
	}
}

// A count over an interval longer than one window is told with the bound it broke, not as
// "in window" beside the per-window limit (which would read as a far larger overshoot).
func TestCountOverSeveralWindowsSaysWhatFit(t *testing.T) {
	n, allowed, from, to := int64(93), int64(80), 1050.0, 4048.0
	one := &Overshoot{InWindow: &n, Limit: 20}
	if got := one.Count(); got != "93 in window" {
		t.Errorf("one window: %q", got)
	}
	span := &Overshoot{InWindow: &n, Allowed: &allowed, FromMs: &from, ToMs: &to, Limit: 20}
	if got := span.Count(); got != "93 in 3.00s where at most 80 fit" {
		t.Errorf("a span of windows: %q", got)
	}
}
