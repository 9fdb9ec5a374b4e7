package cmd

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// judgeDoc is what these tests read of judge -o json: hammer's shape, a strategy per key group,
// and the files read.
type judgeDoc struct {
	Limit      int64           `json:"limit"`
	Passed     bool            `json:"passed"`
	Strategies []powerStrategy `json:"strategies"`
	Records    []struct {
		File      string `json:"file"`
		Format    string `json:"format"`
		Records   int64  `json:"records"`
		NotJudged int64  `json:"not_judged"`
		Bad       int64  `json:"bad_lines"`
	} `json:"records"`
}

func judgeJSON(t *testing.T, args ...string) (result, judgeDoc) {
	t.Helper()
	r := run(t, append(append([]string{"judge"}, args...), "-o", "json")...)
	var doc judgeDoc
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s\n%s", r.code, err, r.out, r.errOut)
	}
	return r, doc
}

func verdictsOf(doc judgeDoc) map[string]string {
	out := map[string]string{}
	for _, s := range doc.Strategies {
		out[s.Name] = s.Verdict
	}
	return out
}

// vegetaLine is one record as `vegeta encode --to json` writes it.
func vegetaLine(seq int, start time.Time, latency time.Duration, code int) string {
	ts, _ := start.MarshalJSON()
	return `{"attack":"","seq":` + itoa(seq) + `,"code":` + itoa(code) + `,"timestamp":` + string(ts) + `,"latency":` +
		itoa(int(latency)) + `,"bytes_out":0,"bytes_in":0,"error":"","body":null,"method":"GET","url":"http://127.0.0.1:1/a","headers":{}}`
}

// Bad input is one line on stderr and exit 2, before anything is judged; a malformed record
// names its file and line.
func TestJudgeRefusesBadInputInOneLine(t *testing.T) {
	base := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	good := writeFile(t, dir, "results.json", vegetaLine(0, base, time.Millisecond, 200)+"\n"+vegetaLine(1, base.Add(time.Millisecond), time.Millisecond, 429)+"\n")
	bad := writeFile(t, dir, "bad.json", vegetaLine(0, base, time.Millisecond, 200)+"\n{\"attack\":\"\",\"seq\":1,\"code\":\n"+vegetaLine(2, base.Add(time.Millisecond), time.Millisecond, 429)+"\n")
	notRecords := writeFile(t, dir, "notes.txt", "hello\n")
	limits := []string{"--limiter", "fixed-window", "--limit", "5", "--window", "1s"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", limits, "name the record files"},
		{"a file that does not exist", append([]string{"nope.json"}, limits...), "nope.json"},
		{"no limiter for a load tool's records", []string{good}, "--limiter is needed"},
		{"an unknown limiter", []string{good, "--limiter", "leaky", "--limit", "5"}, "--limiter"},
		{"no limit", []string{good, "--limiter", "fixed-window", "--window", "1s"}, "--limit must be at least 1"},
		{"no window", []string{good, "--limiter", "sliding-window", "--limit", "5"}, "--window is needed"},
		{"a window hammer refuses", []string{good, "--limiter", "sliding-window", "--limit", "5", "--window", "1500us"}, "--window must be a whole number of milliseconds"},
		{"a negative hold", []string{good, "--limiter", "concurrency", "--limit", "5", "--hold", "-1s"}, "--hold must be 0 or more"},
		{"concurrency behind HTTP without a hold", []string{good, "--limiter", "concurrency", "--limit", "5"}, "--hold D is needed"},
		{"an unknown format", append([]string{good, "--format", "jmeter"}, limits...), "--format"},
		{"an unknown key", append([]string{good, "--key-by", "ip"}, limits...), "--key-by"},
		{"a file of no format", append([]string{notRecords}, limits...), "notes.txt line 1: not a record"},
		{"a malformed line", append([]string{bad}, limits...), "bad.json line 2"},
		{"an expression that is not Lua", append([]string{good, "--refused", "status =="}, limits...), "--refused"},
		{"a header read by a computed name", append([]string{good, "--refused", "header[string.lower('X')] ~= nil"}, limits...), "by a name written out"},
		{"a limiter file that does not exist", append([]string{good, "-f", "nope.yaml"}, limits...), "nope.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, append([]string{"judge"}, c.args...)...)
			lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
			if r.code != ExitUsage || !strings.Contains(r.errOut, c.want) || len(lines) > 2 || strings.Contains(r.errOut, "goroutine") {
				t.Fatalf("exit %d, want %d with %q in one line:\n%s", r.code, ExitUsage, c.want, r.errOut)
			}
		})
	}
	// --skip-bad counts the line and reads on; two records prove nothing either way (not judged, exit 3).
	r, doc := judgeJSON(t, append([]string{bad, "--skip-bad"}, limits...)...)
	if r.code != ExitCheckFailed || !strings.Contains(r.errOut, "not judged") || len(doc.Records) != 1 || doc.Records[0].Bad != 1 || doc.Records[0].Records != 2 {
		t.Fatalf("--skip-bad: exit %d, %+v\n%s", r.code, doc.Records, r.errOut)
	}
}

// A recorded hammer run judged again reads the run's own verdicts; judged at another limit it
// answers whether the limiter would hold there: a correct limit of 20 overshoots 15, and
// refuses with room under 40.
func TestJudgeOfAHammerRecordReadsItsVerdictsAndRejudgesAtAnotherLimit(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var ran map[string]string
	for attempt := 1; ; attempt++ {
		r, st := hammerJSON(t, "--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--strategies", "naive,lua",
			"--duration", "2s", "--record", rec)
		ran = map[string]string{}
		for _, s := range st {
			ran[s.Name] = s.Verdict
		}
		if ran["naive"] == "OVERSHOOT" && ran["lua"] == "exact" {
			break
		}
		if attempt == 3 {
			t.Fatalf("3 runs without naive caught and lua judged: exit %d, %+v\n%s", r.code, st, r.errOut)
		}
	}
	r, doc := judgeJSON(t, rec)
	if got := verdictsOf(doc); r.code != ExitCheckFailed || got["naive"] != ran["naive"] || got["lua"] != ran["lua"] || doc.Limit != 20 {
		t.Fatalf("judge: exit %d, %v (the run: %v)\n%s", r.code, got, ran, r.errOut)
	}
	if len(doc.Records) != 1 || doc.Records[0].Format != "limitctl" || doc.Records[0].NotJudged != 0 {
		t.Fatalf("records %+v", doc.Records)
	}
	r, doc = judgeJSON(t, rec, "--limit", "15")
	if got := verdictsOf(doc); r.code != ExitCheckFailed || got["lua"] != "OVERSHOOT" || doc.Limit != 15 {
		t.Fatalf("--limit 15: exit %d, %v\n%s", r.code, got, r.errOut)
	}
	r, doc = judgeJSON(t, rec, "--limit", "40")
	if got := verdictsOf(doc); r.code != ExitCheckFailed || got["lua"] != "TOO STRICT" {
		t.Fatalf("--limit 40: exit %d, %v\n%s", r.code, got, r.errOut)
	}
	// On a terminal's table: the verdict lines, the records behind the first overshoot by file
	// and line; the CI files as hammer writes them.
	junit, report := filepath.Join(t.TempDir(), "judge.xml"), filepath.Join(t.TempDir(), "judge.html")
	r = run(t, "judge", rec, "--junit", junit, "--report", report)
	if r.code != ExitCheckFailed || !strings.Contains(r.errOut, "naive  OVERSHOOT") || !strings.Contains(r.errOut, "run.jsonl:") ||
		!strings.Contains(r.errOut, "naive: OVERSHOOT proven") {
		t.Fatalf("exit %d\n%s", r.code, r.errOut)
	}
	for _, p := range []string{junit, report} {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), "naive") {
			t.Fatalf("%s: %v\n%.300s", p, err, b)
		}
	}
}

// An HTTP run recorded (hammer --http --record) and judged again reads the run's own verdict
// for every target, each judged over its requests' intervals as the run judged it: a window's
// check-then-update beside its INCR-first version, the naive concurrency limiter beside the
// atomic one by the hold they promise, a token bucket with its refusals judged by the run's
// rules (the same false rejects). The file names each target's URL.
func TestJudgeOfAnHTTPRecordReadsItsVerdicts(t *testing.T) {
	skipInShortMode(t)
	app := limitapp.Start(t, httpConfig)
	for _, c := range []struct {
		kind          limiter.Kind
		naive, atomic limitapp.Pattern
	}{
		{limiter.FixedWindow, limitapp.CheckThenUpdate, limitapp.IncrFirst},
		{limiter.Concurrency, limitapp.ConcurrencyNaive, limitapp.ConcurrencyAtomic},
		{limiter.TokenBucket, "", limitapp.Bucket}, // its refusals judged as refilled in steps or not
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "run.jsonl")
			targets, names := []string{"atomic=" + app.URL(c.atomic)}, []string{"atomic"}
			if c.naive != "" {
				targets, names = append(targets, "naive="+app.URL(c.naive)), append(names, "naive")
			}
			// Agreement is the point, whatever the run read; a run whose evidence was too weak to
			// judge (not judged, on a busy machine) is run again, up to three times.
			var ran map[string]string
			var falseRejects map[string]int64
			for attempt := 1; ; attempt++ {
				r, _, by := hammerHTTP(t, c.kind, httpRun, targets, "--record", rec)
				ran, falseRejects = map[string]string{}, map[string]int64{}
				judged := true
				for _, name := range names {
					ran[name] = by[name].Verdict
					judged = judged && by[name].Verdict != "not judged"
					if fr := by[name].FalseRejects; fr != nil {
						falseRejects[name] = *fr
					}
				}
				if judged {
					t.Logf("the run read %v", ran)
					break
				}
				if attempt == 3 {
					t.Fatalf("3 runs not judged: exit %d, %v\n%s", r.code, ran, r.errOut)
				}
			}
			wrong := slices.ContainsFunc(names, func(n string) bool { return ran[n] != "exact" })
			r, doc := judgeJSON(t, rec)
			if got := verdictsOf(doc); !maps.Equal(got, ran) || (r.code == ExitCheckFailed) != wrong {
				t.Fatalf("judge: exit %d, %v (the run: %v)\n%s", r.code, got, ran, r.errOut)
			}
			for _, st := range doc.Strategies {
				if st.FalseRejects == nil || *st.FalseRejects != falseRejects[st.Name] {
					t.Errorf("judge: %s's false rejects %v, the run's %d", st.Name, st.FalseRejects, falseRejects[st.Name])
				}
			}
			head, err := os.ReadFile(rec)
			if err != nil || !strings.Contains(string(head[:bytes.IndexByte(head, '\n')]), app.URL(c.atomic)) {
				t.Fatalf("the header does not name the target's URL: %v\n%.400s", err, head)
			}
		})
	}
}
