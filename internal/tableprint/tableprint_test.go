package tableprint

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

type run struct {
	name            string
	peak, retries   int
	p50, p99, p999  string
	errors, comment string
}

func itoa(n int) string { return strconv.Itoa(n) }

func runs() Table[run] {
	return Table[run]{
		Rows: []run{
			{name: "naive", peak: 6, p50: "1.25ms", p99: "30.1ms", p999: "41.0ms", errors: "0", comment: "a rather long comment that is cut"},
			{name: "lua", peak: 2, p50: "0.73ms", p99: "7.42ms", p999: "9.9ms", errors: "3 (timeout 3)", comment: "short"},
		},
		Columns: []Column[run]{
			{Header: "strategy", Human: func(r run) string { return r.name }},
			{Header: "peak", Human: func(r run) string { return itoa(r.peak) }},
			{Header: "retries", Human: func(r run) string { return itoa(r.retries) }, HideZero: true},
			{Header: "errors", Human: func(r run) string { return r.errors }, Machine: func(r run) string { return r.errors[:1] }, MinWidth: 6},
			{Header: "p50", Human: func(r run) string { return r.p50 }, Priority: 5},
			{Header: "p99", Human: func(r run) string { return r.p99 }, Priority: 5},
			{Header: "p99.9", Human: func(r run) string { return r.p999 }, Priority: 6},
			{Header: "p50/p99", Human: func(r run) string { return r.p50 + "/" + r.p99 }, Of: []string{"p50", "p99"}, Priority: 2},
			{Header: "comment", Human: func(r run) string { return r.comment }, Priority: 1, MinWidth: 10},
		},
	}
}

func headers(t Table[run], l Layout) string {
	var h []string
	for _, i := range l.Columns {
		h = append(h, t.Columns[i].Header)
	}
	return strings.Join(h, " ")
}

// Each width gives way one step further: narrowing first, then the least important columns,
// p50 and p99 merging into one once both are gone, and never a priority-0 column.
func TestLayoutGivesWayByPriority(t *testing.T) {
	tb := runs()
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, "strategy peak errors p50 p99 p99.9 comment"},
		{200, "strategy peak errors p50 p99 p99.9 comment"},
		{58, "strategy peak errors p50 p99 p99.9 comment"}, // errors and comment narrowed to their least
		{57, "strategy peak errors p50 p99 comment"},
		{49, "strategy peak errors p50/p99 comment"},
		{48, "strategy peak errors comment"},
		{33, "strategy peak errors"},
		{5, "strategy peak errors"},
	} {
		l := tb.Layout(c.width)
		if got := headers(tb, l); got != c.want {
			t.Errorf("width %d: columns %q, want %q (widths %v)", c.width, got, c.want, l.Widths)
		}
		if c.width >= 22 && l.Width() > c.width {
			t.Errorf("width %d: the layout is %d wide", c.width, l.Width())
		}
	}
}

// Narrowing is tried before dropping: a table one cell too wide loses one cell of its widest
// narrowable column, not a column.
func TestLayoutNarrowsTheWidestFirst(t *testing.T) {
	tb := runs()
	full := tb.Layout(0)
	l := tb.Layout(full.Width() - 1)
	if headers(tb, l) != headers(tb, full) {
		t.Fatalf("one cell too wide dropped a column: %q", headers(tb, l))
	}
	last := len(l.Widths) - 1 // comment, wider than errors
	if l.Widths[last] != full.Widths[last]-1 {
		t.Errorf("comment width %d, want %d", l.Widths[last], full.Widths[last]-1)
	}
}

func TestHideZeroOnlyOnATerminal(t *testing.T) {
	tb := runs()
	if got := headers(tb, tb.Layout(0)); strings.Contains(got, "retries") {
		t.Errorf("a column of zero retries shows: %q", got)
	}
	tb.Rows[1].retries = 4
	if got := headers(tb, tb.Layout(0)); !strings.Contains(got, "retries") {
		t.Errorf("retries of 4 hidden: %q", got)
	}
	var b bytes.Buffer
	runs().WriteTSV(&b)
	want := "strategy\tpeak\tretries\terrors\tp50\tp99\tp99.9\tcomment\n" +
		"naive\t6\t0\t0\t1.25ms\t30.1ms\t41.0ms\ta rather long comment that is cut\n" +
		"lua\t2\t0\t3\t0.73ms\t7.42ms\t9.9ms\tshort\n"
	if b.String() != want {
		t.Errorf("tsv (every column but the merged one, machine cells):\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTerminalLinesFitAndCarryNoTrailingSpace(t *testing.T) {
	tb := runs()
	tb.Totals = true
	tb.Columns[0].Total = "total"
	tb.Columns[8].Total = "two runs"
	for _, width := range []int{25, 40, 49, 57, 80} {
		var b bytes.Buffer
		if err := tb.WriteTerminal(&b, width); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 5 { // header, two rows, the rule, totals
			t.Errorf("width %d: %d lines, want 5:\n%s", width, len(lines), b.String())
		}
		for _, line := range lines {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: a line of %d: %q", width, n, line)
			}
			if strings.HasSuffix(line, " ") {
				t.Errorf("width %d: trailing space: %q", width, line)
			}
		}
		if !strings.HasPrefix(lines[0], "STRATEGY  PEAK  ERRORS") {
			t.Errorf("width %d: header %q", width, lines[0])
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		where Cut
		want  string
	}{
		{"limitctl:{run}:concurrency", 100, CutEnd, "limitctl:{run}:concurrency"},
		{"limitctl:{run}:concurrency", 10, CutEnd, "limitctl:…"},
		{"rl:user:1234567:42", 10, CutMiddle, "rl:us…7:42"},
		{"µs per call", 4, CutEnd, "µs …"},
		{"abc", 1, CutEnd, "…"},
		{"abc", 0, CutEnd, ""},
	} {
		got := cut(c.s, c.width, c.where)
		if got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > max(c.width, 0) {
			t.Errorf("cut(%q, %d) is %d wide", c.s, c.width, n)
		}
	}
}

// A merged column of one column is that column's short form: an error count without its kinds.
func TestShortFormStandsInForItsColumn(t *testing.T) {
	type e struct{ count, detail string }
	tb := Table[e]{Rows: []e{{"3", "3 (timeout 2, conn 1)"}}, Columns: []Column[e]{
		{Header: "name", Human: func(e) string { return "eval" }},
		{Header: "errors", Human: func(x e) string { return x.detail }, Machine: func(x e) string { return x.count }, Priority: 1},
		{Header: "errors", Field: "errors_short", Human: func(x e) string { return x.count }, Of: []string{"errors"}},
	}}
	var wide, narrow, tsv bytes.Buffer
	tb.WriteTerminal(&wide, 0)
	tb.WriteTerminal(&narrow, 15)
	tb.WriteTSV(&tsv)
	if wide.String() != "NAME  ERRORS\neval  3 (timeout 2, conn 1)\n" {
		t.Errorf("wide:\n%s", wide.String())
	}
	if narrow.String() != "NAME  ERRORS\neval  3\n" {
		t.Errorf("narrow:\n%s", narrow.String())
	}
	if tsv.String() != "name\terrors\neval\t3\n" {
		t.Errorf("tsv:\n%s", tsv.String())
	}
}

// The JSON of a result: schema_version first, then the value's own fields in its order, keys
// holding < or & as themselves, an empty object still an object.
func TestJSONPutsTheSchemaVersionFirst(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, 1, struct {
		Key  string `json:"key"`
		Size int    `json:"size"`
	}{"rl:<a>&b", 3}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"schema_version\": 1,\n  \"key\": \"rl:<a>&b\",\n  \"size\": 3\n}\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := JSON(&b, 1, struct{}{}); err != nil || b.String() != "{\n  \"schema_version\": 1\n}\n" {
		t.Errorf("an empty object: %q, %v", b.String(), err)
	}
	if err := JSON(&b, 1, []int{1}); err == nil {
		t.Error("a list is no JSON result: it has nowhere to put schema_version")
	}
}

// An identifier is never cut: the prose beside it is narrowed, then columns go, and when only
// whole columns are left the line runs past the terminal with every character of the key.
func TestWholeColumnsAreNeverCut(t *testing.T) {
	type key struct{ name, flags, note string }
	table := Table[key]{
		Rows: []key{{"limitctl:{checkout-api}:concurrency:tenant:acme", "NO_TTL,STALE,OVER_LIMIT", "a member older than the stale bound"}},
		Columns: []Column[key]{
			{Header: "key", Human: func(k key) string { return k.name }, Whole: true, MinWidth: 10, Cut: CutMiddle},
			{Header: "flags", Human: func(k key) string { return k.flags }, Whole: true},
			{Header: "note", Human: func(k key) string { return k.note }, MinWidth: 12, Priority: 1},
		},
	}
	for _, tc := range []struct {
		width       int
		want        string
		wantOverrun bool
	}{
		{120, "key flags note", false},
		{90, "key flags note", false}, // the note narrowed to 13
		{80, "key flags", false},      // the note cannot narrow that far: it goes
		{60, "key flags", true},       // nothing left to give way
	} {
		var b bytes.Buffer
		if err := table.WriteTerminal(&b, tc.width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		row := strings.Split(out, "\n")[1]
		if got := strings.ToLower(strings.Join(strings.Fields(strings.Split(out, "\n")[0]), " ")); got != tc.want {
			t.Errorf("at %d: columns %q, want %q\n%s", tc.width, got, tc.want, out)
		}
		if !strings.Contains(row, table.Rows[0].name) || !strings.Contains(row, table.Rows[0].flags) {
			t.Errorf("at %d an identifier was cut:\n%s", tc.width, out)
		}
		if overrun := utf8.RuneCountInString(row) > tc.width; overrun != tc.wantOverrun {
			t.Errorf("at %d: line of %d, overrun %v, want %v", tc.width, utf8.RuneCountInString(row), overrun, tc.wantOverrun)
		}
	}
}
