package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// leakCase is a limiter script that holds its limit but leaves something behind, hammered under
// its own calling contract (the flags its header gives).
type leakCase struct {
	file  string
	kind  string
	flags []string
}

// leakyScripts are one per leak class on every kind, the shipped scripts with one line changed
// and other libraries' scripts likewise (testdata/limiters/leaks): no TTL, a TTL of years, EXPIRE
// only on a later hit, a key written only on refusals with none. The concurrency set without a
// TTL leaks through the requests a crashed client abandons.
var leakyScripts = []leakCase{
	{"concurrency_no_ttl.lua", "concurrency", nil},
	{"fixed_window_no_ttl.lua", "fixed-window", nil},
	{"fixed_window_ttl_years.lua", "fixed-window", []string{"--script-keys", "{key}:{window_index}", "--script-args", "{limit} {window_ms} {window_start_ms}"}},
	{"fixed_window_expire_on_second_hit.lua", "fixed-window", nil},
	{"sliding_window_no_ttl.lua", "sliding-window", nil},
	{"token_bucket_no_ttl.lua", "token-bucket", nil},
	{"token_bucket_ttl_years.lua", "token-bucket", nil},
	{"gcra_no_ttl.lua", "token-bucket", []string{"--script-args", "{burst} {limit} {window_s} {cost}", "--script-allowed", "reply[1] > 0"}},
	{"moving_window_list_no_expire.lua", "sliding-window", []string{"--script-args", "{now_s} {limit} {window_s} {cost}", "--script-allowed", "reply ~= false"}},
	{"concurrency_deadlines_backlog_no_ttl.lua", "concurrency", []string{"--script-keys", "{key}:in_progress {key}:backlog",
		"--script-args", "{member} {limit} {stale_after_s} {now_s}", "--script-allowed", "reply == 0", "--script-release", "ZREM {key}:in_progress {member}"}},
}

// leakDoc is what the leak tests read of hammer -o json.
type leakDoc struct {
	Strategies []struct {
		Name    string `json:"name"`
		Verdict string `json:"verdict"`
		Leaks   *struct {
			KeysWithoutTTL int64 `json:"keys_without_ttl"`
			KeysTTLTooLong int64 `json:"keys_ttl_too_long"`
			Samples        []struct {
				Key   string `json:"key"`
				Type  string `json:"type"`
				Size  int64  `json:"size"`
				TTLMs int64  `json:"ttl_ms"`
			} `json:"samples"`
		} `json:"leaks"`
		LargestKey *struct {
			Key  string `json:"key"`
			Type string `json:"type"`
			Size int64  `json:"size"`
		} `json:"largest_key"`
	} `json:"strategies"`
	Assertions []struct {
		Expr    string `json:"expr"`
		Passed  bool   `json:"passed"`
		Implied bool   `json:"implied"`
	} `json:"assertions"`
}

func parseLeakDoc(t *testing.T, out string) leakDoc {
	t.Helper()
	var doc leakDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return doc
}

// hammerLeak runs one leaky script for d and returns its exit code and summary.
func hammerLeak(t *testing.T, srv *redistest.Server, c leakCase, d time.Duration, extra ...string) (result, leakDoc) {
	t.Helper()
	return hammerLeakOn(t, []string{"--addr", srv.Addr}, c, d, extra...)
}

// hammerLeakOn is hammerLeak on the target that flags name.
func hammerLeakOn(t *testing.T, target []string, c leakCase, d time.Duration, extra ...string) (result, leakDoc) {
	t.Helper()
	args := append(append([]string{}, target...), "hammer", "--limiter", c.kind, "--script", filepath.Join("..", "testdata", "limiters", "leaks", c.file),
		"--duration", d.String(), "-o", "json")
	args = append(args, c.flags...)
	r := run(t, append(args, extra...)...)
	return r, parseLeakDoc(t, r.out)
}

// A script that holds its limit but leaves keys that never expire, or expire only after years,
// fails a --script run on its own (the implied custom.leaks==0, exit 3): the verdict says LEAKS
// beside exact, with the key, its type, size and TTL as evidence.
func TestHammerLeakingScriptsFailWithTheirKeys(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	for _, c := range leakyScripts {
		t.Run(c.file, func(t *testing.T) {
			r, doc := hammerLeak(t, srv, c, 1500*time.Millisecond)
			if r.code != ExitCheckFailed {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, ExitCheckFailed, r.out, r.errOut)
			}
			st := doc.Strategies[0]
			if !strings.Contains(st.Verdict, "LEAKS") || st.Leaks == nil || st.Leaks.KeysWithoutTTL+st.Leaks.KeysTTLTooLong == 0 || len(st.Leaks.Samples) == 0 {
				t.Fatalf("verdict %q, leaks %+v", st.Verdict, st.Leaks)
			}
			sample := st.Leaks.Samples[0]
			if !strings.Contains(sample.Key, ":custom") || sample.Type == "" || (sample.TTLMs != -1 && sample.TTLMs < int64(time.Hour/time.Millisecond)) {
				t.Errorf("sample %+v", sample)
			}
			for _, want := range []string{"custom  exact, LEAKS  left ", "assertion failed: custom.leaks==0 (actual "} {
				if !strings.Contains(r.errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
				}
			}
		})
	}
	t.Run("an assert on leaks replaces the implied check", func(t *testing.T) {
		r, doc := hammerLeak(t, srv, leakyScripts[1], time.Second, "--assert", "custom.leaks>=0")
		if r.code != ExitOK {
			t.Fatalf("exit %d\n%s", r.code, r.errOut)
		}
		for _, a := range doc.Assertions {
			if a.Expr == "custom.leaks==0" {
				t.Errorf("the implied check stayed: %+v", doc.Assertions)
			}
		}
	})
}

// The shipped scripts and every client-side strategy leave nothing behind on any kind: each key
// they write carries a TTL of a few windows or stale-afters. A log that grows with traffic is a
// note (largest_key), not a failure.
func TestHammerShippedStrategiesLeaveNoLeaks(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	for _, kind := range []string{"concurrency", "fixed-window", "sliding-window", "token-bucket"} {
		t.Run(kind, func(t *testing.T) {
			r := run(t, "--addr", srv.Addr, "hammer", "--limiter", kind, "--strategies", "naive,multi,watch,lua,eval,function",
				"--workers", "16", "--duration", "1s", "-o", "json")
			doc := parseLeakDoc(t, r.out)
			for _, st := range doc.Strategies {
				if st.Leaks == nil || st.Leaks.KeysWithoutTTL+st.Leaks.KeysTTLTooLong != 0 || strings.Contains(st.Verdict, "LEAKS") {
					t.Errorf("%s: verdict %q, leaks %+v", st.Name, st.Verdict, st.Leaks)
				}
			}
		})
	}
	t.Run("a log that grows with traffic is a note", func(t *testing.T) {
		script := filepath.Join("..", "testdata", "limiters", "leaks", "moving_window_list_no_trim.lua")
		// A limit of 5 per 100 ms: the list passes 10x the limit (50) after a few windows even on a
		// busy machine that admits far fewer than the limit allows.
		r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "sliding-window", "--script", script, "--window", "100ms", "--limit", "5",
			"--script-args", "{now_s} {limit} {window_s} {cost}", "--script-allowed", "reply ~= false", "--duration", "3s", "-o", "json").wantExit(t, ExitOK)
		st := parseLeakDoc(t, r.out).Strategies[0]
		if st.LargestKey == nil || st.LargestKey.Type != "list" || st.LargestKey.Size <= 50 || strings.Contains(st.Verdict, "LEAKS") {
			t.Fatalf("verdict %q, largest %+v", st.Verdict, st.LargestKey)
		}
		if !strings.Contains(r.errOut, "custom: note: "+st.LargestKey.Key+" (list) ended with ") || !strings.Contains(r.errOut, "a log that grows with traffic") {
			t.Errorf("no note of the growing log:\n%s", r.errOut)
		}
	})
}

// The power of the leak evidence (make verify-power): every leaky script caught within a
// default 5s run in at least 19 of 20 runs.
func TestPowerCatchesEveryLeak(t *testing.T) {
	if os.Getenv("LIMITCTL_POWER") == "" {
		t.Skip("statistical power runs take minutes: make verify-power")
	}
	runs := 20
	if v, err := strconv.Atoi(os.Getenv("LIMITCTL_POWER_RUNS")); err == nil && v > 0 {
		runs = v
	}
	// A single node, or with LIMITCTL_POWER_CLUSTER a 3-master cluster (make verify-power-cluster).
	target := []string{"--cluster"}
	if os.Getenv("LIMITCTL_POWER_CLUSTER") == "" {
		target = []string{"--addr", redistest.Start(t).Addr}
	} else {
		for _, addr := range redistest.StartCluster(t, 3, 0).Addrs() {
			target = append(target, "--addr", addr)
		}
	}
	for _, c := range leakyScripts {
		t.Run(c.file, func(t *testing.T) {
			caught := 0
			for i := 0; i < runs; i++ {
				_, doc := hammerLeakOn(t, target, c, 5*time.Second)
				st := doc.Strategies[0]
				if strings.Contains(st.Verdict, "LEAKS") {
					caught++
				} else {
					t.Logf("run %d: verdict %q, leaks %+v", i+1, st.Verdict, st.Leaks)
				}
			}
			t.Logf("%s: caught in %d of %d runs", c.file, caught, runs)
			if caught*20 < runs*19 {
				t.Errorf("caught in only %d of %d runs (want 19 in 20)", caught, runs)
			}
		})
	}
}

// A window of unknown alignment under a skew as wide as the window leaves the evidence nothing
// to see: a first-hit window that admits twice its limit is `not judged`, never `exact`, and the
// run fails (exit 3) saying why, rather than pass on evidence it never had.
func TestHammerNoVerdictBeyondTheEvidence(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	twice := filepath.Join("..", "testdata", "limiters", "buggy", "fixed_window_first_hit_ns_twice.lua")
	for _, skew := range []string{"500ms", "1500ms"} {
		t.Run(skew, func(t *testing.T) {
			r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--script", twice, "--script-keys", "{key}",
				"--script-args", "{now_ns} {limit} {window_ns}", "--script-allowed", "reply[4] == 1", "--skew", skew, "--duration", "2s", "-o", "json").
				wantExit(t, ExitCheckFailed)
			doc := parseLeakDoc(t, r.out)
			if st := doc.Strategies[0]; st.Verdict != "not judged" {
				t.Fatalf("verdict %q\n%s", st.Verdict, r.errOut)
			}
			for _, want := range []string{"custom  not judged  peak ", "skew ±" + strings.Replace(skew, "1500ms", "1.50s", 1),
				"assertion failed: custom.overshoot==0 (actual 0; not judged: "} {
				if !strings.Contains(r.errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
				}
			}
		})
	}
}
