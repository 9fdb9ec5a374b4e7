package hammer

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/trace"
)

// articleRace is the article's interleaving as a trace publishes it: r4117 and r4120 both
// count 19 before either adds, so both are raced, and 21 are held; r4001 was held all along.
func articleRace() *trace.Overshoot {
	held := int64(21)
	step := func(op, phase, reply string, sent, replied int64) trace.StepOut {
		return trace.StepOut{Op: op, Phase: phase, Reply: json.RawMessage(reply), SentUs: sent, RepliedUs: replied}
	}
	req := func(id string, raced bool, steps ...trace.StepOut) trace.Request {
		return trace.Request{ID: id, Raced: raced, Steps: steps}
	}
	return &trace.Overshoot{AtMs: 3200.5, Held: &held, Limit: 20, Requests: []trace.Request{
		req("r4001", false, step("ZCARD", "check", "3", 100, 150), step("ZADD", "write", "1", 160, 200)),
		req("r4117", true, step("ZREMRANGEBYSCORE", "prune", "0", 3000, 3050), step("ZCARD", "check", "19", 3060, 3120),
			step("ZADD", "write", "1", 3310, 3400), step("PEXPIRE", "expire", "1", 3400, 3450)),
		req("r4120", true, step("ZREMRANGEBYSCORE", "prune", "0", 3010, 3070), step("ZCARD", "check", "19", 3080, 3150),
			step("ZADD", "write", "1", 3330, 3420), step("PEXPIRE", "expire", "1", 3420, 3460)),
	}, Omitted: 18}
}

func TestHowLinesTellTheArticlesRaceAndWrapAt100Columns(t *testing.T) {
	res := Result{Summary: bench.Summary{Strategies: []bench.StrategySnapshot{
		{Name: "naive", Findings: fold.Findings{FirstOvershoot: articleRace()}}, {Name: "lua"},
	}}}
	want := []string{
		"naive  how: r4117 ZCARD → 19 (+0.00ms) · r4120 ZCARD → 19 (+0.02ms) · r4117 ZADD (+0.25ms) ·",
		"            r4120 ZADD (+0.27ms) → 21 held at 3.20s, limit 20",
		"            (r4117, r4120 raced; 19 more in the JSON)",
	}
	if got := res.HowLines(0); !slices.Equal(got, want) {
		t.Errorf("how-lines:\n%q\nwant\n%q", got, want)
	}
	for _, width := range []int{0, 100, 80, 60} {
		for _, line := range res.HowLines(width) {
			if n := len([]rune(line)); n > max(width, 0) && width > 0 || n > HowWidth {
				t.Errorf("a %d-column line at width %d: %q", n, width, line)
			}
		}
	}
}

func TestHowLinesSayWhatTheyCannotShow(t *testing.T) {
	ov := articleRace()
	ov.Missing, ov.ThisProcess = 2, true
	res := Result{Summary: bench.Summary{Strategies: []bench.StrategySnapshot{{Name: "naive", Findings: fold.Findings{FirstOvershoot: ov}}}}}
	lines := res.HowLines(0)
	said := strings.Join(strings.Fields(strings.Join(lines, " ")), " ") // the notes may wrap
	for _, want := range []string{"(r4117, r4120 raced; 19 more in the JSON; 2 no longer kept; this process's requests only)"} {
		if !strings.HasSuffix(said, want) {
			t.Errorf("%q does not end in %q", lines, want)
		}
	}
	for _, line := range lines {
		if n := len([]rune(line)); n > HowWidth {
			t.Errorf("a %d-column how-line: %q", n, line)
		}
	}
}

func TestHowLinesOfAScriptShowItsCallsAndReplies(t *testing.T) {
	n := int64(21)
	ov := &trace.Overshoot{AtMs: 10, InWindow: &n, Limit: 20, Requests: []trace.Request{
		{ID: "r7", Steps: []trace.StepOut{{Op: "EVALSHA", Phase: "call", Reply: json.RawMessage(`[1,20]`), SentUs: 100, RepliedUs: 300}}},
		{ID: "r9", Steps: []trace.StepOut{{Op: "EVALSHA", Phase: "call", Reply: json.RawMessage(`[1,21]`), SentUs: 200, RepliedUs: 450}}},
	}}
	res := Result{Summary: bench.Summary{Strategies: []bench.StrategySnapshot{{Name: "custom", Findings: fold.Findings{FirstOvershoot: ov}}}}}
	want := []string{"custom  how: r7 EVALSHA → {1, 20} (+0.00ms) · r9 EVALSHA → {1, 21} (+0.15ms)",
		"             → 21 in window at 0.01s, limit 20"}
	if got := res.HowLines(0); !slices.Equal(got, want) {
		t.Errorf("how-lines:\n%q\nwant\n%q", got, want)
	}
}

func TestHowLinesShowWhatTheFirstWrongRefusalSaw(t *testing.T) {
	f := &refusal.FalseReject{SentMs: 412.5, RepliedMs: 413, HeldOrAdmitted: 3, Limit: 20, Request: &trace.Request{ID: "r88",
		Steps: []trace.StepOut{{Op: "EVALSHA", Phase: "call", Reply: json.RawMessage(`[0,20]`), SentUs: 412_500, RepliedUs: 412_950}}}}
	res := Result{Summary: bench.Summary{Limiter: "concurrency", Strategies: []bench.StrategySnapshot{{Name: "custom", Findings: fold.Findings{Refusals: fold.Refusals{FirstFalseReject: f}}}}}}
	want := []string{"custom  refused: r88 EVALSHA → {0, 20} (+0.45ms) → refused at 0.41s, at most 3 of 20 held"}
	if got := res.HowLines(0); !slices.Equal(got, want) {
		t.Errorf("how-lines:\n%q\nwant\n%q", got, want)
	}
	one := int64(1) // what only a request abandoned more than stale-after ago can have filled
	f.AbandonedReclaimable = &one
	if got := res.HowLines(0); len(got) != 2 || !strings.HasSuffix(got[1], "→ refused at 0.41s, at most 3 of 20 held, 1 abandoned more than stale-after ago") {
		t.Errorf("with an abandoned request (wrapped at 100 columns): %q", got)
	}
	f.Request, f.AbandonedReclaimable = nil, nil
	if got := res.HowLines(0); len(got) != 1 || !strings.Contains(got[0], "(its commands were no longer kept)") {
		t.Errorf("without its record: %q", got)
	}
}

// issueRace is a recorded shape where the request that saw the most (r31, 15) has no partner
// that missed it too: r37 checked after r31's write (and read 9, members having gone). r40
// and r41 both checked before either wrote: that pair shows the race.
func issueRace(withPair bool) *trace.Overshoot {
	held := int64(21)
	step := func(op, phase, reply string, sent, replied int64) trace.StepOut {
		return trace.StepOut{Op: op, Phase: phase, Reply: json.RawMessage(reply), SentUs: sent, RepliedUs: replied}
	}
	req := func(id string, raced bool, check string, checked, wrote int64) trace.Request {
		return trace.Request{ID: id, Raced: raced, Steps: []trace.StepOut{
			step("ZCARD", "check", check, checked-50, checked), step("ZADD", "write", "1", wrote, wrote+40)}}
	}
	reqs := []trace.Request{req("r31", true, "15", 1000, 1100), req("r37", true, "9", 1300, 5000)}
	if withPair {
		reqs = append(reqs, req("r40", true, "14", 2000, 3000), req("r41", true, "14", 2100, 3100))
	}
	return &trace.Overshoot{AtMs: 5000, Held: &held, Limit: 20, Requests: reqs}
}

func TestHowLinesShowBothChecksBeforeTheWrites(t *testing.T) {
	for name, tc := range map[string]struct {
		ov   *trace.Overshoot
		want string
	}{
		"a pair that missed each other": {issueRace(true),
			"naive how: r40 ZCARD → 14 (+0.00ms) · r41 ZCARD → 14 (+0.10ms) · r40 ZADD (+1.05ms) · r41 ZADD (+1.15ms) → 21 held at 5.00s, limit 20"},
		"no such pair: the one nearest the limit and one it missed": {issueRace(false),
			"naive how: r31 ZCARD → 15 (+0.00ms) · r31 ZADD (+0.15ms) · r37 ZCARD → 9 (+0.30ms) · r37 ZADD (+4.05ms) → 21 held at 5.00s, limit 20"},
		"the article's race": {articleRace(),
			"naive how: r4117 ZCARD → 19 (+0.00ms) · r4120 ZCARD → 19 (+0.02ms) · r4117 ZADD (+0.25ms) · r4120 ZADD (+0.27ms) → 21 held at 3.20s, limit 20"},
	} {
		res := Result{Summary: bench.Summary{Strategies: []bench.StrategySnapshot{{Name: "naive", Findings: fold.Findings{FirstOvershoot: tc.ov}}}}}
		got := strings.Join(strings.Fields(strings.Join(res.HowLines(0), " ")), " ") // the wrapped lines as one
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n%s\nwant it to start\n%s", name, got, tc.want)
		}
	}
}

// A live run's trace (testdata/traces/naive_direct.json, recorded from `limitctl hammer` on
// direct connections): each worker sends its ZADD a µs or two after its ZCARD is answered, so
// no two checks were both answered before either write went. The how-line still tells the race
// as Redis ran it: two checks sent before either write, reading the same count, then the writes.
func TestHowLinesTellARecordedRaceChecksFirst(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/traces/naive_direct.json")
	if err != nil {
		t.Fatal(err)
	}
	var ov trace.Overshoot
	if err := json.Unmarshal(raw, &ov); err != nil {
		t.Fatal(err)
	}
	answeredBeforeWrites := 0
	for _, r := range ov.Requests {
		for _, p := range ov.Requests {
			rc, pw, rw, pc := r.Steps[1], p.Steps[2], r.Steps[2], p.Steps[1]
			if r.ID != p.ID && rc.RepliedUs < pw.SentUs && pc.RepliedUs < rw.SentUs {
				answeredBeforeWrites++
			}
		}
	}
	if answeredBeforeWrites != 0 {
		t.Fatalf("the recorded trace has %d pairs whose checks were both answered first: not the live shape", answeredBeforeWrites)
	}
	events := ov.Timeline(trace.HowRequests)
	var phases, requests []string
	for _, e := range events {
		phases = append(phases, e.Phase)
		requests = append(requests, e.Request)
	}
	if !slices.Equal(phases, []string{"check", "check", "write", "write"}) || requests[0] == requests[1] ||
		events[0].Reply != events[1].Reply {
		t.Errorf("the how-line's events: %+v; want two checks reading the same count, then both writes", events)
	}
	res := Result{Summary: bench.Summary{Strategies: []bench.StrategySnapshot{{Name: "naive", Findings: fold.Findings{FirstOvershoot: &ov}}}}}
	t.Logf("%s", strings.Join(res.HowLines(0), "\n"))
}
