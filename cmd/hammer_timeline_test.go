package cmd

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// shiftedProcesses runs one process of run id per clock shift (hidden --clock-shift: the
// stamps it gives are its host's clock), side by side, with the rest of args.
func shiftedProcesses(t *testing.T, srv *redistest.Server, id string, shifts []string, args ...string) []result {
	t.Helper()
	var wg sync.WaitGroup
	runs := make([]result, len(shifts))
	for i, shift := range shifts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			all := append([]string{"--addr", srv.Addr, "hammer", "--run-id", id, "--witness", "redis", "--keep-keys",
				"--workers", "8", "--limit", "8", "--clock-shift", shift, "-o", "json"}, args...)
			runs[i] = execBinary(t, nil, all...)
		}()
	}
	wg.Wait()
	for _, r := range runs {
		if r.code != ExitOK && r.code != ExitCheckFailed {
			t.Fatalf("a process of run %s: exit %d\n%s", id, r.code, r.errOut)
		}
	}
	return runs
}

// mergedReport is hammer report's merged run of id, by name, wanting exit code.
func mergedReport(t *testing.T, srv *redistest.Server, id string, code int, args ...string) (hammerDoc, map[string]strategyDoc) {
	t.Helper()
	r := execBinary(t, nil, append([]string{"--addr", srv.Addr, "hammer", "report", "--run-id", id, "-o", "json"}, args...)...).wantExit(t, code)
	var doc hammerDoc
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	byName := map[string]strategyDoc{}
	for _, s := range doc.Strategies {
		byName[s.Name] = s
	}
	return doc, byName
}

// Refusals are judged over every process's calls on the server's timeline: three processes,
// two of them with clocks 50ms ahead and behind, prove each kind's too-strict fixture wrong
// (hammer report exits 3 on the check every --script run makes) and the shipped script right.
func TestHammerReportJudgesRefusalsAcrossShiftedClocks(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	for _, tc := range []struct {
		kind, script string
		args         []string
	}{
		{"concurrency", "concurrency_release_leaks.lua", []string{"--hold", "2ms"}},
		{"sliding-window", "sliding_log_two_windows.lua", []string{"--window", "100ms"}},
		{"token-bucket", "token_bucket_slow_refill.lua", []string{"--window", "100ms"}},
		// Clocks 100ms apart outlive a window's counter that lives two windows of 100ms: a
		// window of 500ms keeps the shipped script exact.
		{"fixed-window", "fixed_window_limit_minus_one.lua", []string{"--window", "500ms", "--script-keys", "{key}:{window_index}",
			"--script-args", "{limit} {window_ms} {cost}", "--script-allowed", "reply[1] > 0"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			id := "shift-" + tc.kind
			runs := shiftedProcesses(t, srv, id, []string{"0s", "50ms", "-50ms"}, append([]string{"--limiter", tc.kind, "--strategies", "lua,custom",
				"--script", "../testdata/limiters/strict/" + tc.script, "--duration", "2s"}, tc.args...)...)
			// The process that finished last judged every process's calls too, and failed.
			judged := 0
			for _, r := range runs {
				var one hammerDoc
				if err := json.Unmarshal([]byte(r.out), &one); err != nil {
					t.Fatal(err)
				}
				if fr := one.Strategies[1].FalseRejects; fr != nil {
					judged++
					if *fr == 0 || r.code != ExitCheckFailed || *one.Strategies[0].FalseRejects != 0 {
						t.Errorf("the last process judged custom %d, lua %d, exit %d; want some, 0 and exit 3", *fr, *one.Strategies[0].FalseRejects, r.code)
					}
				}
			}
			if judged != 1 {
				t.Errorf("%d processes judged refusals over every process's calls; want the last one", judged)
			}
			doc, st := mergedReport(t, srv, id, ExitCheckFailed)
			lua, custom := st["lua"], st["custom"]
			if doc.Processes != 3 || lua.FalseRejects == nil || *lua.FalseRejects != 0 || lua.Overshoot != 0 || !lua.Contended {
				t.Errorf("the shipped script over 3 processes: processes %d, false rejects %v, overshoot %d, contended %v (%s); want 0, 0, contended",
					doc.Processes, lua.FalseRejects, lua.Overshoot, lua.Contended, lua.RefusalsUnjudged)
			}
			if custom.FalseRejects == nil || *custom.FalseRejects == 0 || custom.FirstFalseReject == nil || !strings.Contains(custom.Verdict, "TOO STRICT") {
				t.Errorf("%s over 3 processes: false rejects %v (%s), verdict %q; want it caught", tc.script, custom.FalseRejects, custom.RefusalsUnjudged, custom.Verdict)
			}
			if !strings.Contains(strings.Join(doc.Failures, "\n"), "custom.false_rejects==0") {
				t.Errorf("hammer report failed for %v, want the implied false-reject check", doc.Failures)
			}
		})
	}
}

// A process killed mid-run leaves calls of unknown outcome, as many as it made after its last
// published mark: the report judges every refusal before it (and finds the too-strict script's)
// and none after, saying why.
func TestHammerReportStopsJudgingWhereAProcessWasKilled(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	args := []string{"--addr", srv.Addr, "hammer", "--run-id", "killed", "--witness", "redis", "--keep-keys", "--workers", "8",
		"--limit", "8", "--hold", "2ms", "--strategies", "lua,custom", "--script", "../testdata/limiters/strict/concurrency_release_leaks.lua", "-o", "json"}
	killed, _, errOut := startBinary(t, append(args, "--duration", "60s")...)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		execBinary(t, nil, append(args, "--duration", "3s")...)
	}()
	rdb := srv.Client(t)
	deadline := time.Now().Add(20 * time.Second)
	for len(rdb.Keys(t.Context(), "limitctl:calls:{killed}:*:s:lua:1").Val()) < 2 { // both published a second's calls
		if time.Now().After(deadline) {
			t.Fatalf("the processes never published a second of calls\n%s", errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	killed.Process.Kill()
	killed.Wait()
	wg.Wait()
	doc, st := mergedReport(t, srv, "killed", ExitCheckFailed)
	lua, custom := st["lua"], st["custom"]
	if doc.Processes != 1 {
		t.Errorf("processes %d: want the one that finished", doc.Processes)
	}
	for _, s := range []strategyDoc{lua, custom} {
		if s.FalseRejects == nil || !strings.Contains(s.RefusalsUnjudged, "stopped publishing its calls") {
			t.Errorf("%s: false rejects %v, %q; want those before the kill judged, and why the rest were not", s.Name, s.FalseRejects, s.RefusalsUnjudged)
		}
	}
	if *lua.FalseRejects != 0 || *custom.FalseRejects == 0 {
		t.Errorf("false rejects before the kill: lua %d, custom %d; want 0 and some", *lua.FalseRejects, *custom.FalseRejects)
	}
}

// A clock known only within more than a quarter of the window judges nothing: false_rejects
// stays null, the report says why, and an assertion on it fails.
func TestHammerReportJudgesNoRefusalOnABoundTooWide(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	var wg sync.WaitGroup
	for _, delay := range []string{"0s", "40ms"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			execBinary(t, nil, "--addr", srv.Addr, "hammer", "--run-id", "wide", "--witness", "redis", "--keep-keys", "--workers", "8",
				"--limiter", "sliding-window", "--window", "100ms", "--limit", "8", "--strategies", "lua", "--duration", "2s",
				"--clock-probe-delay", delay, "-o", "json").wantExit(t, ExitOK)
		}()
	}
	wg.Wait()
	doc, st := mergedReport(t, srv, "wide", ExitCheckFailed, "--assert", "lua.false_rejects==0")
	lua := st["lua"]
	if lua.FalseRejects != nil || !strings.Contains(lua.RefusalsUnjudged, "more than a quarter of the window") {
		t.Errorf("false rejects %v, %q; want null and the bound named", lua.FalseRejects, lua.RefusalsUnjudged)
	}
	if f := strings.Join(doc.Failures, "\n"); !strings.Contains(f, "refusals not judged") {
		t.Errorf("failures %q: want the assertion failed for refusals not judged", f)
	}
}

// What a process of a shared run writes of its calls is bounded (--evidence-max-mib): past the
// bound it publishes no more, the report judges the refusals before it and says why it judged
// none after, and the calls in Redis stay within the bound and one flush.
func TestHammerSharedRunEvidenceIsBounded(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	const bound = 0.02 // MiB: about 1,700 decisions
	execBinary(t, nil, "--addr", srv.Addr, "hammer", "--run-id", "bounded", "--witness", "redis", "--keep-keys",
		"--workers", "8", "--limit", "8", "--strategies", "lua", "--duration", "3s",
		"--evidence-max-mib", strconv.FormatFloat(bound, 'f', -1, 64), "-o", "json").wantExit(t, ExitOK)
	_, st := mergedReport(t, srv, "bounded", ExitOK)
	lua := st["lua"]
	if lua.FalseRejects == nil || !strings.Contains(lua.RefusalsUnjudged, "reached the evidence bound of 20.5 KiB") {
		t.Errorf("false rejects %v, %q; want those before the bound judged, and the bound named", lua.FalseRejects, lua.RefusalsUnjudged)
	}
	rdb := srv.Client(t)
	// Each flush is one element of a list numbered by the second: the last flush is the last
	// element of the highest-numbered list. Every flush before it began under the bound.
	var written, last, lastList int
	for _, key := range rdb.Keys(t.Context(), "limitctl:calls:{bounded}:*:s:lua:*").Val() {
		n, _ := strconv.Atoi(key[strings.LastIndexByte(key, ':')+1:])
		flushes := rdb.LRange(t.Context(), key, 0, -1).Val()
		for _, e := range flushes {
			written += len(e)
		}
		if len(flushes) > 0 && n >= lastList {
			last, lastList = len(flushes[len(flushes)-1]), n
		}
	}
	// The bound (20,972 bytes) and one flush, however fast the machine made its calls.
	if written == 0 || written-last >= 20_972 {
		t.Errorf("%d bytes of calls written, %d of them before the last flush; want some, and the bound (20,972) crossed only by the last", written, written-last)
	}
	t.Logf("%d bytes of calls written; %s", written, lua.RefusalsUnjudged)
	execBinary(t, nil, "--addr", srv.Addr, "hammer", "--run-id", "x", "--witness", "redis", "--evidence-max-mib", "-1").
		wantExit(t, ExitUsage).wantOneLineError(t, "--evidence-max-mib must be 0")
}
