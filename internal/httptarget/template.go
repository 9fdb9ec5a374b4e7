package httptarget

import (
	"fmt"
	"strconv"
	"strings"
)

// Placeholders an HTTP target's URL, headers and body may use.
const (
	PlaceholderKey    = "key"    // the limiter key's client identity, one per --keys, fresh per run
	PlaceholderRun    = "run"    // the run's id
	PlaceholderWorker = "worker" // the worker making the call, from 0
	PlaceholderSeq    = "seq"    // the call's number within its worker, from 0
)

type field uint8

const (
	fieldText field = iota
	fieldKey
	fieldRun
	fieldWorker
	fieldSeq
)

var fieldNames = map[string]field{PlaceholderKey: fieldKey, PlaceholderRun: fieldRun, PlaceholderWorker: fieldWorker, PlaceholderSeq: fieldSeq}

type piece struct {
	field field
	text  string // fieldText
}

// template is a URL, header value or body with placeholders, split once into pieces. {name}
// (name of lower-case letters and _) is a placeholder, an unknown name an error; {{ is a
// literal brace, and any other brace is text, so a JSON body needs no escaping.
type template struct {
	pieces []piece
	// fixed is the text when no piece changes from call to call ({run} is known at New).
	fixed    string
	isFixed  bool
	usesKey  bool
	firstPos int // the byte offset of the first placeholder, -1 when none
}

// parseTemplate reads text; run is {run}'s value, folded in at once.
func parseTemplate(flag, text, run string) (*template, error) {
	t := &template{firstPos: -1}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.pieces = append(t.pieces, piece{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(text) && text[i+1] == '{' {
			lit.WriteByte('{')
			i++
			continue
		}
		end := i + 1
		for end < len(text) && (text[end] == '_' || text[end] >= 'a' && text[end] <= 'z') {
			end++
		}
		if end == i+1 || end == len(text) || text[end] != '}' {
			lit.WriteByte(c) // a brace of the text's own, as in a JSON body
			continue
		}
		name := text[i+1 : end]
		f, ok := fieldNames[name]
		if !ok {
			return nil, fmt.Errorf("%s: column %d: unknown placeholder {%s}; want {key} {run} {worker} or {seq} ({{ for a literal brace)",
				flag, len([]rune(text[:i]))+1, name)
		}
		if t.firstPos < 0 {
			t.firstPos = i
		}
		if f == fieldRun {
			lit.WriteString(run)
		} else {
			flush()
			t.pieces = append(t.pieces, piece{field: f})
			t.usesKey = t.usesKey || f == fieldKey
		}
		i = end
	}
	flush()
	if len(t.pieces) <= 1 && (len(t.pieces) == 0 || t.pieces[0].field == fieldText) {
		t.isFixed = true
		if len(t.pieces) == 1 {
			t.fixed = t.pieces[0].text
		}
	}
	return t, nil
}

// appendTo appends the template's text for one call.
func (t *template) appendTo(b []byte, key string, c Call) []byte {
	for _, p := range t.pieces {
		switch p.field {
		case fieldText:
			b = append(b, p.text...)
		case fieldKey:
			b = append(b, key...)
		case fieldWorker:
			b = strconv.AppendInt(b, int64(c.Worker), 10)
		case fieldSeq:
			b = strconv.AppendUint(b, c.Seq, 10)
		}
	}
	return b
}

// expand is the template's text for one call.
func (t *template) expand(key string, c Call) string {
	if t.isFixed {
		return t.fixed
	}
	return string(t.appendTo(make([]byte, 0, 64), key, c))
}
