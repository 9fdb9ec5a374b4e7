package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A hammer killed with SIGKILL leaves its held requests in the limiter and in the shared
// witness; the next run with the same id must not blame a correct lua for those ghosts.
func TestRedisWitnessAfterAKilledRunBlamesNoGhosts(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	args := func(d string) []string {
		return []string{"--addr", srv.Addr, "hammer", "--run-id", "ghosts", "--witness", "redis", "--strategies", "lua",
			"--workers", "32", "--limit", "20", "--hold", "50ms", "--stale-after", "1s", "--duration", d, "--keep-keys", "-o", "json"}
	}
	killed, _, errOut := startBinary(t, args("60s")...)
	rdb := srv.Client(t)
	ctx := context.Background()
	const set, witness = "limitctl:{ghosts}:lua", "limitctl:{ghosts}:lua:witness"
	// Held in the limiter and in the witness: a worker writes the witness after its admit's
	// reply, so the limiter's set can hold 10 before the witness holds any.
	waitUntil(t, 20*time.Second, "10 requests held in the limiter and the witness", func() bool {
		return rdb.ZCard(ctx, set).Val() >= 10 && rdb.ZCard(ctx, witness).Val() >= 10
	}, errOut)
	killed.Process.Kill()
	killed.Wait()
	if n := rdb.Exists(ctx, witness).Val(); n != 1 {
		t.Fatalf("the killed run left no witness behind; the test proves nothing")
	}
	// Past stale-after (1s, and half a second for the workers' skew and the clocks) the limiter
	// has forgotten the ghosts; the witness must forget them too.
	newest := int64(0)
	for _, key := range []string{set, witness} {
		for _, z := range rdb.ZRangeWithScores(ctx, key, -1, -1).Val() {
			newest = max(newest, int64(z.Score))
		}
	}
	waitUntil(t, 20*time.Second, "the server's clock past the newest ghost's stale-after", func() bool {
		return rdb.Time(ctx).Val().UnixMilli() > newest+1500
	})
	r := execBinary(t, nil, append(args("2s"), "--assert", "lua.overshoot==0")...)
	if r.code != ExitOK {
		t.Fatalf("exit %d after a killed run's leftovers\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errOut)
	}
	if !strings.Contains(r.out, `"overshoot": 0`) && !strings.Contains(r.out, `"overshoot":0`) {
		t.Fatalf("no overshoot 0 in the summary:\n%s", r.out)
	}
}

// Processes sharing a run id never delete each other's keys: the first to finish leaves them,
// the last one deletes them.
func TestSharedRunKeysAreDeletedByTheLastProcessOnly(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "notify-keyspace-events", "Kg").Err(); err != nil {
		t.Fatal(err)
	}
	sub := rdb.PSubscribe(ctx, "__keyspace@0__:limitctl:{peers}*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	args := func(d string) []string {
		return []string{"--addr", srv.Addr, "hammer", "--run-id", "peers", "--limiter", "token-bucket", "--strategies", "lua",
			"--workers", "4", "--duration", d, "-o", "json"}
	}
	long, _, longErr := startBinary(t, args("4s")...)
	waitUntil(t, 20*time.Second, "the long run joined", func() bool { return rdb.ZCard(ctx, "limitctl:{peers}:participants").Val() == 1 }, longErr)
	short := execBinary(t, nil, args("1s")...)
	if short.code != ExitOK {
		t.Fatalf("short run: exit %d\n%s", short.code, short.errOut)
	}
	if !strings.Contains(short.errOut, "other process(es) still running with run id peers") {
		t.Errorf("the first to finish did not say it left the keys:\n%s", short.errOut)
	}
	// Any deletion of the run's keys so far happened under the running process.
	deadline := time.After(300 * time.Millisecond)
	for waiting := true; waiting; {
		select {
		case msg := <-sub.Channel():
			if msg.Payload == "del" {
				t.Errorf("%s deleted while another process of the run was running", strings.TrimPrefix(msg.Channel, "__keyspace@0__:"))
			}
		case <-deadline:
			waiting = false
		}
	}
	if code := waitExit(t, long, 20*time.Second); code != ExitOK {
		t.Fatalf("long run: exit %d\n%s", code, longErr)
	}
	if keys := rdb.Keys(ctx, "limitctl:{peers}*").Val(); len(keys) != 0 {
		t.Errorf("the last process left %v behind", keys)
	}
}
