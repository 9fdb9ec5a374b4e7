package cmd

import (
	"encoding/json"
	"io"

	"github.com/limitctl/limitctl/internal/tableprint"
)

// SchemaVersion is carried by every JSON object limitctl prints.
const SchemaVersion = 1

// tabular is a result's rows with the columns that print them (a tableprint.Table): fitted
// to the terminal for a person, complete for a script.
type tabular interface {
	WriteTerminal(w io.Writer, width int) error
	WriteTSV(w io.Writer) error
}

// report is something a command prints in all three formats: one table (its columns decide
// how each field reads on a terminal and in tsv) and the -o json value, schema_version included.
type report struct {
	table tabular
	json  any

	// The hammer summary's rows as strings, until it moves to the printer (issue 16).
	header []string
	rows   [][]string
	footer []string
}

// printReport prints r in format; a table fits width cells (0: no bound).
func printReport(w io.Writer, width int, format string, r report) error {
	switch format {
	case "json":
		return writeJSON(w, r.json)
	case "tsv":
		return r.table.WriteTSV(w)
	default:
		return r.table.WriteTerminal(w, width)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeReport prints the hammer summary's string rows through the same printer, unfitted.
func writeReport(w io.Writer, format string, r report) error {
	t := tableprint.Table[[]string]{Rows: r.rows, Totals: r.footer != nil}
	for i, h := range r.header {
		c := tableprint.Column[[]string]{Header: h, Human: func(row []string) string { return row[i] }}
		if r.footer != nil {
			c.Total = r.footer[i]
		}
		t.Columns = append(t.Columns, c)
	}
	r.table = t
	return printReport(w, 0, format, r)
}
