package cmd

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/keys/scores"
)

// parseOnly runs limitctl args on a root whose command at path is the one build returns (given a
// factory, with a runF that records what it was called with), and no server anywhere: flag
// parsing, checks and the hand-over to the command's run are tested without a connection.
func parseOnly(t *testing.T, path string, build func(f *Factory) *cobra.Command, args ...string) int {
	t.Helper()
	code, _ := parseOnlyEnv(t, nil, path, build, args...)
	return code
}

// parseOnlyEnv is parseOnly in the environment env, and returns what the command wrote on stderr.
func parseOnlyEnv(t *testing.T, env map[string]string, path string, build func(f *Factory) *cobra.Command, args ...string) (int, string) {
	t.Helper()
	streams, _, _, errOut := TestStreams()
	f := NewFactory(streams, Build{Version: "test"})
	f.Getenv = func(k string) string { return env[k] }
	root := NewRootCmd(f)
	old, _, err := root.Find(strings.Fields(path))
	if err != nil {
		t.Fatal(err)
	}
	parent := old.Parent()
	parent.RemoveCommand(old)
	parent.AddCommand(build(f))
	usageArgs(root)
	code := runRoot(context.Background(), f, root, append(strings.Fields(path), args...))
	return code, errOut.String()
}

// mustRun stops the test unless the command's run was called.
func mustRun(t *testing.T, code int, called bool) {
	t.Helper()
	if !called {
		t.Fatalf("exit %d without the command's run being called", code)
	}
}

func TestEveryCommandParsesItsFlagsWithoutAServer(t *testing.T) {
	t.Run("inspect", func(t *testing.T) {
		var got *inspectOptions
		build := func(f *Factory) *cobra.Command {
			return newInspectCmd(f, func(_ context.Context, _ *Factory, o *inspectOptions) error { got = o; return nil })
		}
		code := parseOnly(t, "inspect", build, "rl:*", "--stale", "10m", "--limit", "3", "--count", "5", "--max-keys", "7",
			"--type", "zset", "--score-unit", "ms", "--scores", "deadline", "--clock", "local")
		mustRun(t, code, got != nil)
		in := got.inspect
		if code != ExitOK || !reflect.DeepEqual(got.args, []string{"rl:*"}) || in.Stale != 10*time.Minute || in.Limit != 3 || !in.HasLimit ||
			in.Select != (keys.SelectOptions{Count: 5, MaxKeys: 7, Type: "zset"}) || in.Unit != scores.UnitMillis || in.Scores != scores.Deadline ||
			got.keyFlags.clock != keys.ClockLocal {
			t.Errorf("exit %d, options %+v", code, got)
		}
		got = nil
		if code := parseOnly(t, "inspect", build, "--members", "rl:a", "--top", "-1"); code != ExitUsage || got != nil {
			t.Errorf("--top -1: exit %d, run called %v", code, got != nil)
		}
	})
	t.Run("purge", func(t *testing.T) {
		var got *purgeOptions
		build := func(f *Factory) *cobra.Command {
			return newPurgeCmd(f, func(_ context.Context, _ *Factory, o *purgeOptions) error { got = o; return nil })
		}
		code := parseOnly(t, "purge", build, "rl:a", "--older-than", "1m", "--batch", "50", "--dry-run", "--scores", "start")
		mustRun(t, code, got != nil)
		p := got.purge
		if code != ExitOK || p.OlderThan != time.Minute || p.Batch != 50 || !p.DryRun || p.Scores != scores.Start || p.Confirm != nil {
			t.Errorf("exit %d, options %+v", code, p)
		}
		// A pattern without --yes and without a terminal to ask on: refused before anything runs.
		got = nil
		if code := parseOnly(t, "purge", build, "rl:*", "--older-than", "1m"); code != ExitUsage || got != nil {
			t.Errorf("a pattern, piped, without --yes: exit %d, run called %v", code, got != nil)
		}
	})
	t.Run("reset", func(t *testing.T) {
		var got *resetOptions
		build := func(f *Factory) *cobra.Command {
			return newResetCmd(f, func(_ context.Context, _ *Factory, o *resetOptions) error { got = o; return nil })
		}
		code := parseOnly(t, "reset", build, "rl:*", "--yes", "--force", "--batch", "9", "--count", "50", "--clock", "local")
		mustRun(t, code, got != nil)
		if r := got.reset; code != ExitOK || !reflect.DeepEqual(got.args, []string{"rl:*"}) || !r.Force || r.Batch != 9 ||
			r.Count != 50 || r.DryRun || r.Confirm != nil || got.clock.clock != keys.ClockLocal {
			t.Errorf("exit %d, options %+v", code, got)
		}
		got = nil
		code = parseOnly(t, "reset", build, "rl:a", "rl:*", "--dry-run")
		mustRun(t, code, got != nil)
		if r := got.reset; code != ExitOK || !r.DryRun || r.Force || r.Batch != keys.DefaultResetBatch || r.Confirm != nil ||
			got.clock.clock != keys.ClockServer {
			t.Errorf("defaults with --dry-run (no confirmation needed): exit %d, options %+v", code, got)
		}
		// Refused before anything runs: a pattern, piped, without --yes; a bad batch, count or
		// clock; no key at all.
		for _, args := range [][]string{{"rl:*"}, {"rl:a", "--batch", "0"}, {"rl:a", "--count", "0"}, {"rl:a", "--clock", "utc"}, {}} {
			got = nil
			if code := parseOnly(t, "reset", build, args...); code != ExitUsage || got != nil {
				t.Errorf("reset %q: exit %d, run called %v", args, code, got != nil)
			}
		}
	})
	t.Run("lint", func(t *testing.T) {
		var got *lintOptions
		build := func(f *Factory) *cobra.Command {
			return newLintCmd(f, func(_ *Factory, o *lintOptions) error { got = o; return nil })
		}
		code := parseOnly(t, "lint", build, "a.lua", "-", "--strict", "--disable", "missing-expire,reply-key", "--junit", "x.xml")
		mustRun(t, code, got != nil)
		if l := got.lint; code != ExitOK || !reflect.DeepEqual(l.Files, []string{"a.lua", "-"}) || !l.Strict ||
			!reflect.DeepEqual(l.Disable, []string{"missing-expire", "reply-key"}) || got.junit != "x.xml" || l.In == nil {
			t.Errorf("exit %d, options %+v", code, got)
		}
		// Refused before anything runs: a rule that does not exist, a --junit file that cannot be
		// written.
		for _, args := range []string{"--disable no-such-rule", "--enable no-such-rule", "--junit no/such/dir/x.xml"} {
			got = nil
			if code := parseOnly(t, "lint", build, append([]string{"a.lua"}, strings.Fields(args)...)...); code != ExitUsage || got != nil {
				t.Errorf("lint %s: exit %d, run called %v", args, code, got != nil)
			}
		}
	})
	t.Run("scripts", func(t *testing.T) {
		var load *scriptsLoadOptions
		code := parseOnly(t, "scripts load", func(f *Factory) *cobra.Command {
			return newScriptsLoadCmd(f, func(_ context.Context, _ *Factory, o *scriptsLoadOptions) error { load = o; return nil })
		}, "fixed_window", "--file", "ours.lua")
		mustRun(t, code, load != nil)
		if code != ExitOK || !reflect.DeepEqual(load.names, []string{"fixed_window"}) || !reflect.DeepEqual(load.files, []string{"ours.lua"}) {
			t.Errorf("scripts load: exit %d, options %+v", code, load)
		}
		var status *scriptsStatusOptions
		code = parseOnly(t, "scripts status", func(f *Factory) *cobra.Command {
			return newScriptsStatusCmd(f, func(_ context.Context, _ *Factory, o *scriptsStatusOptions) error { status = o; return nil })
		}, "token_bucket")
		mustRun(t, code, status != nil)
		if code != ExitOK || !reflect.DeepEqual(status.names, []string{"token_bucket"}) {
			t.Errorf("scripts status: exit %d, options %+v", code, status)
		}
		var shown string
		code = parseOnly(t, "scripts show", func(f *Factory) *cobra.Command {
			return newScriptsShowCmd(f, func(_ *Factory, name string) error { shown = name; return nil })
		}, "purge_stale")
		if code != ExitOK || shown != "purge_stale" {
			t.Errorf("scripts show: exit %d, name %q", code, shown)
		}
		listed := false
		code = parseOnly(t, "scripts list", func(f *Factory) *cobra.Command {
			return newScriptsListCmd(f, func(*Factory) error { listed = true; return nil })
		})
		if code != ExitOK || !listed {
			t.Errorf("scripts list: exit %d, run called %v", code, listed)
		}
	})
	t.Run("hammer report", func(t *testing.T) {
		var got *hammerReportOptions
		build := func(f *Factory) *cobra.Command {
			return newHammerReportCmd(f, func(_ context.Context, _ *Factory, o *hammerReportOptions) error { got = o; return nil })
		}
		junit := filepath.Join(t.TempDir(), "report.xml")
		code := parseOnly(t, "hammer report", build, "--run-id", "ci-7", "--prefix", "rl", "--assert", "lua.overshoot==0", "--junit", junit)
		mustRun(t, code, got != nil)
		if code != ExitOK || got.runID != "ci-7" || got.prefix != "rl" || !reflect.DeepEqual(got.asserts, []string{"lua.overshoot==0"}) || got.junit != junit {
			t.Errorf("exit %d, options %+v", code, got)
		}
		got = nil
		if code := parseOnly(t, "hammer report", build, "--run-id", "a b"); code != ExitUsage || got != nil {
			t.Errorf("a bad run id: exit %d, run called %v", code, got != nil)
		}
		if code := parseOnly(t, "hammer report", build, "--run-id", "ci-7", "--junit", "/nonexistent/dir/r.xml"); code != ExitUsage || got != nil {
			t.Errorf("--junit in a missing directory: exit %d, run called %v", code, got != nil)
		}
	})
	t.Run("version", func(t *testing.T) {
		called := false
		code := parseOnly(t, "version", func(f *Factory) *cobra.Command {
			return newVersionCmd(f, func(*Factory) error { called = true; return nil })
		})
		if code != ExitOK || !called {
			t.Errorf("exit %d, run called %v", code, called)
		}
	})
}
