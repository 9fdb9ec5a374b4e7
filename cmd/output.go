package cmd

import (
	"fmt"
	"io"

	"github.com/limitctl/limitctl/internal/tableprint"
)

// SchemaVersion is carried by every JSON object limitctl prints.
const SchemaVersion = 1

// printable is a command's result: its domain type, printed as itself (-o json) or its Table.
type printable = tableprint.Result

// printResult prints r on stdout in format, then its notes on stderr.
func printResult(f *Factory, format tableprint.Format, r printable) error {
	if err := writeResult(f.IO.Out, f.IO.TerminalWidth(), format, r); err != nil {
		return err
	}
	writeNotes(f.IO.ErrOut, r)
	return nil
}

// writeResult writes r in format; a table fits width cells (0: no bound).
func writeResult(w io.Writer, width int, format tableprint.Format, r printable) error {
	return tableprint.Print(w, width, format, SchemaVersion, r)
}

// writeNotes writes what a result says a person should know besides the data (Notes), if any.
func writeNotes(w io.Writer, r any) {
	if n, ok := r.(interface{ Notes() []string }); ok {
		for _, note := range n.Notes() {
			fmt.Fprintf(w, "limitctl: note: %s\n", note)
		}
	}
}

// writeJSON writes v as a JSON object with schema_version first.
func writeJSON(w io.Writer, v any) error { return tableprint.JSON(w, SchemaVersion, v) }
