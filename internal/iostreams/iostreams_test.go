package iostreams

import "testing"

// Lines on stderr wrap at its terminal's width, or at $COLUMNS, and stay whole in a log.
func TestErrTerminalWidthIsStderrsOwn(t *testing.T) {
	measured := func() (int, error) { return 132, nil }
	for _, tc := range []struct {
		name string
		s    IOStreams
		want int
	}{
		{"piped", IOStreams{StdoutTTY: true, Columns: 100, errTermWidth: measured}, 0},
		{"a terminal", IOStreams{StderrTTY: true, errTermWidth: measured}, 132},
		{"$COLUMNS on a terminal", IOStreams{StderrTTY: true, Columns: 100, errTermWidth: measured}, 100},
		{"a terminal that cannot be measured", IOStreams{StderrTTY: true}, 80},
	} {
		if got := tc.s.ErrTerminalWidth(); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
