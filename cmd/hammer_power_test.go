package cmd

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// powerStrategy is what these tests read of a strategy in hammer -o json.
type powerStrategy struct {
	Name        string `json:"name"`
	Peak        int64  `json:"peak"`
	Verdict     string `json:"verdict"`
	VerdictText string `json:"verdict_text"`
	CaughtFrom  *int64 `json:"caught_from"`
	Overshoot   int64  `json:"overshoot"`
	// FalseRejects is nil where the refusals were not judged.
	FalseRejects *int64 `json:"false_rejects"`
}

func hammerJSON(t *testing.T, args ...string) (result, []powerStrategy) {
	t.Helper()
	r := run(t, append(args, "-o", "json")...)
	var doc struct {
		Strategies []powerStrategy `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s\n%s", r.code, err, r.out, r.errOut)
	}
	return r, doc.Strategies
}

// APISIX's limit-conn, as README runs it: deadlines on whole seconds given as the window's index.
// At the default stale-after (two of its clock's units) a request held for the default hold is
// never dropped by rounding: exact. Given a stale-after of one second, the script drops running
// requests at each second's turn and admits others beside them: OVERSHOOT, and the verdict says
// the limiter counted fewer than were held.
func TestHammerWholeSecondConcurrencyScriptAtTheDefaultStaleAfter(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	args := []string{"--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--strategies", "custom",
		"--script", filepath.Join("..", "testdata", "limiters", "concurrency_deadlines_whole_seconds.lua"),
		"--script-keys", "{key}", "--script-args", "{limit} {stale_after_s} {window_index} {member}",
		"--script-allowed", "reply[1] == 1", "--script-release", "ZREM {key} {member}", "--limit", "20", "--window", "1s", "--duration", "3s"}
	r, st := hammerJSON(t, args...)
	if r.code != ExitOK || st[0].Verdict != "exact" || st[0].CaughtFrom == nil {
		t.Fatalf("default stale-after: exit %d, %+v\n%s", r.code, st, r.errOut)
	}
	// The drop is seen in the first overshoot's requests. A run on a machine too busy to fill
	// the limit cannot overshoot (it says how weak its evidence was), and one whose first moment
	// shows no count below the held says nothing of a drop: either is run again.
	for attempt := 1; ; attempt++ {
		r, st = hammerJSON(t, append(args, "--stale-after", "1s")...)
		if st[0].Verdict == "exact" && (st[0].CaughtFrom == nil || *st[0].CaughtFrom <= 1) {
			t.Fatalf("--stale-after 1s: exact with the limit filled: exit %d, %+v\n%s", r.code, st, r.errOut)
		}
		dropped := strings.Contains(st[0].VerdictText, "it dropped held requests (stale time shorter than its clock's unit?)")
		if r.code == ExitCheckFailed && st[0].Verdict == "OVERSHOOT" && dropped {
			break
		}
		t.Logf("attempt %d: exit %d, %s", attempt, r.code, st[0].VerdictText)
		if attempt == 5 {
			t.Fatalf("5 runs and none overshot saying it dropped held requests")
		}
	}
}

// A window opened by the first hit, its limit doubled: under a skew that blurs every window the
// verdict is never exact (not judged, or OVERSHOOT when the evidence proves it), and at a few
// milliseconds it is caught, judged as its library documents it (--window-start first-hit; under
// the default any, twice the limit needs luckier evidence). Every strategy's JSON carries its
// power, and the HTML report says it.
func TestHammerDoubledFirstHitWindowIsNeverExact(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	base := []string{"--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--duration", "3s",
		"--script", filepath.Join("..", "testdata", "limiters", "fixed_window_first_hit_ns.lua"),
		"--script-keys", "{key}", "--script-args", "{now_ns} {limit * 2} {window_ns}", "--script-allowed", "reply[4] == 1"}
	for _, skew := range []string{"200ms", "500ms", "1500ms"} {
		r, st := hammerJSON(t, append(base, "--skew", skew)...)
		if st[0].Verdict == "exact" || r.code != ExitCheckFailed {
			t.Errorf("--skew %s: exit %d, verdict %q: %s", skew, r.code, st[0].Verdict, st[0].VerdictText)
		}
	}
	caught := false
	for attempt := 0; attempt < 3 && !caught; attempt++ {
		_, st := hammerJSON(t, append(base, "--skew", "5ms", "--duration", "5s", "--window-start", "first-hit")...)
		caught = st[0].Verdict == "OVERSHOOT"
	}
	if !caught {
		t.Errorf("--skew 5ms: not caught in 3 runs of 5s")
	}
	report := filepath.Join(t.TempDir(), "r.html")
	r, st := hammerJSON(t, "--addr", srv.Addr, "hammer", "--duration", "2s", "--report", report)
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("exit %d: %v", r.code, err)
	}
	text := html.UnescapeString(string(page))
	// A concurrency run proves what would have lifted its peak over the limit: +1 once the load
	// filled the limit, more on a machine too busy to (and the verdict then says so).
	for _, s := range st {
		want := max(1, 20+1-s.Peak)
		if s.CaughtFrom == nil || *s.CaughtFrom != want {
			t.Errorf("%s at the defaults: caught_from %v, want %d for a peak of %d (%s)", s.Name, s.CaughtFrom, want, s.Peak, s.VerdictText)
			continue
		}
		line := fmt.Sprintf("Power: an overshoot of +%d held at once would have been proven by this run's evidence.", want)
		if !strings.Contains(text, line) {
			t.Errorf("the report does not state %s's power: %q", s.Name, line)
		}
	}
	if n := strings.Count(text, "Power: "); n != 2 {
		t.Errorf("the report states the power of %d strategies, want 2 (naive and lua)", n)
	}
}
