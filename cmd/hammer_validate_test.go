package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// Parameters that make a limiter meaningless are refused before anything connects.
func TestHammerRefusesMeaninglessStaleAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"below a millisecond", []string{"--stale-after", "500us"}, "--stale-after must be at least 1ms"},
		{"zero given", []string{"--stale-after", "0"}, "--stale-after must be at least 1ms"},
		{"not longer than the hold", []string{"--stale-after", "2ms", "--hold", "2ms"}, "longer than --hold"},
		// The concurrency limiter holds 2ms unless --hold says otherwise: the check is against that.
		{"not longer than the default hold", []string{"--stale-after", "2ms"}, "--stale-after 2ms must be longer than --hold 2ms"},
		{"rate not a number", []string{"--rate", "NaN"}, "--rate must be 0 (closed loop) up to 10000000, got NaN"},
		{"no-lint without a script", []string{"--no-lint"}, "--no-lint describes a custom script: give --script FILE.lua"},
		{"not whole milliseconds", []string{"--stale-after", "1500us"}, "--stale-after must be a whole number of milliseconds"},
		{"abandon below 0", []string{"--abandon", "-0.1"}, "--abandon must be 0 (none) up to 0.5, got -0.1"},
		{"abandon above half", []string{"--abandon", "0.6"}, "--abandon must be 0 (none) up to 0.5, got 0.6"},
		{"abandon not a number", []string{"--abandon", "NaN"}, "--abandon must be 0 (none) up to 0.5"},
		{"abandon on a window", []string{"--limiter", "fixed-window", "--abandon", "0.1"}, "--abandon applies only to the concurrency limiter"},
		{"abandon 0 on a bucket", []string{"--limiter", "token-bucket", "--abandon", "0"}, "--abandon applies only to the concurrency limiter"},
		// The scripts would use a 1ms window while the evidence judged a 1.5ms one.
		{"window not whole milliseconds", []string{"--limiter", "sliding-window", "--window", "1500us"}, "--window must be a whole number of milliseconds"},
		{"a cap below the duration", []string{"--duration", "5s", "--max-duration", "4s"}, "--max-duration 4s must be at least --duration 5s"},
		{"a time cap on a run of requests", []string{"--requests", "100", "--max-duration", "4s"}, "--max-duration caps a --duration run"},
		{"a cap below the requests", []string{"--requests", "100", "--max-requests", "99"}, "--max-requests 99 must be at least --requests 100"},
		{"a cap of requests on a timed run", []string{"--max-requests", "99"}, "--max-requests caps a --requests run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, append([]string{"--addr", "127.0.0.1:1", "hammer"}, tc.args...)...)
			r.wantExit(t, ExitUsage)
			r.wantOneLineError(t, tc.want)
		})
	}
	// Any other limiter never reclaims, so the hold does not matter there.
	r := run(t, "--addr", "127.0.0.1:1", "hammer", "--limiter", "fixed-window", "--stale-after", "1ms", "--hold", "5ms")
	if r.code == ExitUsage {
		t.Fatalf("fixed-window refused --stale-after 1ms --hold 5ms:\n%s", r.errOut)
	}
}

// A refused or failed run leaves no --report file behind.
func TestHammerReportIsNotCreatedByARefusedRun(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "r.html")
	for _, tc := range []struct {
		name string
		code int
		args []string
	}{
		{"refused flag after --report", ExitUsage, []string{"--script", filepath.Join(dir, "missing.lua")}},
		{"server unreachable", ExitError, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, append([]string{"--addr", "127.0.0.1:1", "--timeout", "200ms", "hammer", "--report", report}, tc.args...)...)
			r.wantExit(t, tc.code)
			if _, err := os.Stat(report); !os.IsNotExist(err) {
				t.Fatalf("the run left %s behind (stat: %v)", report, err)
			}
		})
	}
}
