package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The clean-up deletes exactly the run's keys: look-alikes of another run id (a longer one,
// one with a dash, a user's key under the same prefix) and keys in the run's own namespace that
// the run did not write all survive, whatever the limiter, the witness or the key count.
func TestHammerCleanupDeletesOnlyItsOwnKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	lookalikes := []string{
		"limitctl:{shared2}:x", "limitctl:{shared-0}:x", "limitctl:{shared-0}:lua", "limitctl:{shared2}:lua",
		"limitctl:{shared}:x", "limitctl:{shared}:lua:mine", "limitctl:{shared.9}:lua", "limitctl:{shared.}:lua",
		"limitctl:{shared.01}:lua", "rl:{user42}:x", "rl:{user42}:lua", "rl:{user-1}:lua", "rl:{user}:notes",
		"rl:{userx}:lua:witness", `limitctl:{shared\}:lua`, "limitctl:{shared}", "limitctl:{shared}:",
	}
	seed := func() {
		t.Helper()
		for _, k := range lookalikes {
			if err := rdb.Set(ctx, k, "keep", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	seed()
	for _, tc := range []struct {
		args []string
		// writes says the run leaves keys behind with --keep-keys (a concurrency set empties
		// itself as requests are released), so the clean-up has something to delete.
		writes bool
	}{
		{[]string{"--run-id", "shared", "--strategies", "naive,lua"}, false},
		{[]string{"--run-id", "shared", "--strategies", "lua", "--keys", "3"}, false},
		{[]string{"--run-id", "shared", "--strategies", "naive,lua", "--limiter", "fixed-window", "--window", "10s", "--keys", "2"}, true},
		{[]string{"--run-id", "shared", "--strategies", "lua", "--witness", "redis"}, true},
		{[]string{"--prefix", "rl", "--run-id", "user", "--strategies", "naive,lua,function"}, false},
		{[]string{"--prefix", "rl", "--run-id", "user", "--limiter", "sliding-window", "--strategies", "lua,lua-ts-member", "--keys", "2"}, true},
	} {
		args := tc.args
		a := append([]string{"--addr", srv.Addr, "hammer", "--requests", "200", "--workers", "8", "--limit", "4", "-o", "json"}, args...)
		if tc.writes {
			run(t, append(a, "--keep-keys")...).wantExit(t, ExitOK)
			if n, _ := rdb.DBSize(ctx).Result(); n <= int64(len(lookalikes)) {
				t.Fatalf("hammer %v --keep-keys left no key of its own (%d keys)", args, n)
			}
		}
		run(t, a...).wantExit(t, ExitOK)
		keys, err := rdb.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		// A --witness redis run leaves its summary and its calls for `hammer report` (24h TTL), on purpose.
		keys = slices.DeleteFunc(keys, func(k string) bool {
			return strings.HasPrefix(k, "limitctl:report:{shared}:") || strings.HasPrefix(k, "limitctl:calls:{shared}:")
		})
		sort.Strings(keys)
		want := append([]string(nil), lookalikes...)
		sort.Strings(want)
		if len(keys) != len(want) {
			t.Fatalf("after hammer %v the server holds\n%q\nwant only the look-alikes\n%q", args, keys, want)
		}
		for i := range keys {
			if keys[i] != want[i] {
				t.Fatalf("after hammer %v the server holds\n%q\nwant only the look-alikes\n%q", args, keys, want)
			}
		}
	}
}

// Every key a run writes is deleted at its end, whatever the limiter, the witness and the key
// count: the limiter keys and their windows, the shared witness, the shared admits of the
// windows and the bucket, the participants. What stays is what the commands say stays: with
// --keep-keys, keys under the run's own names (as the notice says), and with --witness redis
// what each process leaves for `hammer report` (24h): its summary under <prefix>:report:{ID}:
// and its calls under <prefix>:calls:{ID}:.
func TestHammerLeavesNothingOfItsRunBehind(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, kind := range limiter.Kinds() {
		for _, witness := range []string{"local", "redis"} {
			for _, keys := range []string{"1", "3"} {
				id := fmt.Sprintf("%s-%s-%s", kind, witness, keys)
				t.Run(id, func(t *testing.T) {
					args := []string{"--addr", srv.Addr, "hammer", "--limiter", string(kind), "--strategies", "naive,lua",
						"--witness", witness, "--keys", keys, "--run-id", id, "--requests", "300", "--workers", "8",
						"--limit", "4", "--window", "10s", "-o", "json"}
					scheme := runkeys.Scheme{Prefix: "limitctl", RunID: id, Limiter: kind, Keys: 3, Strategies: []string{"naive", "lua"}}
					if keys == "1" {
						scheme.Keys = 1
					}
					report, calls := "limitctl:report:{"+id+"}:", "limitctl:calls:{"+id+"}:"
					r := run(t, append(args, "--keep-keys")...).wantExit(t, ExitOK)
					kept := 0
					for _, k := range keysOf(t, rdb, "*"+id+"*") {
						switch {
						case strings.HasPrefix(k, report), witness == "redis" && strings.HasPrefix(k, calls):
						case !scheme.Owns(k):
							t.Errorf("--keep-keys left %s, which the run's key scheme does not own", k)
						default:
							kept++
						}
					}
					if kept == 0 && kind != limiter.Concurrency {
						t.Errorf("--keep-keys kept no key of the run (stderr %q)", r.errOut)
					}
					run(t, args...).wantExit(t, ExitOK)
					for _, k := range keysOf(t, rdb, "*"+id+"*") {
						if witness == "redis" && (strings.HasPrefix(k, report) || strings.HasPrefix(k, calls)) {
							continue // documented: hammer report reads it
						}
						t.Errorf("after the run the server still holds %s", k)
					}
				})
			}
		}
	}
}

// The keys of the clock's custom runs go too: a script that reads TIME on the virtual clock
// (redis_rate's style: the bucket under {key}), and a lock of one key per slot released by a
// script of its own (Laravel's style: {key}<slot>), with either witness and any key count. (A
// --script run fails uncontended: 8 workers per key against a limit of 2, each holding its slot
// 2ms, reach it.)
func TestHammerLeavesNothingOfItsCustomRunsBehind(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	limiters := filepath.Join("..", "testdata", "limiters")
	for name, custom := range map[string][]string{
		"virtual-clock": {"--limiter", "token-bucket", "--script", filepath.Join(limiters, "gcra_server_time.lua"),
			"--script-args", "{burst} {limit} {window_s} {cost}", "--script-allowed", "reply[1] > 0"},
		"release-script": {"--limiter", "concurrency", "--script", filepath.Join(limiters, "concurrency_slots.lua"),
			"--script-keys", "{key}{slot}", "--script-args", "{key} {stale_after_s} {member}", "--script-allowed", "reply ~= false",
			"--script-release-file", filepath.Join(limiters, "concurrency_slot_release.lua"),
			"--script-release-keys", "{reply}", "--script-release-args", "{member}"},
	} {
		for _, witness := range []string{"local", "redis"} {
			for _, keys := range []string{"1", "3"} {
				id := fmt.Sprintf("%s-%s-%s", name, witness, keys)
				t.Run(id, func(t *testing.T) {
					args := append([]string{"--addr", srv.Addr, "hammer", "--strategies", "lua,custom", "--witness", witness,
						"--keys", keys, "--run-id", id, "--requests", "300", "--workers", "24", "--limit", "2", "--window", "10s",
						"-o", "json"}, custom...)
					scheme := runkeys.Scheme{Prefix: "limitctl", RunID: id, Limiter: limiter.Kind(custom[1]), Keys: 1,
						Strategies: []string{"lua", "custom"}}
					if keys == "3" {
						scheme.Keys = 3
					}
					report, calls := "limitctl:report:{"+id+"}:", "limitctl:calls:{"+id+"}:"
					run(t, append(args, "--keep-keys")...).wantExit(t, ExitOK)
					kept := 0
					for _, k := range keysOf(t, rdb, "*"+id+"*") {
						switch {
						case strings.HasPrefix(k, report), witness == "redis" && strings.HasPrefix(k, calls):
						case !scheme.Owns(k):
							t.Errorf("--keep-keys left %s, which the run's key scheme does not own", k)
						default:
							kept++
						}
					}
					if kept == 0 && name == "virtual-clock" { // a lock's slots go with their releases
						t.Errorf("--keep-keys kept no key of the run")
					}
					run(t, args...).wantExit(t, ExitOK)
					for _, k := range keysOf(t, rdb, "*"+id+"*") {
						if witness == "redis" && (strings.HasPrefix(k, report) || strings.HasPrefix(k, calls)) {
							continue // documented: hammer report reads it
						}
						t.Errorf("after the run the server still holds %s", k)
					}
				})
			}
		}
	}
}

// keysOf lists the keys matching pattern on a test's own server.
func keysOf(t *testing.T, rdb *redis.Client, pattern string) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}
