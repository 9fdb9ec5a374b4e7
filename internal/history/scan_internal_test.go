package history

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// walk reads any value with the scanner, as a generic tree, to compare with encoding/json.
func (s *scanner) walk() (any, error) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, s.fail("expected a value")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		m := map[string]any{}
		err := s.object(func(key []byte) error {
			v, err := s.walk()
			m[string(key)] = v
			return err
		})
		return m, err
	case c == '[':
		a := []any{}
		err := s.array(func() error {
			v, err := s.walk()
			a = append(a, v)
			return err
		})
		return a, err
	case c == '"':
		v, err := s.str()
		return string(v), err
	case c == '-' || '0' <= c && c <= '9':
		return s.float()
	}
	raw, err := s.skip()
	switch string(raw) {
	case "true":
		return true, err
	case "false":
		return false, err
	}
	return nil, err
}

// FuzzScannerAgreesWithEncodingJSON: the scanner accepts exactly the lines encoding/json
// accepts, and reads the same values from them.
func FuzzScannerAgreesWithEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"attack":"","seq":1,"code":200,"timestamp":"2026-12-06T21:41:00.5+01:00","latency":5,"body":"b2sK","headers":{"A":["b"]}}`,
		`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-06T21:41:00Z","value":1.5e-3,"tags":{"url":"http://x/?a=1\u0026b=2"}}}`,
		`{"a":[1,-0.5,true,false,null,{"b":"\"\\\/\b\f\n\r\t\u00e9"}]}`,
		`{"a":01}`, `{"a":1.}`, `{"a":"\x"}`, `{"a":tru}`, `{"a":1}x`, `{"a" 1}`, `{"a":[1,]}`, "{\"a\":\"\x01\"}",
		`{}`, `[]`, `"s"`, ` { "a" : 1 } `, `{"a":-}`, `{"a":1e}`, `{"a":"\u12"}`, `{"a":{"b":{"c":[[]]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var s scanner
		s.reset(line)
		got, err := s.walk()
		if err == nil {
			err = s.end()
		}
		var want any
		wantErr := json.Unmarshal(line, &want)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: scanner error %v, encoding/json error %v", line, err, wantErr)
		}
		if err != nil {
			return
		}
		// Through JSON and back, so that invalid UTF-8 (kept by the scanner, U+FFFD in
		// encoding/json) compares equal.
		var gotBack, wantBack any
		json.Unmarshal(must(json.Marshal(got)), &gotBack)
		json.Unmarshal(must(json.Marshal(want)), &wantBack)
		if !reflect.DeepEqual(gotBack, wantBack) {
			t.Fatalf("%q: scanner read %v, encoding/json %v", line, gotBack, wantBack)
		}
	})
}

func TestRFC3339AsTimeParseReadsIt(t *testing.T) {
	for _, s := range []string{
		"2026-12-06T21:41:00Z", "2026-12-06T21:41:00.123456789Z", "2026-12-06T21:41:00.1+01:00",
		"2024-02-29T23:59:59.999999999-07:30", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.5Z",
		"2000-03-01T00:00:00+14:00", "1678-01-01T00:00:00Z",
	} {
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		ns, ok := fastRFC3339([]byte(s))
		if !ok || ns != want.UnixNano() {
			t.Errorf("%s: %d %v, want %d", s, ns, ok, want.UnixNano())
		}
	}
	for _, s := range []string{"2026-02-29T00:00:00Z", "2026-12-06 21:41:00Z", "2026-12-06T24:00:00Z",
		"2026-12-06T21:41:00", "0001-01-01T00:00:00Z", "2026-12-06T21:41:00.Z", "2026-13-01T00:00:00Z"} {
		if ns, ok := parseRFC3339([]byte(s)); ok {
			t.Errorf("%s: read as %d", s, ns)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzRead: any file, in any format, is read to its end or to a one-line error, never a panic,
// and every record it gives has its flags or bounds in order.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"attack":"","seq":1,"code":200,"timestamp":"2026-12-06T21:41:00Z","latency":5,"url":"u","headers":{"X-Key":["a"]}}` + "\n"))
	f.Add([]byte("1796593762568105788,200,1000,0,0,,,,0,GET,http://x/,WC1LZXk6IGENCg==\n"))
	f.Add([]byte(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-12-06T21:41:00Z","value":1,"tags":{"status":"200"}}}` + "\n" +
		`{"metric":"http_req_duration","type":"Point","data":{"time":"2026-12-06T21:41:00Z","value":1,"tags":{"status":"200"}}}` + "\n"))
	f.Add([]byte(`{"format":"limitctl-record","schema_version":1}` + "\n" + `{"seq":0,"sent_us":1,"received_us":2,"decision":"admit"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			r, err := New([]Input{{Name: "f", R: bytes.NewReader(data)}},
				Options{SkipBad: skip, KeyBy: KeyBy{By: KeyByURL}, Headers: []string{"X-Key"}, ReorderMax: 3})
			if err != nil {
				return
			}
			for r.Next() {
				rec := r.Record()
				if rec.Flags&(StartUnknown|EndUnknown|Backwards) == 0 && rec.EndNs < rec.StartNs {
					t.Fatalf("record at line %d ends before it starts: %+v", rec.Line, rec)
				}
				if len(rec.Headers) != 1 {
					t.Fatalf("headers %v", rec.Headers)
				}
			}
			if err := r.Err(); err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
		}
	})
}

func TestHasSpecialFindsEachSpecialByteAnywhere(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			word := []byte("abcdefgh")
			word[pos] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(word[i])
			}
			if got, want := hasSpecial(x), stringSpecial[c] || c < 0x20; got != want {
				t.Fatalf("byte %#x at %d: hasSpecial %v, want %v", c, pos, got, want)
			}
		}
	}
}
