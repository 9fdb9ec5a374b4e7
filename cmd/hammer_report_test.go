package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

func TestHammerReportMergesThreeProcesses(t *testing.T) {
	skipInShortMode(t)
	for _, kind := range []string{"concurrency", "sliding-window"} {
		t.Run(kind, func(t *testing.T) { testThreeProcesses(t, kind) })
	}
}

func testThreeProcesses(t *testing.T, kind string) {
	srv := redistest.Start(t)
	// Three processes share one run: each has 8 workers, so a naive peak above 8 in-flight is
	// joint evidence that only the shared witness can see. --keep-keys: the first process to
	// finish must not delete the limiter keys the others still use.
	var wg sync.WaitGroup
	runs := make([]result, 3)
	for i := range runs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			bound := []string{"--requests", "1500"}
			if kind == "sliding-window" {
				bound = []string{"--duration", "3s", "--window", "100ms"} // thirty windows to contend
			}
			args := append([]string{"--addr", srv.Addr, "hammer", "--limiter", kind, "--limit", "8", "--run-id", "three",
				"--witness", "redis", "--keep-keys", "--workers", "8", "--hold", "5ms", "-o", "json"}, bound...)
			runs[i] = execBinary(t, nil, args...)
		}(i)
	}
	wg.Wait()
	var attempts [2]int64
	for _, r := range runs {
		r.wantExit(t, ExitOK)
		var one hammerDoc
		if err := json.Unmarshal([]byte(r.out), &one); err != nil {
			t.Fatal(err)
		}
		for i, s := range one.Strategies {
			attempts[i] += s.Attempts
		}
	}
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "report", "--run-id", "three", "-o", "json",
		"--assert", "lua.overshoot==0").wantExit(t, ExitOK)
	var merged hammerDoc
	if err := json.Unmarshal([]byte(r.out), &merged); err != nil {
		t.Fatal(err)
	}
	if merged.Processes != 3 || merged.Workers != 24 {
		t.Fatalf("processes %d, workers %d; want 3 processes of 8 workers", merged.Processes, merged.Workers)
	}
	for i, s := range merged.Strategies {
		if s.Attempts != attempts[i] {
			t.Errorf("%s: merged attempts %d, the three processes made %d", s.Name, s.Attempts, attempts[i])
		}
		if s.Admitted+s.Rejected+s.Errors != s.Attempts || s.LatencyMs.P99 <= 0 || s.LatencyMs.Max < s.LatencyMs.P99 {
			t.Errorf("%s: merged counts or latency do not add up: %+v", s.Name, s)
		}
	}
	naive, lua := merged.Strategies[0], merged.Strategies[1]
	if naive.Name != "naive" || naive.Overshoot == 0 {
		t.Errorf("naive across three processes: peak %d overshoot %d; want an overshoot", naive.Peak, naive.Overshoot)
	}
	if kind == "concurrency" && naive.Peak <= 8 {
		t.Errorf("naive's joint peak %d: three processes of 8 workers each must have held more than 8 slots at once", naive.Peak)
	}
	// The trace is one process's requests, and says so. With the shared witness the admit that
	// went over is the process's own, so it shows some; a window judged jointly may have been
	// overrun by the other processes' admits alone.
	if ov := naive.FirstOvershoot; naive.Overshoot > 0 && (ov == nil || !ov.ThisProcess || kind == "concurrency" && len(ov.Requests) == 0) {
		t.Errorf("naive overshot; its merged first_overshoot is %+v, want this process's requests", ov)
	}
	if lua.FirstOvershoot != nil {
		t.Errorf("lua held; its first_overshoot is %+v", lua.FirstOvershoot)
	}
	if lua.Name != "lua" || lua.Overshoot != 0 || !lua.Contended || lua.Peak != 8 {
		t.Errorf("lua across three processes: peak %d overshoot %d contended %v; want the limit 8, 0 and contended", lua.Peak, lua.Overshoot, lua.Contended)
	}
	// No process can bound what the others held or admitted, but the report judges every
	// process's calls on the server's timeline: the shipped script refused none with room.
	if lua.FalseRejects == nil || *lua.FalseRejects != 0 || naive.FalseRejects == nil {
		t.Errorf("refusals across processes: lua %v, naive %v; want both judged, lua's 0", lua.FalseRejects, naive.FalseRejects)
	}
	execBinary(t, nil, "--addr", srv.Addr, "hammer", "report", "--run-id", "nobody").wantExit(t, ExitError)
}

// hammer report judges the merged run as hammer judges each process, with the same function:
// two processes of a script whose every call fails each exit 3 (its decisions errored on more
// than 1% of calls, and the implied overshoot check had no evidence), and so does the report
// over them, with passed false, the same reason and the same verdict word per strategy.
func TestHammerReportFailsWhatTheProcessesFailed(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join(t.TempDir(), "broken.lua")
	if err := os.WriteFile(script, []byte("return redis.error_reply('ERR broken on purpose')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	runs := make([]result, 2)
	for i := range runs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runs[i] = execBinary(t, nil, "--addr", srv.Addr, "hammer", "--script", script, "--witness", "redis", "--run-id", "rr",
				"--keep-keys", "--requests", "300", "--workers", "4", "-o", "json")
		}(i)
	}
	wg.Wait()
	type judged struct {
		Passed     bool     `json:"passed"`
		Failures   []string `json:"failures"`
		Strategies []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
		} `json:"strategies"`
	}
	decode := func(r result) judged {
		t.Helper()
		var j judged
		if err := json.Unmarshal([]byte(r.out), &j); err != nil {
			t.Fatalf("%v\n%s", err, r.out)
		}
		return j
	}
	for _, r := range runs {
		r.wantExit(t, ExitCheckFailed)
		if j := decode(r); j.Passed || len(j.Failures) != 1 || !strings.Contains(j.Failures[0], "custom: 300 of 300 decisions failed") ||
			len(j.Strategies) != 1 || j.Strategies[0].Verdict != "errors" {
			t.Fatalf("a process of the broken script: %+v", j)
		}
	}
	report := execBinary(t, nil, "--addr", srv.Addr, "hammer", "report", "--run-id", "rr", "-o", "json")
	report.wantExit(t, ExitCheckFailed)
	j := decode(report)
	if j.Passed || len(j.Failures) != 1 || !strings.Contains(j.Failures[0], "custom: 600 of 600 decisions failed") ||
		len(j.Strategies) != 1 || j.Strategies[0].Verdict != "errors" {
		t.Fatalf("hammer report over the broken script's two processes: %+v\nstderr:\n%s", j, report.errOut)
	}
	if !strings.Contains(report.errOut, "limitctl: custom: 600 of 600 decisions failed") {
		t.Errorf("stderr does not say why the merged run failed:\n%s", report.errOut)
	}
}
