// Package tableprint prints a command's result (print.go): as JSON, as a table that fits a
// terminal, and as complete tab-separated values for scripts. Each column says how its field
// reads to a person and to a script, and how it gives way when the terminal is too narrow (after
// GitHub CLI's tableprinter, with priorities): first narrowed with an ellipsis, then dropped or
// merged, least important first. An identifier (a key, a SHA1, a node, a flag word) is never
// cut: the other columns give way around it.
package tableprint

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Gap is the space between two columns of a terminal table.
const Gap = 2

// Cut says where a narrowed cell loses its characters.
type Cut int

const (
	// CutEnd keeps the start: "limitctl:{run}:conc…".
	CutEnd Cut = iota
	// CutMiddle keeps both ends, where keys differ: "limitctl:{r…}:user:42".
	CutMiddle
)

// Column is one field of the row type R.
type Column[R any] struct {
	// Header names the column on a terminal, where it is upper-cased (ASCII letters only).
	Header string
	// Field names the column in tsv; empty means Header in lower case, spaces as underscores.
	Field string
	// Human is the cell a person reads; Machine the one a script reads (nil: Human).
	Human, Machine func(R) string
	// Total is the column's cell in the totals line under a terminal table (tsv has none). It
	// does not widen the column: it runs on into the next columns while their totals are empty.
	Total string
	// Priority orders what gives way on a narrow terminal: 0 is never dropped, the highest
	// number goes first, and columns sharing a number go together.
	Priority int
	// MinWidth > 0 lets the column be narrowed down to that many cells, cut with "…" at Cut,
	// before any column is dropped (a narrowed column keeps its place; a dropped one is gone).
	MinWidth int
	Cut      Cut
	// Whole marks an identifier (a key name, a SHA1, an address, a list of flag words): its
	// cells are never cut, whatever MinWidth says. The other columns give way first; when only
	// whole columns are left the line is wider than the terminal rather than show half a name,
	// and a Whole column with a Priority is dropped whole in its turn.
	Whole bool
	// HideZero leaves the column off a terminal table when every row reads as zero ("0", "-"
	// or nothing): a column of zeros says nothing a person needs (retries of a strategy that
	// never retries). tsv keeps it.
	HideZero bool
	// Of makes this a merged column, on a terminal only: it stands in for the named columns
	// (by Field) once all of them have given way, and at its own Priority is dropped in turn.
	// A merged column of one column is its short form: an error count without its kinds.
	Of []string
}

// Tabular is a table of any row type, as a command prints it: fitted to a terminal for a
// person, complete for a script. A command's result gives its own (Table methods), so the rows
// of its table are the values its JSON holds.
type Tabular interface {
	WriteTerminal(w io.Writer, width int) error
	WriteTSV(w io.Writer) error
}

// Table is a result's rows and the columns that print them.
type Table[R any] struct {
	Columns []Column[R]
	Rows    []R
	// Totals adds the totals line (each column's Total) under a terminal table.
	Totals bool
	// Optional is the priority above which columns are dropped before any column is narrowed:
	// what a person can do without goes before a key is cut. 0: narrow before dropping anything.
	Optional int
}

// WriteTSV writes a header of field names and one line per row with every column except the
// merged ones: no alignment, no totals line (a script would read it as data), and tabs or
// newlines inside a cell replaced by spaces.
func (t Table[R]) WriteTSV(w io.Writer) error {
	clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	var b bytes.Buffer
	line := func(cells []string) {
		for i, c := range cells {
			cells[i] = clean.Replace(c)
		}
		b.WriteString(strings.Join(cells, "\t"))
		b.WriteByte('\n')
	}
	var names []string
	for _, c := range t.Columns {
		if c.Of == nil {
			names = append(names, c.field())
		}
	}
	line(names)
	for _, r := range t.Rows {
		var cells []string
		for _, c := range t.Columns {
			if c.Of == nil {
				cells = append(cells, c.machine(r))
			}
		}
		line(cells)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (c Column[R]) field() string {
	if c.Field != "" {
		return c.Field
	}
	return strings.ToLower(strings.ReplaceAll(c.Header, " ", "_"))
}

func (c Column[R]) machine(r R) string {
	if c.Machine != nil {
		return c.Machine(r)
	}
	return c.Human(r)
}

// WriteTerminal writes the table for a person, fitted to width cells (0 or less: no bound).
// Lines carry no trailing spaces and no escape codes.
func (t Table[R]) WriteTerminal(w io.Writer, width int) error {
	l := t.Layout(width)
	if len(l.Columns) == 0 {
		return nil
	}
	header := make([]string, len(l.Columns))
	rows := make([][]string, len(t.Rows))
	for i, ci := range l.Columns {
		c := t.Columns[ci]
		header[i] = cut(upperASCII(c.Header), l.Widths[i], c.Cut)
		for r, row := range t.Rows {
			rows[r] = append(rows[r], cut(c.Human(row), l.Widths[i], c.Cut))
		}
	}
	var b bytes.Buffer
	if err := render(&b, header, rows); err != nil {
		return err
	}
	if t.Totals {
		b.WriteString(strings.Repeat("─", l.Width()) + "\n")
		b.WriteString(t.totalsLine(l, width) + "\n")
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// totalsLine places each total under its column. A total wider than its column runs on to
// the next total, or to the terminal's edge (width; no bound when 0 or less); if it does not
// fit there it moves left into blank space, and only then is cut.
func (t Table[R]) totalsLine(l Layout, width int) string {
	starts := make([]int, len(l.Columns))
	for k := 1; k < len(l.Columns); k++ {
		starts[k] = starts[k-1] + l.Widths[k-1] + Gap
	}
	var b strings.Builder
	at := 0 // the width written so far
	for k, ci := range l.Columns {
		c := t.Columns[ci]
		if c.Total == "" {
			continue
		}
		start := max(starts[k], at+Gap)
		if at == 0 {
			start = starts[k]
		}
		end := -1 // the column where the next total begins, or the terminal's edge
		for j := k + 1; j < len(l.Columns) && end < 0; j++ {
			if t.Columns[l.Columns[j]].Total != "" {
				end = starts[j] - Gap
			}
		}
		if end < 0 {
			end = width
		}
		cell := c.Total
		if end > 0 {
			if need := twwidth.Width(cell); start+need > end { // shift left into blank space first
				start = max(end-need, min(start, at+Gap))
				if at == 0 {
					start = max(end-need, 0)
				}
			}
			cell = cut(cell, end-start, c.Cut)
		}
		b.WriteString(strings.Repeat(" ", start-at))
		b.WriteString(cell)
		at = start + twwidth.Width(cell)
	}
	return b.String()
}

// Layout is the columns a terminal table shows (indices into Table.Columns, in order) and
// the width of each.
type Layout struct {
	Columns []int
	Widths  []int
}

// Width is the layout's line width, gaps included.
func (l Layout) Width() int {
	if len(l.Widths) == 0 {
		return 0
	}
	sum := Gap * (len(l.Widths) - 1)
	for _, w := range l.Widths {
		sum += w
	}
	return sum
}

// Layout decides which columns show at what width to fit width cells (0 or less: no bound):
// columns of zeros marked HideZero are left out; then, while the table is too wide, it drops
// the optional columns, least important first; then narrows what may be narrowed if that is
// enough, else drops the next least important columns (showing a merged column once all its
// parts are gone) and tries again. When nothing is left to drop it narrows every narrowable
// column to its header and lets the line overflow.
func (t Table[R]) Layout(width int) Layout {
	natural := make([]int, len(t.Columns))
	visible := make([]bool, len(t.Columns))
	for i, c := range t.Columns {
		natural[i] = twwidth.Width(upperASCII(c.Header))
		zero := true
		for _, r := range t.Rows {
			cell := c.Human(r)
			natural[i] = max(natural[i], twwidth.Width(cell))
			zero = zero && (cell == "" || cell == "0" || cell == "-")
		}
		visible[i] = c.Of == nil && !(c.HideZero && zero && len(t.Rows) > 0)
	}
	minWidth := func(i int) int {
		c := t.Columns[i]
		if c.MinWidth <= 0 || c.Whole {
			return natural[i]
		}
		return min(natural[i], max(c.MinWidth, twwidth.Width(upperASCII(c.Header))))
	}
	index := make(map[string]int, len(t.Columns))
	for i, c := range t.Columns {
		index[c.field()] = i
	}
	for {
		l := Layout{}
		slack := 0
		for i := range t.Columns {
			if visible[i] {
				l.Columns = append(l.Columns, i)
				l.Widths = append(l.Widths, natural[i])
				slack += natural[i] - minWidth(i)
			}
		}
		over := l.Width() - width
		if width <= 0 || over <= 0 {
			return l
		}
		level := 0
		for i, c := range t.Columns {
			if visible[i] {
				level = max(level, c.Priority)
			}
		}
		if (t.Optional == 0 || level <= t.Optional) && over <= slack {
			return t.narrow(l, over, minWidth)
		}
		if level == 0 { // nothing left to drop: as narrow as the headers allow
			for k, i := range l.Columns {
				if t.Columns[i].MinWidth > 0 && !t.Columns[i].Whole {
					l.Widths[k] = min(natural[i], max(twwidth.Width(upperASCII(t.Columns[i].Header)), 4))
				}
			}
			return l
		}
		for i, c := range t.Columns {
			if visible[i] && c.Priority == level {
				visible[i] = false
			}
		}
		for i, c := range t.Columns {
			if c.Of == nil || visible[i] || c.Priority >= level {
				continue
			}
			gone := true
			for _, name := range c.Of {
				j, ok := index[name]
				gone = gone && (!ok || !visible[j])
			}
			visible[i] = gone
		}
	}
}

// narrow takes over cells from the narrowable columns, always from the widest, so that long
// keys and short flags end up the same width rather than one cut to nothing.
func (t Table[R]) narrow(l Layout, over int, minWidth func(int) int) Layout {
	for ; over > 0; over-- {
		widest := -1
		for k, i := range l.Columns {
			if l.Widths[k] > minWidth(i) && (widest < 0 || l.Widths[k] > l.Widths[widest]) {
				widest = k
			}
		}
		if widest < 0 {
			break
		}
		l.Widths[widest]--
	}
	return l
}

// cut shortens s to width cells, an ellipsis standing for what was taken out.
func cut(s string, width int, where Cut) string {
	if twwidth.Width(s) <= width {
		return s
	}
	if width <= 0 {
		return ""
	}
	runes := []rune(s)
	take := func(rs []rune, budget int, fromEnd bool) string {
		var out []rune
		used := 0
		for k := range rs {
			r := rs[k]
			if fromEnd {
				r = rs[len(rs)-1-k]
			}
			w := twwidth.Width(string(r))
			if used+w > budget {
				break
			}
			used += w
			out = append(out, r)
		}
		if fromEnd {
			for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
				out[a], out[b] = out[b], out[a]
			}
		}
		return string(out)
	}
	budget := width - 1
	if where == CutMiddle {
		tail := budget / 2
		return take(runes, budget-tail, false) + "…" + take(runes, tail, true)
	}
	return take(runes, budget, false) + "…"
}

// render hands the cut cells to tablewriter: no borders, no column separators, two spaces
// between columns. Trailing spaces are trimmed.
func render(w io.Writer, header []string, rows [][]string) error {
	if len(header) == 0 {
		return nil
	}
	pad := make([]tw.Padding, len(header))
	for i := range pad {
		pad[i] = tw.Padding{Left: tw.Empty, Right: strings.Repeat(" ", Gap), Overwrite: true}
	}
	pad[len(pad)-1] = tw.PaddingNone
	var b bytes.Buffer
	t := tablewriter.NewTable(&b,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderPaddingPerColumn(pad),
		tablewriter.WithRowPaddingPerColumn(pad),
	)
	t.Header(anys(header)...)
	for _, r := range rows {
		if err := t.Append(anys(r)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line == "" {
			continue
		}
		out.WriteString(strings.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	_, err := w.Write(out.Bytes())
	return err
}

func anys(cells []string) []any {
	out := make([]any, len(cells))
	for i, c := range cells {
		out[i] = c
	}
	return out
}

// upperASCII upper-cases a header but leaves other letters alone (µs must not become ΜS).
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
