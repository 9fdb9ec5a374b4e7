package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// result is what one limitctl invocation did.
type result struct {
	code        int
	out, errOut string
}

// skipInShortMode skips a slow test under -short (make test-short): a cluster, a failover, a
// killed server, a matrix of every bad input. make test runs every one.
func skipInShortMode(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) skips it")
	}
}

// run executes limitctl in-process with captured streams (none a terminal) and a clean
// environment, as a script in CI would.
func run(t *testing.T, args ...string) result {
	t.Helper()
	return runEnv(t, nil, args...)
}

func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	for _, k := range []string{"REDIS_URL", "REDISCLI_AUTH", "NO_COLOR", "GITHUB_STEP_SUMMARY"} {
		t.Setenv(k, env[k])
	}
	streams, _, out, errOut := TestStreams()
	code := Execute(context.Background(), Build{Version: "test"}, args, streams)
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

// wantExit fails unless the exit code matches; on failure it shows both streams.
func (r result) wantExit(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.out, r.errOut)
	}
	return r
}

// wantOneLineError checks stderr is a single line mentioning each fragment, with no stack trace.
func (r result) wantOneLineError(t *testing.T, fragments ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.errOut, "\n"), "\n")
	if len(lines) != 1 || lines[0] == "" {
		t.Fatalf("stderr is %d lines, want exactly one:\n%s", len(lines), r.errOut)
	}
	if strings.Contains(r.errOut, "goroutine ") || strings.Contains(r.errOut, "panic") {
		t.Fatalf("stderr holds a stack trace:\n%s", r.errOut)
	}
	for _, f := range fragments {
		if !strings.Contains(r.errOut, f) {
			t.Fatalf("stderr %q does not mention %q", r.errOut, f)
		}
	}
}

// waitUntil polls ok until it holds, failing t after limit with what it waited for and what the
// running commands wrote (output): a test acts on the state it needs, never on a duration it
// assumes the machine takes to reach it.
func waitUntil(t *testing.T, limit time.Duration, what string, ok func() bool, output ...fmt.Stringer) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s\n%s", what, limit, output)
		}
	}
}
