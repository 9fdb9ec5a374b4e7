package history_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/loadtools"
)

var base = time.Date(2026, 12, 6, 21, 41, 0, 123456789, time.FixedZone("", 3600))

func input(name string, b []byte) history.Input {
	return history.Input{Name: name, R: bytes.NewReader(b)}
}

func read(t *testing.T, opts history.Options, inputs ...history.Input) ([]history.Record, *history.Reader, error) {
	t.Helper()
	r, err := history.New(inputs, opts)
	if err != nil {
		return nil, nil, err
	}
	var recs []history.Record
	for r.Next() {
		c := *r.Record()
		c.Headers = append([]string(nil), c.Headers...)
		recs = append(recs, c)
	}
	return recs, r, r.Err()
}

func mustRead(t *testing.T, opts history.Options, inputs ...history.Input) ([]history.Record, *history.Reader) {
	t.Helper()
	recs, r, err := read(t, opts, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return recs, r
}

// wantUsage checks err is a usage error (exit 2) whose message holds each part.
func wantUsage(t *testing.T, err error, parts ...string) {
	t.Helper()
	var usage *exitcode.UsageError
	if !errors.As(err, &usage) {
		t.Fatalf("error %v (%T), want a usage error", err, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not say %q", err, p)
		}
	}
}

func TestEachFormatGivesTheBoundsItsToolRecorded(t *testing.T) {
	reqs := genRun(40, base, 10*time.Millisecond, 3*time.Millisecond)
	var lc bytes.Buffer
	cw := must(history.NewCallWriter(&lc, history.RunHeader{RunID: "r1", StartedUnixNs: base.UnixNano(),
		Limiter: "fixed-window", Limit: 10, WindowUs: 1e6}))
	for _, r := range reqs {
		d := "admit"
		if r.code == 429 {
			d = "refuse"
		}
		off := r.start.Sub(base).Microseconds()
		cw.Write(&history.Call{Seq: r.seq, Strategy: "http", Key: r.key, SentUs: off,
			ReceivedUs: off + r.latency.Microseconds(), Decision: d, Status: r.code})
	}
	cw.Flush()
	for _, tc := range []struct {
		name   string
		data   []byte
		format history.Format
		// The end the format bounds: vegeta's after the body, k6's at the first byte.
		end   func(genRequest) time.Time
		hasSq bool
	}{
		{"vegeta json", genVegetaJSON(reqs), history.FormatVegeta, func(r genRequest) time.Time { return r.start.Add(r.latency) }, true},
		{"vegeta csv", genVegetaCSV(reqs), history.FormatVegeta, func(r genRequest) time.Time { return r.start.Add(r.latency) }, true},
		{"k6", genK6(reqs), history.FormatK6, func(r genRequest) time.Time { return r.start.Add(r.latency - r.receiving) }, false},
		{"limitctl", lc.Bytes(), history.FormatLimitctl, func(r genRequest) time.Time { return r.start.Add(r.latency) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, r := mustRead(t, history.Options{KeyBy: history.KeyBy{By: history.KeyByURL}}, input("f", tc.data))
			if got := r.Files()[0].Format; got != tc.format {
				t.Fatalf("format %q, want %q", got, tc.format)
			}
			if len(recs) != len(reqs) {
				t.Fatalf("%d records, want %d", len(recs), len(reqs))
			}
			for i, rec := range recs {
				want := reqs[i]
				if rec.StartNs != want.start.UnixNano() || rec.EndNs != tc.end(want).UnixNano() {
					t.Fatalf("record %d: [%d, %d], want [%d, %d]", i, rec.StartNs, rec.EndNs,
						want.start.UnixNano(), tc.end(want).UnixNano())
				}
				wantURL := want.url
				if tc.format == history.FormatLimitctl {
					wantURL = "" // a Redis strategy has no URL
				}
				if rec.Status != want.code || rec.URL != wantURL || rec.Flags != 0 {
					t.Fatalf("record %d: status %d url %q flags %v", i, rec.Status, rec.URL, rec.Flags)
				}
				if rec.Key != wantURL {
					t.Fatalf("record %d: key %q, want %q", i, rec.Key, wantURL)
				}
				if tc.hasSq && rec.Seq != want.seq || !tc.hasSq && rec.Seq != -1 {
					t.Fatalf("record %d: seq %d", i, rec.Seq)
				}
			}
		})
	}
}

func TestRecordsNameTheLineTheyStartOn(t *testing.T) {
	reqs := genRun(3, base, time.Millisecond, time.Millisecond)
	k6 := genK6(reqs)
	recs, _ := mustRead(t, history.Options{}, input("k6.json", k6))
	lines := bytes.Split(k6, []byte("\n"))
	for _, rec := range recs {
		line := string(lines[rec.Line-1])
		if !strings.Contains(line, `"metric":"http_reqs"`) || !strings.Contains(line, `"type":"Point"`) {
			t.Fatalf("record at line %d: that line is %s", rec.Line, line)
		}
	}
	// A quoted CSV field can span lines: the record after it starts further down.
	csvData := []byte("1796593762568105788,0,1000,0,0,\"two\nlines\",,,0,GET,http://x/,\n" +
		"1796593762568105789,200,1000,0,0,,,,1,GET,http://x/,\n")
	recs, _ = mustRead(t, history.Options{}, input("v.csv", csvData))
	if len(recs) != 2 || recs[0].Line != 1 || recs[1].Line != 3 {
		t.Fatalf("records %+v, want lines 1 and 3", recs)
	}
}

func TestMissingBoundsAreFlaggedNeverGuessed(t *testing.T) {
	reqs := genRun(4, base, time.Millisecond, 2*time.Millisecond)
	reqs[1].noSending = true // k6: the write never reported
	vj := string(genVegetaJSON(reqs[:1])) +
		`{"attack":"","seq":1,"code":200,"timestamp":"0001-01-01T00:00:00Z","latency":5,"url":"u"}` + "\n" +
		`{"seq":2,"code":200,"timestamp":"2026-12-06T21:41:00Z","url":"u"}` + "\n" +
		`{"seq":3,"timestamp":"2026-12-06T21:41:00Z","latency":7,"url":"u"}` + "\n" +
		`{"seq":4,"code":200,"timestamp":"2026-12-06T21:41:00Z","latency":-7,"url":"u"}` + "\n"
	// vegeta's CSV of a result never timed: what UnixNano gives for Go's zero time.
	recs, r := mustRead(t, history.Options{}, input("v.csv", []byte("-6795364578871345152,0,0,0,0,err,,,0,GET,http://x/,\n")))
	if len(recs) != 1 || recs[0].Flags != history.StartUnknown || !r.Files()[0].CSV {
		t.Fatalf("zero time in CSV: %+v", recs)
	}
	recs, r = mustRead(t, history.Options{}, input("v.json", []byte(vj)))
	want := []history.Flags{0, history.StartUnknown, history.EndUnknown, history.StatusUnknown, history.Backwards}
	got := map[int64]history.Flags{}
	for _, rec := range recs {
		got[rec.Seq] = rec.Flags
	}
	for seq, f := range want {
		if got[int64(seq)] != f {
			t.Errorf("seq %d: flags %v, want %v", seq, got[int64(seq)], f)
		}
	}
	st := r.Stats()
	if st.NotJudged() != 4 || st.StartUnknown != 1 || st.EndUnknown != 1 || st.StatusUnknown != 1 || st.Backwards != 1 {
		t.Fatalf("stats %+v", st)
	}

	recs, _ = mustRead(t, history.Options{}, input("k6.json", genK6(reqs)))
	if len(recs) != 4 || recs[1].Flags&history.StartUnknown == 0 || recs[0].Flags != 0 {
		t.Fatalf("k6 records %+v: want the second start unknown", recs)
	}
	// Without the status tag (--system-tags without status) the outcome is unknown.
	noStatus := bytes.ReplaceAll(genK6(reqs[:1]), []byte(`"status":"200",`), nil)
	recs, _ = mustRead(t, history.Options{}, input("k6.json", noStatus))
	if len(recs) != 1 || recs[0].Flags != history.StatusUnknown {
		t.Fatalf("k6 without status: %+v", recs)
	}
}

func TestOutOfOrderRecordsComeBackInTimeOrder(t *testing.T) {
	reqs := genRun(200, base, time.Millisecond, 0)
	// Written as a tool finishes them: each pair swapped, and one 50 ms late.
	for i := 0; i+1 < len(reqs); i += 2 {
		reqs[i], reqs[i+1] = reqs[i+1], reqs[i]
	}
	late := reqs[10]
	copy(reqs[10:], reqs[11:60])
	reqs[59] = late
	recs, r := mustRead(t, history.Options{}, input("v.json", genVegetaJSON(reqs)))
	for i, rec := range recs {
		if rec.Seq != int64(i) || rec.Flags != 0 {
			t.Fatalf("record %d: seq %d flags %v", i, rec.Seq, rec.Flags)
		}
	}
	if r.Stats().Records != 200 {
		t.Fatalf("stats %+v", r.Stats())
	}

	// Beyond the window a record cannot be put back: it is returned flagged late.
	recs, r = mustRead(t, history.Options{ReorderWindow: 20 * time.Millisecond}, input("v.json", genVegetaJSON(reqs)))
	var lateSeqs []int64
	for _, rec := range recs {
		if rec.Flags&history.Late != 0 {
			lateSeqs = append(lateSeqs, rec.Seq)
		}
	}
	st := r.Stats()
	if len(lateSeqs) != 1 || lateSeqs[0] != late.seq || st.Late != 1 || st.FirstLate != 60 {
		t.Fatalf("late %v, stats %+v; want seq %d late at line 60", lateSeqs, st, late.seq)
	}

	// A full window returns its earliest record early: a small one makes more late.
	_, r = mustRead(t, history.Options{ReorderMax: 4}, input("v.json", genVegetaJSON(reqs)))
	if r.Stats().Late != 1 {
		t.Fatalf("window of 4: stats %+v", r.Stats())
	}
}

func TestFilesAreMergedInTimeOrderAndDuplicatesDropped(t *testing.T) {
	reqs := genRun(100, base, time.Millisecond, 2*time.Millisecond)
	var even, odd []genRequest
	for _, r := range reqs {
		if r.seq%2 == 0 {
			even = append(even, r)
		} else {
			odd = append(odd, r)
		}
	}
	recs, r := mustRead(t, history.Options{},
		input("even.json", genVegetaJSON(even)), input("odd.csv", genVegetaCSV(odd)),
		input("again.json", genVegetaJSON(even)))
	if len(recs) != 100 {
		t.Fatalf("%d records, want 100", len(recs))
	}
	for i, rec := range recs {
		wantFile := 0
		if i%2 == 1 {
			wantFile = 1
		}
		if rec.Seq != int64(i) || rec.File != wantFile {
			t.Fatalf("record %d: seq %d from file %d", i, rec.Seq, rec.File)
		}
	}
	files := r.Files()
	if files[2].Stats.Duplicates != 50 || files[2].Stats.Records != 0 || r.Stats().Duplicates != 50 {
		t.Fatalf("stats %+v", files)
	}

	// Two attacks repeat each other's seqs: not duplicates, both kept.
	other := genRun(10, base.Add(time.Second), time.Millisecond, time.Millisecond)
	recs, r = mustRead(t, history.Options{}, input("a.json", genVegetaJSON(reqs[:10])), input("b.json", genVegetaJSON(other)))
	if len(recs) != 20 || r.Stats().Duplicates != 0 {
		t.Fatalf("%d records, stats %+v", len(recs), r.Stats())
	}
}

func TestACutLastLineIsCountedAndABadLineNamesItsFile(t *testing.T) {
	reqs := genRun(5, base, time.Millisecond, time.Millisecond)
	for _, tc := range []struct {
		name string
		data []byte
		want string // the malformed line's description
	}{
		{"vegeta json", genVegetaJSON(reqs), "vegeta JSON"},
		{"vegeta csv", genVegetaCSV(reqs), "vegeta CSV"},
		{"k6", genK6(reqs), "k6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut := tc.data[:len(tc.data)-20]
			recs, r := mustRead(t, history.Options{}, input("cut", cut))
			if r.Stats().Truncated != 1 || len(recs) < 3 {
				t.Fatalf("%d records, stats %+v", len(recs), r.Stats())
			}

			lines := bytes.SplitAfter(tc.data, []byte("\n"))
			bad := bytes.Join([][]byte{lines[0], lines[1], []byte("{\"seq\":\n"), bytes.Join(lines[2:], nil)}, nil)
			_, _, err := read(t, history.Options{Format: r.Files()[0].Format}, input("bad.txt", bad))
			wantUsage(t, err, "bad.txt line 3: not a "+tc.want+" record")
			// A file both cut and broken inside is broken.
			_, _, err = read(t, history.Options{Format: r.Files()[0].Format}, input("bad.txt", bad[:len(bad)-20]))
			wantUsage(t, err, "bad.txt line 3: not a "+tc.want+" record")

			recs, r = mustRead(t, history.Options{SkipBad: true, Format: r.Files()[0].Format}, input("bad.txt", bad))
			if r.Stats().Bad != 1 || len(recs) != 5 {
				t.Fatalf("skip-bad: %d records, stats %+v", len(recs), r.Stats())
			}
		})
	}
}

func TestFormatsAreRecognisedOrNamed(t *testing.T) {
	reqs := genRun(2, base, time.Millisecond, time.Millisecond)
	_, _, err := read(t, history.Options{}, input("notes.txt", []byte("hello\n")))
	wantUsage(t, err, "notes.txt line 1", "--format")
	_, _, err = read(t, history.Options{}, input("empty", nil))
	wantUsage(t, err, "empty")
	_, _, err = read(t, history.Options{Format: history.FormatK6}, input("v.json", genVegetaJSON(reqs)))
	wantUsage(t, err, "v.json line 1: not a k6 record")
	_, _, err = read(t, history.Options{KeyBy: history.KeyBy{By: history.KeyByHeader, Header: "X-Key"}},
		input("k6.json", genK6(reqs)))
	wantUsage(t, err, "--key-by header:X-Key", "no response headers")
	_, err = history.ParseFormat("gatling")
	wantUsage(t, err, "vegeta, k6, limitctl")
	_, err = history.ParseKeyBy("header:")
	wantUsage(t, err, "url, header:NAME or none")
	if k, _ := history.ParseKeyBy("header:x-key"); k.Header != "X-Key" {
		t.Fatalf("header key %q", k.Header)
	}
	_, _, err = read(t, history.Options{}, input("new.rec", []byte(`{"format":"limitctl-record","schema_version":99}`+"\n")))
	wantUsage(t, err, "schema_version 99 is newer")

	// k6 writes a gzip file for a name ending .gz.
	var gz bytes.Buffer
	zw := gzipWriter(&gz)
	zw.Write(genK6(reqs))
	zw.Close()
	recs, r := mustRead(t, history.Options{}, input("k6.json.gz", gz.Bytes()))
	if len(recs) != 2 || r.Files()[0].Format != history.FormatK6 {
		t.Fatalf("gzip: %d records of %q", len(recs), r.Files()[0].Format)
	}
}

func TestALimitctlFileKeepsItsDecisionsAndHeader(t *testing.T) {
	var buf bytes.Buffer
	h := history.RunHeader{RunID: "r1", StartedUnixNs: base.UnixNano(), Limiter: "concurrency", Limit: 2,
		HoldUs: 5000, Strategies: []history.RecordedStrategy{{Name: "lua", Target: "redis"},
			{Name: "api", Target: "http", URL: "http://127.0.0.1:1/{key}", Method: "GET", FreshKeys: true}}}
	cw := must(history.NewCallWriter(&buf, h))
	calls := []history.Call{
		{Seq: 0, Strategy: "lua", Worker: 1, Key: "k\"1", SentUs: 10, ReceivedUs: 30, Decision: "admit", Reply: "1",
			ReleaseSentUs: 5000, ReleaseReceivedUs: 5020},
		{Seq: 0, Strategy: "api", Worker: 0, Key: "r1.0", SentUs: 12, ReceivedUs: 40, Decision: "refuse", Status: 429},
		{Seq: 1, Strategy: "lua", Worker: 0, Key: "k\"1", SentUs: 20, ReceivedUs: 50, Decision: "error",
			Error: "i/o timeout \xff", Abandoned: true},
	}
	for i := range calls {
		cw.Write(&calls[i])
	}
	cw.Flush()
	recs, r := mustRead(t, history.Options{}, input("run.rec", buf.Bytes()))
	got := r.Files()[0].Header
	if got == nil || got.Limiter != "concurrency" || got.SchemaVersion != history.RecordSchemaVersion ||
		len(got.Strategies) != 2 || !got.Strategies[1].FreshKeys {
		t.Fatalf("header %+v", got)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	want := []struct {
		strategy, key string
		d             history.Decision
		status        int
		reply         string
		line          int64
	}{{"lua", "k\"1", history.Admit, 0, "1", 2}, {"api", "r1.0", history.Refuse, 429, "", 3}, {"lua", "k\"1", history.Error, 0, "", 4}}
	for i, w := range want {
		rec := recs[i]
		if rec.Strategy != w.strategy || rec.Key != w.key || rec.Decision != w.d || rec.Status != w.status ||
			rec.Reply != w.reply || rec.Line != w.line {
			t.Fatalf("record %d: %+v, want %+v", i, rec, w)
		}
		c := calls[i]
		if rec.StartNs != base.UnixNano()+c.SentUs*1000 || rec.EndNs != base.UnixNano()+c.ReceivedUs*1000 {
			t.Fatalf("record %d: [%d, %d]", i, rec.StartNs, rec.EndNs)
		}
	}
	if recs[0].ReleaseStartNs != base.UnixNano()+5000*1000 || recs[0].ReleaseEndNs != base.UnixNano()+5020*1000 {
		t.Fatalf("release [%d, %d]", recs[0].ReleaseStartNs, recs[0].ReleaseEndNs)
	}
	if recs[1].URL != "http://127.0.0.1:1/{key}" {
		t.Fatalf("url %q", recs[1].URL)
	}
	// Every line the writer wrote is JSON as encoding/json reads it.
	for i, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if !jsonValid(line) {
			t.Fatalf("line %d is not JSON: %s", i+1, line)
		}
	}
}

// TestVegetaReadsTheGeneratedFile checks the generator the benchmarks use against vegeta: its
// own decoder reads every line, and its report counts them.
func TestVegetaReadsTheGeneratedFile(t *testing.T) {
	vegeta := loadtools.Vegeta(t)
	dir := t.TempDir()
	reqs := genRun(1000, base, time.Millisecond, time.Millisecond)
	for name, data := range map[string][]byte{"gen.json": genVegetaJSON(reqs), "gen.csv": genVegetaCSV(reqs)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(vegeta, "report", "-type", "json", path).Output()
		if err != nil {
			t.Fatalf("vegeta report %s: %v", name, err)
		}
		if !bytes.Contains(out, []byte(`"requests":1000,`)) || !bytes.Contains(out, []byte(`"status_codes":{"200":500,"429":500}`)) {
			t.Fatalf("vegeta report %s: %s", name, out)
		}
	}
}

// A hammer --record call keeps what its evidence was told: the time it was given, the virtual
// clock's bound, an admit's judged time, lateness and interval, why it or its release failed,
// and whether it was cut off at the run's end.
func TestALimitctlCallKeepsWhatItsEvidenceWasTold(t *testing.T) {
	var buf bytes.Buffer
	cw := must(history.NewCallWriter(&buf, history.RunHeader{RunID: "r", StartedUnixNs: base.UnixNano(), Limiter: "sliding-window",
		Limit: 5, WindowUs: 1e6, SkewUs: 5000, HorizonUs: 5e6, Strategies: []history.RecordedStrategy{{Name: "custom", Target: history.TargetRedis,
			Clock: "virtual", QuantumUs: 1000, BeginUs: base.UnixMicro(), FreshKeys: true}}}))
	calls := []history.Call{
		{Seq: 1, Strategy: "custom", Key: "k", SentUs: 100, ReceivedUs: 300, Decision: "admit", Reply: "{1, 5}", NowUs: base.UnixMicro() + 90,
			StampHiUs: base.UnixMicro() + 250, JudgedMs: base.UnixMilli(), LateUs: 210, JudgedSentUs: 90, JudgedReceivedUs: 300},
		{Seq: 2, Strategy: "custom", Key: "k", SentUs: 200, ReceivedUs: 5200, Decision: "error", Error: "i/o timeout", ErrorKind: "timeout",
			NowUs: base.UnixMicro() + 200},
		{Seq: 3, Strategy: "custom", Key: "k", SentUs: 400, ReceivedUs: 900, Decision: "error", Cut: true, NowUs: base.UnixMicro() + 400},
		{Seq: 4, Strategy: "custom", Key: "k", SentUs: 500, ReceivedUs: 700, Decision: "admit", ReleaseSentUs: 900, ReleaseReceivedUs: 950,
			ReleaseError: "NOSCRIPT", NowUs: base.UnixMicro() + 500, JudgedMs: base.UnixMilli()},
	}
	for i := range calls {
		cw.Write(&calls[i])
	}
	cw.Flush()
	recs, r := mustRead(t, history.Options{}, input("run.jsonl", buf.Bytes()))
	if h := r.Files()[0].Header; h.SkewUs != 5000 || h.Strategies[0].Clock != "virtual" || h.Strategies[0].QuantumUs != 1000 {
		t.Fatalf("header %+v", h)
	}
	b := base.UnixNano()
	a := recs[0]
	if a.NowUs != calls[0].NowUs || a.StampHiUs != calls[0].StampHiUs || a.JudgedMs != base.UnixMilli() || a.LateUs != 210 ||
		a.JudgedStartNs != b+90_000 || a.JudgedEndNs != b+300_000 || a.Reply != "{1, 5}" {
		t.Fatalf("admit %+v", a)
	}
	if e := recs[1]; e.Error != "i/o timeout" || e.ErrorKind != "timeout" || e.Cut {
		t.Fatalf("error %+v", e)
	}
	if c := recs[2]; !c.Cut {
		t.Fatalf("cut %+v", c)
	}
	if rel := recs[3]; rel.ReleaseError != "NOSCRIPT" || rel.ReleaseStartNs != b+900_000 || rel.JudgedStartNs != 0 {
		t.Fatalf("release %+v", rel)
	}
}
