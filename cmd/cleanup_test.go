package cmd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/hammer"
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
		// A --witness redis run leaves its summary for `hammer report` (24h TTL), on purpose.
		keys = slices.DeleteFunc(keys, func(k string) bool {
			return strings.HasPrefix(k, "limitctl:report:{shared}:")
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
// the summary each process leaves for `hammer report` (24h, under <prefix>:report:{ID}:).
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
					scheme := hammer.KeyScheme{Prefix: "limitctl", RunID: id, Limiter: kind, Keys: 3, Strategies: []string{"naive", "lua"}}
					if keys == "1" {
						scheme.Keys = 1
					}
					report := "limitctl:report:{" + id + "}:"
					r := run(t, append(args, "--keep-keys")...).wantExit(t, ExitOK)
					kept := 0
					for _, k := range keysOf(t, rdb, "*"+id+"*") {
						switch {
						case strings.HasPrefix(k, report):
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
						if witness == "redis" && strings.HasPrefix(k, report) {
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
