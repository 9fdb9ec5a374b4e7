package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/limitctl/limitctl/internal/tableprint"
)

// SchemaVersion is carried by every JSON object limitctl prints.
const SchemaVersion = 1

// printable is what a command prints: itself as -o json, its Table as table and tsv. A command's
// result is its domain type (keys.Inspection, hammer.Result, ...), so the JSON and the table
// are the same values and cannot describe different rows.
type printable interface {
	Table() tableprint.Tabular
}

// noted is a result with notes for stderr: what a person should know besides the data.
type noted interface {
	Notes() []string
}

// printResult prints r on stdout in format, then its notes on stderr.
func printResult(f *Factory, format string, r printable) error {
	if err := writeResult(f.IO.Out, f.IO.TerminalWidth(), format, r); err != nil {
		return err
	}
	writeNotes(f.IO.ErrOut, r)
	return nil
}

// writeResult writes r in format; a table fits width cells (0: no bound).
func writeResult(w io.Writer, width int, format string, r printable) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "tsv":
		return r.Table().WriteTSV(w)
	default:
		return r.Table().WriteTerminal(w, width)
	}
}

func writeNotes(w io.Writer, r any) {
	if n, ok := r.(noted); ok {
		for _, note := range n.Notes() {
			fmt.Fprintf(w, "limitctl: note: %s\n", note)
		}
	}
}

// writeJSON writes v as one indented JSON object whose first field is schema_version, without
// HTML escaping (a key holding < or & reads as itself).
func writeJSON(w io.Writer, v any) error {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	doc := bytes.TrimSpace(body.Bytes())
	if len(doc) < 2 || doc[0] != '{' {
		return fmt.Errorf("JSON output: %T is not an object", v)
	}
	fields := bytes.TrimSpace(doc[1:])
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"schema_version":%d`, SchemaVersion)
	if !bytes.Equal(fields, []byte("}")) {
		b.WriteByte(',')
	}
	b.Write(fields)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}
