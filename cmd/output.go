package cmd

import (
	"encoding/json"
	"io"
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
