package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// The command around internal/keys' reset (tested there on every library layout): flags, the
// confirmation, the three outputs, and Ctrl-C from the built binary.

// seedResetKeys writes a two-string bucket (a pair), a counter, and a hash of no limiter kind.
func seedResetKeys(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().Unix()
	for _, err := range []error{
		rdb.SetEx(ctx, "rl:request_rate_limiter.{u1}.tokens", "3", time.Minute).Err(),
		rdb.SetEx(ctx, "rl:request_rate_limiter.{u1}.timestamp", fmt.Sprint(now), time.Minute).Err(),
		rdb.SetEx(ctx, "rl:hits:u1", "7", time.Minute).Err(),
		rdb.HSet(ctx, "rl:profile:u1", "name", "Ada").Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func keyCount(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	n, err := rdb.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestResetBadUsageTouchesNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedResetKeys(t, rdb)
	for name, args := range map[string][]string{
		"no key":              {"reset"},
		"pattern without yes": {"reset", "rl:*"},
		"mixed without yes":   {"reset", "rl:hits:u1", "rl:h?ts:*"},
		"zero batch":          {"reset", "rl:hits:u1", "--batch", "0"},
		"batch too large":     {"reset", "rl:hits:u1", "--batch", "10001"},
		"zero count":          {"reset", "rl:*", "--yes", "--count", "0"},
		"unknown clock":       {"reset", "rl:hits:u1", "--clock", "sundial"},
		"unknown flag":        {"reset", "rl:hits:u1", "--all"},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, append([]string{"--addr", srv.Addr}, args...)...).wantExit(t, ExitUsage)
			r.wantOneLineError(t, "limitctl:", "reset --help")
			if r.out != "" {
				t.Errorf("stdout %q, want nothing", r.out)
			}
		})
	}
	if n := keyCount(t, rdb); n != 4 {
		t.Fatalf("%d of 4 keys left after refused commands", n)
	}
}

// resetDoc is reset's JSON contract, field for field: nothing missing, nothing more.
type resetDoc struct {
	SchemaVersion int  `json:"schema_version"`
	DryRun        bool `json:"dry_run"`
	Keys          []struct {
		Key     string   `json:"key"`
		Node    string   `json:"node"`
		Kind    string   `json:"kind"`
		Deleted bool     `json:"deleted"`
		With    []string `json:"with"`
		Skipped string   `json:"skipped"`
	} `json:"keys"`
	TotalDeleted int64 `json:"total_deleted"`
}

func parseReset(t *testing.T, out string) resetDoc {
	t.Helper()
	var loose map[string]any
	if err := json.Unmarshal([]byte(out), &loose); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	fields := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if got := fields(loose); !slices.Equal(got, []string{"dry_run", "keys", "schema_version", "total_deleted"}) {
		t.Errorf("top-level fields %v", got)
	}
	for _, k := range loose["keys"].([]any) {
		if got := fields(k.(map[string]any)); !slices.Equal(got, []string{"deleted", "key", "kind", "node", "skipped", "with"}) {
			t.Errorf("key fields %v", got)
		}
	}
	var r resetDoc
	json.Unmarshal([]byte(out), &r)
	return r
}

func TestResetDryRunThenResetAPattern(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedResetKeys(t, rdb)
	dry := run(t, "--addr", srv.Addr, "reset", "rl:*", "--dry-run", "-o", "json").wantExit(t, ExitOK)
	plan := parseReset(t, dry.out)
	if n := keyCount(t, rdb); n != 4 {
		t.Fatalf("the dry run deleted %d keys", 4-n)
	}
	if !plan.DryRun || plan.SchemaVersion != 1 || plan.TotalDeleted != 3 || len(plan.Keys) != 3 {
		t.Fatalf("dry run: %+v, want 3 entries (the pair, the counter, the profile) deleting 3 keys", plan)
	}
	pair, counter, profile := plan.Keys[2], plan.Keys[0], plan.Keys[1]
	if pair.Key != "rl:request_rate_limiter.{u1}.timestamp" || pair.Kind != "bucket" || !pair.Deleted ||
		!slices.Equal(pair.With, []string{"rl:request_rate_limiter.{u1}.tokens"}) || pair.Node != srv.Addr {
		t.Errorf("the pair: %+v", pair)
	}
	if counter.Key != "rl:hits:u1" || counter.Kind != "counter" || !counter.Deleted || len(counter.With) != 0 || counter.With == nil {
		t.Errorf("the counter: %+v (with must be [], not null)", counter)
	}
	if profile.Key != "rl:profile:u1" || profile.Kind != "unknown" || profile.Deleted || profile.Skipped == "" {
		t.Errorf("the profile hash: %+v, want skipped", profile)
	}
	if !strings.Contains(dry.errOut, "note: rl:profile:u1 left alone: kind unknown") ||
		!strings.Contains(dry.errOut, "note: dry run: nothing was deleted; a real run would delete 3 keys") {
		t.Errorf("notes: %s", dry.errOut)
	}

	// tsv when piped: the same rows.
	tsv := run(t, "--addr", srv.Addr, "reset", "rl:*", "--dry-run").wantExit(t, ExitOK)
	if lines := strings.Split(strings.TrimRight(tsv.out, "\n"), "\n"); len(lines) != 4 || lines[0] != "key\tnode\tkind\tdeleted\twith\tskipped" ||
		lines[3] != "rl:request_rate_limiter.{u1}.timestamp\t"+srv.Addr+"\tbucket\ttrue\trl:request_rate_limiter.{u1}.tokens\t" {
		t.Errorf("tsv:\n%s", tsv.out)
	}

	done := parseReset(t, run(t, "--addr", srv.Addr, "reset", "rl:*", "--yes", "-o", "json").wantExit(t, ExitOK).out)
	if done.DryRun || done.TotalDeleted != 3 {
		t.Errorf("reset: %+v", done)
	}
	if left, _ := rdb.Keys(context.Background(), "*").Result(); !slices.Equal(left, []string{"rl:profile:u1"}) {
		t.Errorf("left %v, want only the profile hash", left)
	}
	// Again: nothing matches but the profile, still skipped; a named key gone is no such key.
	again := parseReset(t, run(t, "--addr", srv.Addr, "reset", "rl:hits:u1", "-o", "json").wantExit(t, ExitOK).out)
	if len(again.Keys) != 1 || again.Keys[0].Skipped != "no such key" || again.TotalDeleted != 0 {
		t.Errorf("reset of a gone key: %+v", again)
	}
	forced := parseReset(t, run(t, "--addr", srv.Addr, "reset", "rl:profile:u1", "--force", "-o", "json").wantExit(t, ExitOK).out)
	if forced.TotalDeleted != 1 || keyCount(t, rdb) != 0 {
		t.Errorf("--force: %+v", forced)
	}
	r := run(t, "--addr", srv.Addr, "reset", "none:*", "--yes").wantExit(t, ExitOK)
	r.wantOneLineError(t, "note: no key matches none:*: nothing to reset")
}

func TestResetConfirmsAPatternOnATerminal(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedResetKeys(t, rdb)
	a := []string{"--addr", srv.Addr, "reset", "rl:*", "-o", "json"}
	question := "Reset 2 limiters: delete 3 keys on 1 node? [y/N] "
	// A no is an answer, not a failure, as purge's: exit 0, nothing deleted, under -o json a
	// report of nothing, and on a terminal only the note.
	no := runIn(t, runConfig{tty: true, stdin: "n\n"}, a...).wantExit(t, ExitOK)
	if no.errOut != question+"limitctl: note: reset not confirmed: nothing was deleted\n" ||
		no.out != "{\n  \"schema_version\": 1,\n  \"dry_run\": false,\n  \"keys\": [],\n  \"total_deleted\": 0\n}\n" {
		t.Errorf("declined: stdout %q stderr %q", no.out, no.errOut)
	}
	table := runIn(t, runConfig{tty: true, stdin: ""}, a[:len(a)-2]...).wantExit(t, ExitOK) // end of input is a no
	if table.out != "" || !strings.HasSuffix(table.errOut, "nothing was deleted\n") {
		t.Errorf("declined on a terminal: stdout %q stderr %q", table.out, table.errOut)
	}
	if n := keyCount(t, rdb); n != 4 {
		t.Fatalf("declined, yet %d keys deleted", 4-n)
	}
	yes := runIn(t, runConfig{tty: true, stdin: "yes\n"}, a...).wantExit(t, ExitOK)
	if !strings.HasPrefix(yes.errOut, question) || parseReset(t, yes.out).TotalDeleted != 3 || keyCount(t, rdb) != 1 {
		t.Errorf("confirmed: stdout %s stderr %q", yes.out, yes.errOut)
	}
	// A named key needs no confirmation.
	runIn(t, runConfig{tty: true}, "--addr", srv.Addr, "reset", "rl:profile:u1", "--force").wantExit(t, ExitOK)
}

// Ctrl-C while keys go: the binary stops between batches within a second, exits 130, and the
// report says exactly what was deleted.
func TestResetStopsBetweenBatchesOnSignals(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	const keys = 20000
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			pipe := rdb.Pipeline()
			for i := 0; i < keys; i++ {
				pipe.Set(ctx, fmt.Sprintf("rl:sig:{u%d}:hits", i), 1, 10*time.Minute)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			cmd, out, errOut := startBinary(t, "--addr", srv.Addr, "reset", "rl:sig:*", "--yes", "--batch", "1", "-o", "json")
			deadline := time.Now().Add(30 * time.Second)
			for keyCount(t, rdb) == keys { // until the deleting has begun
				if time.Now().After(deadline) {
					t.Fatalf("nothing deleted after 30s:\n%s", errOut)
				}
				time.Sleep(5 * time.Millisecond)
			}
			interrupt(t, cmd, sig, errOut)
			rep := parseReset(t, out.String())
			left := keyCount(t, rdb)
			if rep.TotalDeleted == 0 || rep.TotalDeleted+left != keys || int64(len(rep.Keys)) != rep.TotalDeleted {
				t.Errorf("report says %d deleted in %d entries; %d of %d keys left", rep.TotalDeleted, len(rep.Keys), left, keys)
			}
			if !strings.Contains(errOut.String(), "limitctl: interrupted: reset stopped between batches after deleting") {
				t.Errorf("stderr: %s", errOut)
			}
			rdb.FlushAll(ctx) // a server this test started
		})
	}
}
