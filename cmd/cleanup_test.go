package cmd

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

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
