package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
)

func TestExitCodeComesFromTheError(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		code int
	}{
		"usage":            {usagef("bad"), ExitUsage},
		"wrapped usage":    {fmt.Errorf("ctx: %w", usagef("bad")), ExitUsage},
		"check failed":     {exitcode.CheckFailedf("assertion failed"), ExitCheckFailed},
		"lint refused":     {fmt.Errorf("x: %w", &exitcode.LintRefusedError{Msg: "lint refused"}), ExitLintRefused},
		"interrupted":      {interruptedError("stopped"), ExitInterrupted},
		"context canceled": {fmt.Errorf("x: %w", context.Canceled), ExitInterrupted},
		// A message that starts like one of cobra's says nothing about its code.
		"runtime that reads like cobra": {errors.New("unknown command from Redis"), ExitError},
	} {
		var errOut strings.Builder
		if got := exitCode(tc.err, &errOut, 0, nil); got != tc.code {
			t.Errorf("%s: exit %d, want %d (%s)", name, got, tc.code, errOut.String())
		}
	}
}

// The failure's line wraps on a terminal under its message, every word kept; a log keeps it
// one line.
func TestFailureLineWrapsOnATerminal(t *testing.T) {
	err := exitcode.CheckFailedf("custom not judged: the allowances (skew 200ms, lateness, the server's clock) left 12 of its admits judged, no more than its limit of 20")
	var whole, wrapped strings.Builder
	exitCode(err, &whole, 0, nil)
	if got := strings.Count(whole.String(), "\n"); got != 1 {
		t.Errorf("piped: %d lines, want one:\n%s", got, whole.String())
	}
	if code := exitCode(err, &wrapped, 60, nil); code != ExitCheckFailed {
		t.Errorf("exit %d, want %d", code, ExitCheckFailed)
	}
	lines := strings.Split(strings.TrimSuffix(wrapped.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Errorf("at 60 columns %d lines:\n%s", len(lines), wrapped.String())
	}
	for i, l := range lines {
		if len(l) > 60 || i > 0 && (!strings.HasPrefix(l, strings.Repeat(" ", len("limitctl: "))) || l[len("limitctl: ")] == ' ') {
			t.Errorf("line %d of %d columns or not under the message: %q", i, len(l), l)
		}
	}
	if got, want := strings.Fields(wrapped.String()), strings.Fields(whole.String()); !slices.Equal(got, want) {
		t.Errorf("the words changed:\n%q\nwant\n%q", got, want)
	}
}

func TestJSONFailureIsAJSONObjectOnStdout(t *testing.T) {
	// A usage error before any output: the error object, and stderr keeps its one line.
	r := run(t, "hammer", "--workers", "0", "-o", "json").wantExit(t, ExitUsage)
	r.wantOneLineError(t, "--workers must be 1-10000")
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Error         struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.out)
	}
	if doc.SchemaVersion != 1 || doc.Error.ExitCode != ExitUsage || !strings.Contains(doc.Error.Message, "--workers must be 1-10000") {
		t.Errorf("error object %+v", doc)
	}
	// cobra's own flag errors take the same way (once -o json has been read).
	r = run(t, "-o", "json", "scripts", "list", "--bogus").wantExit(t, ExitUsage)
	if !strings.Contains(r.out, `"exit_code": 2`) || !strings.Contains(r.out, "unknown flag") {
		t.Errorf("unknown flag under -o json: stdout %q", r.out)
	}
	// A runtime error (nothing listens) is exit 1, as JSON too.
	r = run(t, "--addr", "127.0.0.1:1", "--timeout", "300ms", "scripts", "status", "-o", "json").wantExit(t, ExitError)
	if !strings.Contains(r.out, `"exit_code": 1`) {
		t.Errorf("connection failure under -o json: stdout %q", r.out)
	}
	// Without -o json stdout stays empty.
	if r := run(t, "hammer", "--workers", "0", "-o", "tsv").wantExit(t, ExitUsage); r.out != "" {
		t.Errorf("tsv failure wrote stdout %q", r.out)
	}
}

// The runF seam: flags become the session's options without a server.
func TestHammerFlagsBecomeOptions(t *testing.T) {
	streams, _, _, errOut := TestStreams()
	f := NewFactory(streams, Build{Version: "test"})
	f.Getenv = func(string) string { return "" }
	var got *hammerOptions
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "hammer" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newHammerCmd(f, func(_ context.Context, _ *Factory, o *hammerOptions) error { got = o; return nil }))
	code := runRoot(context.Background(), f, root, []string{"hammer", "--limiter", "sliding-window", "--strategies", "watch, lua",
		"--requests", "500", "--hold", "200ms", "--witness", "redis", "--on-error", "open", "--prefix", "rl", "--run-id", "ci-7",
		"--assert", "lua.overshoot==0", "--inject", "flush-scripts@2s,pause@1s:100ms"})
	if code != ExitOK || got == nil {
		t.Fatalf("exit %d, runF called: %v; stderr %s", code, got != nil, errOut)
	}
	o := got.run
	if o.Limiter != limiter.SlidingWindow || len(o.Strategies) != 2 || o.Strategies[0] != limiter.Watch || o.Strategies[1] != limiter.Lua {
		t.Errorf("limiter %s strategies %v", o.Limiter, o.Strategies)
	}
	if o.Duration != 0 || o.Requests != 500 {
		t.Errorf("--requests: duration %s requests %d, want 0 and 500", o.Duration, o.Requests)
	}
	if o.StaleAfter != 20*time.Second {
		t.Errorf("stale-after %s, want 100 x hold = 20s", o.StaleAfter)
	}
	if !o.RedisWitness || !o.FailOpen || o.Prefix != "rl" || o.RunID != "ci-7" || len(o.Assertions) != 1 {
		t.Errorf("options %+v", o)
	}
	if len(o.Injects) != 2 || o.Injects[0].Kind != "pause" || o.Injects[0].For != 100*time.Millisecond || o.Injects[1].Kind != "flush-scripts" {
		t.Errorf("injects %+v, want pause then flush-scripts", o.Injects)
	}
	if got.flags.HasTarget {
		t.Errorf("no --url/--addr/REDIS_URL, yet a target")
	}

	// A bad value never reaches runF.
	got = nil
	if code := runRoot(context.Background(), f, root, []string{"hammer", "--keys", "0"}); code != ExitUsage || got != nil {
		t.Errorf("--keys 0: exit %d, runF called %v", code, got != nil)
	}
}
