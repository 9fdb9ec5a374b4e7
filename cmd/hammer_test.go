package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/golden"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/scripts"
)

// hammerUntilNaiveCaught runs the binary up to three times while the only failed assertion is
// naive's overshoot: on a loaded machine naive's racing requests may all land within the limit
// in one short run. Any other outcome (lua blamed, an error) is returned at once.
func hammerUntilNaiveCaught(t *testing.T, args ...string) result {
	t.Helper()
	var r result
	for attempt := 1; attempt <= 3; attempt++ {
		r = execBinary(t, nil, args...)
		lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
		last := lines[len(lines)-1]
		if r.code != ExitCheckFailed || !strings.Contains(last, "naive.overshoot>0") || strings.Contains(last, "lua.") {
			return r
		}
		t.Logf("attempt %d: naive not caught: %s", attempt, last)
	}
	return r
}

func TestHammerJSONShapeAndPassingAsserts(t *testing.T) {
	srv := redistest.Start(t)
	r := hammerUntilNaiveCaught(t, "--addr", srv.Addr, "hammer", "--duration", "1s", "--strategies", "naive,lua",
		"--assert", "lua.overshoot==0", "--assert", "naive.overshoot>0", "-o", "json").wantExit(t, ExitOK)

	var doc map[string]any
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.out)
	}
	wantKeys(t, "summary", doc, "schema_version", "run_id", "target", "limiter", "limit", "workers", "duration_s", "strategies", "assertions", "passed")
	wantKeys(t, "target", doc["target"].(map[string]any), "kind", "addr")
	strategies := doc["strategies"].([]any)
	if len(strategies) != 2 {
		t.Fatalf("%d strategies, want 2", len(strategies))
	}
	for _, s := range strategies {
		st := s.(map[string]any)
		wantKeys(t, "strategy", st, "name", "attempts", "admitted", "rejected", "errors", "retries", "peak", "overshoot",
			"overshoot_events", "throughput_per_s", "latency_ms", "server_usec_per_call", "fail_open_admits", "fail_closed_rejects",
			"release_errors", "abandoned", "contended", "error_samples", "unjudged", "false_rejects", "first_false_reject", "verdict")
		wantKeys(t, "latency_ms", st["latency_ms"].(map[string]any), "p50", "p90", "p99", "p999", "max")
		// Neither strategy refuses with room: naive overshoots, lua holds exactly.
		if st["false_rejects"] != 0.0 || st["first_false_reject"] != nil {
			t.Errorf("%s: false_rejects %v, first_false_reject %v", st["name"], st["false_rejects"], st["first_false_reject"])
		}
		if want := map[string]string{"naive": "OVERSHOOT", "lua": "exact"}[st["name"].(string)]; st["verdict"] != want {
			t.Errorf("%s: verdict %v, want %s", st["name"], st["verdict"], want)
		}
	}
	if doc["schema_version"] != 1.0 || doc["passed"] != true || doc["limiter"] != "concurrency" || doc["limit"] != 20.0 {
		t.Errorf("summary fields: %v", doc)
	}
	if target := doc["target"].(map[string]any); target["kind"] != "redis" || target["addr"] != srv.Addr {
		t.Errorf("target %v, want redis %s", target, srv.Addr)
	}
	// The run's keys are gone afterwards.
	if keys, _ := srv.Client(t).Keys(context.Background(), "limitctl:*").Result(); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

// wantKeys checks a JSON object carries at least the contract's field names.
func wantKeys(t *testing.T, what string, obj map[string]any, keys ...string) {
	t.Helper()
	var missing []string
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		have := make([]string, 0, len(obj))
		for k := range obj {
			have = append(have, k)
		}
		sort.Strings(have)
		t.Errorf("%s JSON lacks %v (has %v)", what, missing, have)
	}
}

func TestHammerFailedAssertExits3AfterTheSummary(t *testing.T) {
	srv := redistest.Start(t)
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--duration", "1s", "--assert", "naive.overshoot==0").wantExit(t, ExitCheckFailed)
	if !strings.HasPrefix(r.out, "strategy\tattempts\t") {
		t.Errorf("no summary on stdout before the failure:\n%s", r.out)
	}
	if !strings.Contains(r.errOut, "FAIL  naive.overshoot==0") || !strings.Contains(r.errOut, "assertion failed: naive.overshoot==0 (actual ") {
		t.Errorf("stderr does not name the failed assertion:\n%s", r.errOut)
	}
}

func TestHammerBadInputExits2BeforeAnyLoad(t *testing.T) {
	// The target does not exist: exit 2 proves the flags were refused before connecting.
	closed := "127.0.0.1:" + itoa(redistest.FreePort(t))
	cases := map[string][]string{
		"bad assert":             {"--assert", "lua.overshot==0"},
		"assert unknown strat":   {"--assert", "eval.overshoot==0"},
		"unknown strategy":       {"--strategies", "naive,optimistic"},
		"unknown limiter":        {"--limiter", "leaky-bucket"},
		"ts member on a counter": {"--limiter", "fixed-window", "--strategies", "lua-ts-member"},
		"zero workers":           {"--workers", "0"},
		"negative limit":         {"--limit", "-1"},
		"duration and requests":  {"--duration", "1s", "--requests", "10"},
		"bad duration":           {"--duration", "ten"},
		"custom without script":  {"--strategies", "custom"},
		"missing script":         {"--script", "/nonexistent.lua"},
		"tui on without a tty":   {"--tui", "on"},
		"bad on-error":           {"--on-error", "maybe"},
		"bad inject":             {"--inject", "explode@1s"},
		"kill on a real server":  {"--inject", "kill@1s"},
		"embedded with addr":     {"--embedded", "memory"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			r := execBinary(t, nil, append([]string{"--addr", closed, "hammer"}, args...)...).wantExit(t, ExitUsage)
			r.wantOneLineError(t, "limitctl:")
		})
	}
}

func TestHammerCustomScriptCorrectPassesOffByOneFails(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	correct := filepath.Join(dir, "ours.lua")
	os.WriteFile(correct, []byte(scripts.ConcurrencyAcquire), 0o644)
	execBinary(t, nil, "--addr", srv.Addr, "hammer", "--script", correct, "--duration", "1s",
		"--assert", "custom.overshoot==0", "--assert", "custom.admitted>0").wantExit(t, ExitOK)

	// The classic off-by-one: admitting while in_flight <= limit lets one request too many in.
	offByOne := filepath.Join(dir, "off_by_one.lua")
	os.WriteFile(offByOne, []byte(strings.Replace(scripts.ConcurrencyAcquire, "if in_flight >= limit then", "if in_flight > limit then", 1)), 0o644)
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--script", offByOne, "--duration", "1s",
		"--assert", "custom.overshoot==0", "-o", "json").wantExit(t, ExitCheckFailed)
	if !strings.Contains(r.out, `"overshoot": 1,`) {
		t.Errorf("off-by-one script: want overshoot exactly 1 in the JSON:\n%s", r.out)
	}
}

func TestHammerLintsTheCustomScriptFirst(t *testing.T) {
	srv := redistest.Start(t)
	bad := filepath.Join(t.TempDir(), "global.lua")
	os.WriteFile(bad, []byte("count = redis.call('ZCARD', KEYS[1])\nreturn {1, count}\n"), 0o644)
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--script", bad, "--duration", "1s").wantExit(t, ExitLintRefused)
	if !strings.Contains(r.errOut, "global-write") || !strings.Contains(r.errOut, "--no-lint") {
		t.Errorf("lint errors not shown before refusing:\n%s", r.errOut)
	}
}

func TestHammerInterruptedPrintsPartialSummaryAndCleansUp(t *testing.T) {
	srv := redistest.Start(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, out, errOut := startBinary(t, "--addr", srv.Addr, "hammer", "--duration", "30s", "-o", "json")
			waitUntil(t, 20*time.Second, "a second of load", func() bool { return strings.Contains(errOut.String(), "[1s/") }, errOut)
			interrupt(t, cmd, sig, errOut)
			var sum struct {
				Interrupted bool `json:"interrupted"`
				Strategies  []struct{ Attempts int64 }
			}
			if err := json.Unmarshal(out.Bytes(), &sum); err != nil || !sum.Interrupted || sum.Strategies[0].Attempts == 0 {
				t.Fatalf("partial summary: %v %+v\n%s", err, sum, out)
			}
			if keys, _ := srv.Client(t).Keys(context.Background(), "limitctl:*").Result(); len(keys) != 0 {
				t.Errorf("keys left after %s: %v", sig, keys)
			}
		})
	}
}

func TestHammerEmbeddedDefaultSaysWhichServer(t *testing.T) {
	r := hammerUntilNaiveCaught(t, "hammer", "--duration", "1s", "--assert", "naive.overshoot>0", "--assert", "lua.overshoot==0").wantExit(t, ExitOK)
	if first := strings.SplitN(r.errOut, "\n", 2)[0]; !strings.HasPrefix(first, "target: throw-away redis-server 7.") {
		t.Errorf("first line %q, want it to name the spawned redis-server", first)
	}
	// The in-process server serialises every command behind one lock: naive's four round trips
	// are so slow there that, holding 2ms, about three requests are in flight on average and the
	// limit of 20 is seldom reached (one run in eight peaked at 18). Holding 20ms contends it.
	m := hammerUntilNaiveCaught(t, "hammer", "--embedded", "memory", "--duration", "1s", "--hold", "20ms",
		"--assert", "naive.overshoot>0", "--assert", "lua.overshoot==0").wantExit(t, ExitOK)
	if first := strings.SplitN(m.errOut, "\n", 2)[0]; !strings.Contains(first, "in-process server") || !strings.Contains(first, "not representative") {
		t.Errorf("first line %q, want it to say in-process and not representative", first)
	}
}

func TestHammerProgressLinesWithoutATerminalHaveNoEscapes(t *testing.T) {
	srv := redistest.Start(t)
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--duration", "2500ms").wantExit(t, ExitOK)
	lines := 0
	for _, l := range strings.Split(r.errOut, "\n") {
		if strings.HasPrefix(l, "[") {
			lines++
		}
	}
	if lines < 1 || lines > 3 {
		t.Errorf("%d progress lines in 2.5s, want about one a second:\n%s", lines, r.errOut)
	}
	if strings.Contains(r.errOut+r.out, "\x1b") {
		t.Errorf("ANSI escape in piped output")
	}
}

func TestTwoHammersShareARedisWitness(t *testing.T) {
	srv := redistest.Start(t)
	// Two processes, 16 workers each, on one limiter: only the shared witness in Redis sees
	// requests of both. lua must hold the limit across them; naive must be caught.
	args := []string{"--addr", srv.Addr, "hammer", "--run-id", "shared", "--witness", "redis", "--workers", "16",
		"--limit", "8", "--strategies", "naive,lua", "--duration", "2s", "--keep-keys", "-o", "json"}
	first, out1, err1 := startBinary(t, args...)
	second, out2, err2 := startBinary(t, args...)
	// Both processes hold requests in the same witness: its members carry each process's prefix.
	rdb, processes := srv.Client(t), map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); len(processes) < 2 && time.Now().Before(deadline); {
		for _, m := range rdb.ZRange(context.Background(), "limitctl:{shared}:lua:witness", 0, -1).Val() {
			processes[strings.SplitN(m, ":", 2)[0]] = true
		}
	}
	if len(processes) < 2 {
		t.Errorf("the witness limitctl:{shared}:lua:witness never held requests of both processes (saw %d)", len(processes))
	}
	if code := waitExit(t, first, 20*time.Second); code != ExitOK {
		t.Fatalf("first: exit %d\n%s", code, err1)
	}
	if code := waitExit(t, second, 20*time.Second); code != ExitOK {
		t.Fatalf("second: exit %d\n%s", code, err2)
	}
	for _, out := range []string{out1.String(), out2.String()} {
		h := parseHammer(t, result{out: out})
		for _, s := range h.Strategies {
			if s.Name == "lua" && s.Overshoot != 0 {
				t.Errorf("lua overshoot %d across two processes", s.Overshoot)
			}
			if s.Name == "naive" && s.Overshoot == 0 {
				t.Errorf("naive showed no overshoot across two processes")
			}
		}
	}
}

// shapeOf replaces every value of a decoded JSON document by its type, keeping the structure:
// the golden file pins the field names and types the contract promises, not run-dependent numbers.
func shapeOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = shapeOf(e)
		}
		return out
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		return []any{shapeOf(x[0])}
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "?"
}

func TestHammerJSONMatchesTheGoldenShape(t *testing.T) {
	srv := redistest.Start(t)
	// lua's server time is attributable (EVALSHA is its alone), so its server_usec_per_call is a number.
	// --max-requests equal to --requests never loads on, so "extended" is null here; loaded on, it
	// is the object docs/contract.md shows.
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--requests", "300", "--max-requests", "300", "--strategies", "lua,naive",
		"--assert", "lua.overshoot==0", "-o", "json").wantExit(t, ExitOK)
	var doc any
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatal(err)
	}
	strategies := doc.(map[string]any)["strategies"].([]any)
	for _, s := range strategies {
		delete(s.(map[string]any), "errors_by_kind") // a map keyed by what went wrong: no fixed shape
	}
	doc.(map[string]any)["strategies"] = strategies[:1]
	got, _ := json.MarshalIndent(shapeOf(doc), "", "  ")
	golden.Check(t, filepath.Join("..", "testdata", "hammer", "summary.shape.json"), string(got)+"\n")
}
