package judge_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limiter"
)

// vegetaRecord is one line as `vegeta encode --to json` writes it; a zero start is Go's zero
// time, as vegeta writes a request it never timed.
func vegetaRecord(seq int, start time.Time, latency time.Duration, code int, url string) string {
	ts, _ := start.MarshalJSON()
	return `{"attack":"","seq":` + strconv.Itoa(seq) + `,"code":` + strconv.Itoa(code) + `,"timestamp":` + string(ts) +
		`,"latency":` + strconv.FormatInt(int64(latency), 10) + `,"bytes_out":0,"bytes_in":0,"error":"","body":null,"method":"GET","url":"` +
		url + `","headers":{}}` + "\n"
}

func run(t *testing.T, o judge.Options, files map[string]string) hammer.Result {
	t.Helper()
	for name, content := range files {
		o.Inputs = append(o.Inputs, history.Input{Name: name, R: strings.NewReader(content)})
	}
	res, err := judge.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// burst is n admits of url inside one 50ms span at t, then as many refusals.
func burst(seq *int, at time.Time, n int, url string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(vegetaRecord(*seq, at.Add(time.Duration(i)*time.Millisecond), time.Millisecond, 200, url))
		*seq++
	}
	for i := range n {
		b.WriteString(vegetaRecord(*seq, at.Add(time.Duration(n+i)*time.Millisecond), time.Millisecond, 429, url))
		*seq++
	}
	return b.String()
}

func TestEachKeyIsJudgedApart(t *testing.T) {
	var b strings.Builder
	seq := 0
	for w := range 4 { // four windows of 1s: 25 admits of /a in each (a limit of 10), 5 of /b
		at := genBase.Add(time.Duration(w) * time.Second)
		b.WriteString(burst(&seq, at, 25, "http://127.0.0.1:1/a"))
		b.WriteString(burst(&seq, at.Add(200*time.Millisecond), 5, "http://127.0.0.1:1/b"))
	}
	o := judge.Options{Limiter: limiter.FixedWindow, Limit: 10, Window: time.Second, KeyBy: history.KeyBy{By: history.KeyByURL}}
	res := run(t, o, map[string]string{"r.json": b.String()})
	got := map[string]string{}
	for i, st := range res.Summary.Strategies {
		got[st.Name] = res.Verdicts[i].Word
	}
	if got["http://127.0.0.1:1/a"] != verdict.Overshoot || got["http://127.0.0.1:1/b"] == verdict.Overshoot || len(got) != 2 {
		t.Fatalf("verdicts %v", got)
	}
	if res.Passed() || !strings.Contains(strings.Join(res.Failures, "; "), "http://127.0.0.1:1/a: OVERSHOOT proven") {
		t.Fatalf("failures %q", res.Failures)
	}
	ov := res.Summary.Strategies[0].FirstOvershoot
	if ov == nil || len(ov.Requests) == 0 || ov.Requests[0].File != "r.json" || ov.Requests[0].Line == 0 {
		t.Fatalf("first overshoot %+v", ov)
	}
	// Without keys, one group of every record: /a's overshoot is every record's.
	res = run(t, judge.Options{Limiter: limiter.FixedWindow, Limit: 10, Window: time.Second}, map[string]string{"r.json": b.String()})
	if len(res.Verdicts) != 1 || res.Summary.Strategies[0].Name != "records" || res.Verdicts[0].Word != verdict.Overshoot {
		t.Fatalf("one key: %+v", res.Verdicts)
	}
}

func TestRecordsThatBoundNothingAreCountedNeverGuessed(t *testing.T) {
	var b strings.Builder
	seq := 0
	for w := range 4 { // a correct window: 10 admits each second
		b.WriteString(burst(&seq, genBase.Add(time.Duration(w)*time.Second), 10, "http://127.0.0.1:1/a"))
	}
	// Twenty admits vegeta never timed: had they been guessed anywhere, they would overshoot.
	for range 20 {
		b.WriteString(vegetaRecord(seq, time.Time{}, 0, 200, "http://127.0.0.1:1/a"))
		seq++
	}
	res := run(t, judge.Options{Limiter: limiter.FixedWindow, Limit: 10, Window: time.Second}, map[string]string{"r.json": b.String()})
	st, v := res.Summary.Strategies[0], res.Verdicts[0]
	if v.Tone() == verdict.ToneBad || st.Unbounded != 20 || st.Admitted != 60 || !strings.Contains(v.Text, "20 admits not judged") {
		t.Fatalf("%s %s; unbounded %d of %d admits", v.Word, v.Text, st.Unbounded, st.Admitted)
	}
	if f := res.Recorded.Files[0]; f.Stats.StartUnknown != 20 || f.Stats.NotJudged() != 20 {
		t.Fatalf("file stats %+v", f.Stats)
	}
	if lines := res.ShapeLines(); len(lines) != 2 || !strings.Contains(lines[1], "20 not judged (20 start unknown)") {
		t.Fatalf("shape lines %q", lines)
	}
}

// A hammer --record file of an HTTP target that named a fresh key ({key}) has its refusals
// judged: an endpoint that refused in a window where it had admitted nothing refused with room.
func TestARecordedEndpointsRefusalsAreJudged(t *testing.T) {
	record := func(fresh bool) string {
		var buf bytes.Buffer
		w, err := history.NewCallWriter(&buf, history.RunHeader{RunID: "r", StartedUnixNs: genBase.UnixNano(), Limiter: "fixed-window",
			Limit: 5, WindowUs: 1e6, Strategies: []history.RecordedStrategy{{Name: "api", Target: history.TargetHTTP,
				URL: "http://127.0.0.1:1/{key}", FreshKeys: fresh}}})
		if err != nil {
			t.Fatal(err)
		}
		seq := int64(0)
		call := func(at time.Duration, decision string, status int) {
			seq++
			c := history.Call{Seq: seq, Strategy: "api", Key: "r.0", SentUs: at.Microseconds(), ReceivedUs: (at + time.Millisecond).Microseconds(),
				Decision: decision, Status: status}
			if err := w.Write(&c); err != nil {
				t.Fatal(err)
			}
		}
		for s := range 3 { // 5 admits then refusals in each second, as a correct window does
			at := time.Duration(s) * time.Second
			for i := range 5 {
				call(at+time.Duration(i)*2*time.Millisecond, "admit", 200)
			}
			for i := range 20 {
				call(at+time.Duration(10+i)*2*time.Millisecond, "refuse", 429)
			}
		}
		for i := range 20 { // then, after two idle seconds, refusals with nothing admitted
			call(5*time.Second+time.Duration(i)*2*time.Millisecond, "refuse", 429)
		}
		w.Flush()
		return buf.String()
	}
	res := run(t, judge.Options{}, map[string]string{"run.jsonl": record(true)})
	st, v := res.Summary.Strategies[0], res.Verdicts[0]
	if v.Word != verdict.TooStrict || st.FalseRejects == 0 || st.FirstFalseReject == nil || st.FirstFalseReject.Request == nil ||
		st.FirstFalseReject.Request.File != "run.jsonl" {
		t.Fatalf("fresh keys: %s %s (%d false rejects, first %+v)", v.Word, v.Text, st.FalseRejects, st.FirstFalseReject)
	}
	// Keys the limiter may have known before the run: its refusals prove nothing.
	res = run(t, judge.Options{}, map[string]string{"run.jsonl": record(false)})
	if st := res.Summary.Strategies[0]; res.Verdicts[0].Tone() == verdict.ToneBad || !st.NoRefusalJudged ||
		st.RefusalsUnjudged != "the limiter's state before the run is unknown" {
		t.Fatalf("shared keys: %s %s", res.Verdicts[0].Word, res.Verdicts[0].Text)
	}
}

// judge adds up what the engine adds: a concurrency endpoint that answers sooner than the hold it
// promises holds its slots less long, and those admits are counted early, as hammer --http counts
// them.
func TestEarlyAdmitsAreCountedAsTheEngineCountsThem(t *testing.T) {
	var b strings.Builder
	for i := range 10 { // 4 answered after 5ms, 6 after the 100ms promised
		latency := 150 * time.Millisecond
		if i < 4 {
			latency = 5 * time.Millisecond
		}
		b.WriteString(vegetaRecord(i, genBase.Add(time.Duration(i)*200*time.Millisecond), latency, 200, "http://127.0.0.1:1/a"))
	}
	o := judge.Options{Limiter: limiter.Concurrency, Limit: 2, Hold: 100 * time.Millisecond}
	res := run(t, o, map[string]string{"r.json": b.String()})
	if st := res.Summary.Strategies[0]; st.Early != 4 || st.Admitted != 10 {
		t.Fatalf("early %d of %d admits, want 4 of 10", st.Early, st.Admitted)
	}
}
