package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/limiter"
)

// A verdict says only what was judged: exact needs the evidence to have seen the limit, and
// LEAKS stands beside the limit's word, or alone where that word proved nothing.
func TestVerdictSaysOnlyWhatWasJudged(t *testing.T) {
	judged := bench.StrategySnapshot{Admitted: 100, Rejected: 900, Contended: true, Leaks: &bench.Leaks{}, Findings: fold.Findings{Peak: 20}}
	leak := &bench.Leaks{KeysWithoutTTL: 2, Samples: []bench.KeyState{{Key: "rl:{r}:custom:exp", Type: "string", Size: 1, TTLMs: -1}}}
	for _, tc := range []struct {
		name   string
		change func(*bench.StrategySnapshot)
		word   string
		text   []string
		tone   Tone
	}{
		{"judged and clean", func(*bench.StrategySnapshot) {}, Exact, []string{"peak 20 of 20, 0 events, 0 false rejects"}, ToneGood},
		{"no more admits judged than the limit", func(s *bench.StrategySnapshot) { s.Unjudged, s.Allowances = 80, "skew ±500ms" },
			NotJudged, []string{"skew ±500ms left 80 of 100 admits unjudged: no more than the limit were judged"}, ToneWarn},
		{"most admits unjudged, more than the limit judged", func(s *bench.StrategySnapshot) { s.Unjudged = 60 }, Exact, nil, ToneGood},
		{"only the limit admitted, every one judged", func(s *bench.StrategySnapshot) { s.Admitted = 20 }, Exact, nil, ToneGood},
		{"no admit judged", func(s *bench.StrategySnapshot) { s.Unjudged, s.Peak, s.Allowances = 100, 0, "skew ±1.50s" },
			NotJudged, []string{"peak 0 of 20: skew ±1.50s left no admit judged"}, ToneWarn},
		{"refused but never saw two admits together", func(s *bench.StrategySnapshot) {
			s.Peak, s.Allowances = 0, "skew ±500ms and a lateness bound of 1011ms"
		},
			NotJudged, []string{"peak 0 of 20: the limiter refused, but the evidence never saw a request admitted (or held) with another: skew ±500ms and a lateness bound of 1011ms blur every window"}, ToneWarn},
		{"a coarse peak is judged", func(s *bench.StrategySnapshot) { s.Peak = 5 }, Exact, nil, ToneGood},
		{"an overshoot stands on its evidence", func(s *bench.StrategySnapshot) { s.Unjudged, s.Peak, s.Overshoot, s.OvershootEvent = 90, 24, 4, 1 },
			Overshoot, []string{"peak 24 of 20 (+4)"}, ToneBad},
		{"leaks beside exact", func(s *bench.StrategySnapshot) { s.Leaks = leak }, Exact + ", " + Leaks,
			[]string{"left 2 keys without a TTL (rl:{r}:custom:exp: string of 1, no TTL); peak 20 of 20"}, ToneBad},
		{"leaks beside overshoot", func(s *bench.StrategySnapshot) { s.Leaks, s.Peak, s.Overshoot = leak, 25, 5 },
			Overshoot + ", " + Leaks, []string{"left 2 keys", "peak 25 of 20 (+5)"}, ToneBad},
		{"leaks alone where nothing was tested", func(s *bench.StrategySnapshot) { s.Leaks, s.Rejected, s.Contended, s.Peak = leak, 0, false, 3 },
			Leaks, []string{"left 2 keys without a TTL", "; no evidence: peak 3 of 20: the limit was never reached"}, ToneBad},
		{"a TTL of years", func(s *bench.StrategySnapshot) {
			s.Leaks = &bench.Leaks{KeysTTLTooLong: 1, Samples: []bench.KeyState{{Key: "k", Type: "hash", Size: 1, TTLMs: int64(56 * 365 * 24 * time.Hour / time.Millisecond)}}}
		}, Exact + ", " + Leaks, []string{"left 1 key with a TTL far beyond the limiter's need (k: hash of 1, TTL 20440 days)"}, ToneBad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := judged
			tc.change(&st)
			v := Judge(st, limiter.FixedWindow, 20, 5*time.Second)
			if v.Word != tc.word || v.Tone() != tc.tone {
				t.Fatalf("verdict %q (tone %s): %s; want %q (tone %s)", v.Word, v.Tone(), v.Text, tc.word, tc.tone)
			}
			for _, want := range tc.text {
				if !strings.Contains(v.Text, want) {
					t.Errorf("text %q lacks %q", v.Text, want)
				}
			}
		})
	}
}

// An overshoot assertion on a strategy the evidence could not judge fails, saying why; an
// assertion on leaks reads both counts, and has no value where the keys were not read.
func TestAssertionsOnNotJudgedAndLeaks(t *testing.T) {
	sum := bench.Summary{Limiter: limiter.FixedWindow, Limit: 20, Strategies: []bench.StrategySnapshot{{
		Name: "custom", Admitted: 100, Rejected: 50, Contended: true, Allowances: "skew ±500ms",
		Leaks:    &bench.Leaks{KeysWithoutTTL: 1, KeysTTLTooLong: 2},
		Findings: fold.Findings{Unjudged: 80},
	}}}
	eval := func(expr string) AssertionResult {
		a, err := ParseAssertion(expr, []string{"custom"})
		if err != nil {
			t.Fatal(err)
		}
		return a.Eval(sum)
	}
	if r := eval("custom.overshoot==0"); r.Passed || !strings.Contains(r.Reason, "not judged: skew ±500ms left 80 of 100 admits unjudged: no more than the limit") {
		t.Errorf("overshoot on a strategy not judged: %+v", r)
	}
	if r := eval("custom.leaks==3"); !r.Passed || *r.Actual != 3 {
		t.Errorf("leaks==3: %+v", r)
	}
	if r := eval("custom.leaks==0"); r.Passed || !strings.Contains(r.Reason, "left 1 key without a TTL and 2 keys with a TTL far beyond") {
		t.Errorf("leaks==0: %+v", r)
	}
	sum.Strategies[0].Leaks, sum.Strategies[0].LeftoversUnread = nil, "could not read the run's keys: NOPERM"
	if r := eval("custom.leaks>=0"); r.Passed || r.Actual != nil || !strings.Contains(r.Reason, "keys not read: could not read the run's keys: NOPERM") {
		t.Errorf("leaks not read: %+v", r)
	}
}

// Exact only where the evidence could have seen an overshoot: a power of +1 is plain exact, a
// weaker one is said on the verdict line, and one no better than the limit is no verdict. An
// overshoot assertion then fails, saying why.
func TestVerdictStatesItsPower(t *testing.T) {
	power := func(k int64) *int64 { return &k }
	base := bench.StrategySnapshot{Name: "custom", Admitted: 100, Rejected: 900, Contended: true, Leaks: &bench.Leaks{},
		Allowances: "skew ±200ms and a lateness bound of 411ms", Findings: fold.Findings{Peak: 19}}
	for _, tc := range []struct {
		name  string
		kind  limiter.Kind
		limit int64
		power *int64
		word  string
		text  string
	}{
		{"not measured (a live tick)", limiter.FixedWindow, 20, nil, Exact, "peak 19 of 20, 0 events, 0 false rejects"},
		{"+1, the best there is", limiter.FixedWindow, 20, power(1), Exact, "peak 19 of 20, 0 events, 0 false rejects"},
		{"+3", limiter.FixedWindow, 20, power(3), Exact, "an overshoot of up to +2 per window could have escaped this evidence where it was thinnest"},
		{"+19, under the limit", limiter.FixedWindow, 20, power(19), Exact, "up to +18 per window could have escaped"},
		{"+20, the limit itself", limiter.FixedWindow, 20, power(20), NotJudged,
			"peak 19 of 20: an overshoot of up to +19 per window could have escaped this evidence, so it proves nothing short of the limit itself (skew ±200ms and a lateness bound of 411ms)"},
		{"none up to twice the limit", limiter.FixedWindow, 20, power(0), NotJudged, "an overshoot of up to +40 per window could have escaped this evidence"},
		{"held at once", limiter.Concurrency, 20, power(4), Exact, "an overshoot of up to +3 held at once could have escaped"},
		{"a limit of one: +1 is judged", limiter.Concurrency, 1, power(1), Exact, "0 events"},
		{"a limit of two: +2 is the limit", limiter.Concurrency, 2, power(2), NotJudged, "up to +1 held at once could have escaped this evidence, so it proves nothing short of the limit itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := base
			st.CaughtFrom = tc.power
			v := Judge(st, tc.kind, tc.limit, 5*time.Second)
			if v.Word != tc.word || !strings.Contains(v.Text, tc.text) {
				t.Errorf("verdict %q: %s; want %q with %q", v.Word, v.Text, tc.word, tc.text)
			}
			if tc.power != nil && *tc.power <= 1 && strings.Contains(v.Text, "as far as seen") {
				t.Errorf("a power of +1 said as a weakness: %s", v.Text)
			}
			a, err := ParseAssertion("custom.overshoot==0", []string{"custom"})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Eval(bench.Summary{Limiter: tc.kind, Limit: tc.limit, Strategies: []bench.StrategySnapshot{st}})
			if r.Passed != (tc.word == Exact) {
				t.Errorf("custom.overshoot==0 passed %v (%s), verdict %q", r.Passed, r.Reason, v.Word)
			}
		})
	}
	st := base
	st.CaughtFrom = power(2)
	if got := PowerText(st, limiter.TokenBucket, 20); got != "an overshoot of +2 per window would have been proven by this run's evidence" {
		t.Errorf("PowerText: %q", got)
	}
}
