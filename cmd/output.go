package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// SchemaVersion is carried by every JSON object limitctl prints.
const SchemaVersion = 1

// report is something a command prints in all three formats.
type report struct {
	header []string
	rows   [][]string
	footer []string // a totals line (table and tsv); nil for none
	json   any      // the -o json value, schema_version included
}

func writeReport(w io.Writer, format string, r report) error {
	switch format {
	case "json":
		return writeJSON(w, r.json)
	case "tsv":
		writeTSV(w, r.header, r.rows)
		return nil
	default:
		return writeTable(w, r.header, r.rows, r.footer)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeTSV writes one header line and one line per row, tab-separated, for scripts: no
// alignment, no colour, no totals line (a script would read it as data), tabs and newlines
// inside cells replaced by spaces.
func writeTSV(w io.Writer, header []string, rows [][]string) {
	clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	line := func(cells []string) {
		for i, c := range cells {
			cells[i] = clean.Replace(c)
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	line(append([]string(nil), lowerAll(header)...))
	for _, r := range rows {
		line(append([]string(nil), r...))
	}
}

func lowerAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strings.ToLower(strings.ReplaceAll(x, " ", "_"))
	}
	return out
}

func writeTable(w io.Writer, header []string, rows [][]string, footer []string) error {
	opts := []tablewriter.Option{
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowFooterLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithFooterAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft}),
	}
	t := tablewriter.NewTable(w, opts...)
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = upperASCII(h)
	}
	t.Header(hdr...)
	for _, r := range rows {
		cells := make([]any, len(r))
		for i, c := range r {
			cells[i] = c
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if footer != nil {
		cells := make([]any, len(footer))
		for i, c := range footer {
			cells[i] = c
		}
		t.Footer(cells...)
	}
	return t.Render()
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
