package tableprint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Result is a command's result: itself as JSON, its Table as a terminal table and as tsv. A
// command's result is its domain type, which gives its own Table over the values its JSON
// holds, so the JSON and the table cannot describe different rows.
type Result interface {
	Table() Tabular
}

// Print writes r in format: JSON (schema version first), tsv, or a table fitted to width cells
// (0 or less: no bound).
func Print(w io.Writer, width int, format Format, schemaVersion int, r Result) error {
	switch format {
	case FormatJSON:
		return JSON(w, schemaVersion, r)
	case FormatTSV:
		return r.Table().WriteTSV(w)
	default:
		return r.Table().WriteTerminal(w, width)
	}
}

// JSON writes v, which must encode as an object, as one indented object whose first field is
// schema_version, without HTML escaping (a key holding < or & reads as itself).
func JSON(w io.Writer, schemaVersion int, v any) error {
	doc, err := Marshal(v)
	if err != nil {
		return err
	}
	doc = bytes.TrimSpace(doc)
	if len(doc) < 2 || doc[0] != '{' {
		return fmt.Errorf("JSON output: %T is not an object", v)
	}
	fields := bytes.TrimSpace(doc[1:])
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"schema_version":%d`, schemaVersion)
	if !bytes.Equal(fields, []byte("}")) {
		b.WriteByte(',')
	}
	b.Write(fields)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// Marshal is json.Marshal without HTML escaping, for the MarshalJSON methods of what JSON
// prints: json.Marshal inside one would escape what the document leaves as itself.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
