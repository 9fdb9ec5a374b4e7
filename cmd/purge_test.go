package cmd

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// wantPurge is the fixture's purge --older-than 10m -o json.
const wantPurge = `{
  "schema_version": 1,
  "dry_run": %s,
  "older_than_ms": 600000,
  "keys": [
    {
      "key": "rl:big:log",
      "removed": 2500,
      "remaining": 2,
      "skipped": "",
      "score_unit": "ms",
      "scores": "start",
      "scores_guessed": true
    },
    {
      "key": "rl:conc:u1",
      "removed": 2,
      "remaining": 2,
      "skipped": "",
      "score_unit": "ms",
      "scores": "start",
      "scores_guessed": true
    },
    {
      "key": "rl:fw:u4",
      "removed": 0,
      "remaining": 0,
      "skipped": "not a sorted set",
      "score_unit": null,
      "scores": null,
      "scores_guessed": false
    },
    {
      "key": "rl:fw:u5",
      "removed": 0,
      "remaining": 0,
      "skipped": "not a sorted set",
      "score_unit": null,
      "scores": null,
      "scores_guessed": false
    },
    {
      "key": "rl:junk",
      "removed": 0,
      "remaining": 0,
      "skipped": "not a sorted set",
      "score_unit": null,
      "scores": null,
      "scores_guessed": false
    },
    {
      "key": "rl:sliding:u2",
      "removed": 1,
      "remaining": 1,
      "skipped": "",
      "score_unit": "s",
      "scores": "start",
      "scores_guessed": true
    },
    {
      "key": "rl:sw:u3",
      "removed": 2,
      "remaining": 1,
      "skipped": "",
      "score_unit": "us",
      "scores": "start",
      "scores_guessed": true
    },
    {
      "key": "rl:tb:u6",
      "removed": 0,
      "remaining": 0,
      "skipped": "not a sorted set",
      "score_unit": null,
      "scores": null,
      "scores_guessed": false
    }
  ],
  "total_removed": 2505
}
`

func wantPurgeJSON(dry bool) string {
	if dry {
		return strings.Replace(wantPurge, "%s", "true", 1)
	}
	return strings.Replace(wantPurge, "%s", "false", 1)
}

// checkOnlyFreshLeft fails unless every sorted set of the fixture holds exactly its fresh members.
func checkOnlyFreshLeft(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	for key, fresh := range freshMembers {
		if got := membersOf(t, rdb, key); !reflect.DeepEqual(got, fresh) {
			t.Errorf("%s holds %v after purge, want exactly %v", key, got, fresh)
		}
	}
}

// checkUntouched fails unless the fixture's sorted sets still hold every member.
func checkUntouched(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	for key, n := range map[string]int64{"rl:big:log": 2502, "rl:conc:u1": 4, "rl:sliding:u2": 2, "rl:sw:u3": 3} {
		if got, _ := rdb.ZCard(ctx, key).Result(); got != n {
			t.Errorf("%s holds %d members, want all %d: something was removed", key, got, n)
		}
	}
}

func TestPurgeRemovesExactlyTheStaleMembers(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	a := []string{"--addr", srv.Addr, "purge", "rl:*", "--older-than", "10m", "--clock", "local", "-o", "json"}

	dry := at(t, append(a, "--dry-run")...).wantExit(t, ExitOK)
	if dry.out != wantPurgeJSON(true) {
		t.Errorf("dry run:\n%s\nwant:\n%s", dry.out, wantPurgeJSON(true))
	}
	dry.wantOneLineError(t, "dry run: nothing was removed; a real run would remove 2505 members older than 10m")
	checkUntouched(t, rdb)

	r := at(t, append(a, "--yes", "--batch", "700")...).wantExit(t, ExitOK)
	if r.out != wantPurgeJSON(false) {
		t.Errorf("purge:\n%s\nwant:\n%s", r.out, wantPurgeJSON(false))
	}
	if r.errOut != "" {
		t.Errorf("stderr %q, want nothing", r.errOut)
	}
	checkOnlyFreshLeft(t, rdb)

	// Again: nothing is left to remove.
	again := at(t, "--addr", srv.Addr, "purge", "rl:conc:u1", "rl:nope", "--older-than", "10m", "--clock", "local").wantExit(t, ExitOK)
	if again.out != "key\tnode\tunit\tremoved\tremaining\tskipped\tscores\n"+
		"rl:conc:u1\t"+srv.Addr+"\tms\t0\t2\t\tstart\n"+
		"rl:nope\t"+srv.Addr+"\t\t0\t0\tno such key\t\n" {
		t.Errorf("second purge (tsv):\n%s", again.out)
	}
}

func TestPurgeByServerClockAndScoreUnit(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	// The fixture is a year or more in the server's past: by the server's TIME every member is
	// older than 10m.
	r := run(t, "--addr", srv.Addr, "purge", "rl:conc:u1", "--older-than", "10m", "--dry-run", "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(r.out, `"removed": 4,`) {
		t.Errorf("server clock: %s", r.out)
	}
	// Milliseconds read as seconds lie far in the future: nothing is older than 10m.
	r = at(t, "--addr", srv.Addr, "purge", "rl:conc:u1", "--older-than", "10m", "--score-unit", "s", "--clock", "local", "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(r.out, `"removed": 0,`) || !strings.Contains(r.out, `"remaining": 4,`) {
		t.Errorf("--score-unit s: %s", r.out)
	}
}

func TestPurgeBadInputWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	cases := map[string][]string{
		"unknown flag":        {"purge", "rl:conc:u1", "--older-than", "10m", "--bogus"},
		"bad duration":        {"purge", "rl:conc:u1", "--older-than", "soon"},
		"no older-than":       {"purge", "rl:conc:u1"},
		"negative older-than": {"purge", "rl:conc:u1", "--older-than", "-10m"},
		"zero older-than":     {"purge", "rl:conc:u1", "--older-than", "0s"},
		"zero batch":          {"purge", "rl:conc:u1", "--older-than", "10m", "--batch", "0"},
		"negative batch":      {"purge", "rl:conc:u1", "--older-than", "10m", "--batch", "-1"},
		"batch too large":     {"purge", "rl:conc:u1", "--older-than", "10m", "--batch", "10001"},
		"batch not a number":  {"purge", "rl:conc:u1", "--older-than", "10m", "--batch", "many"},
		"unknown unit":        {"purge", "rl:conc:u1", "--older-than", "10m", "--score-unit", "minutes"},
		"unknown scores":      {"purge", "rl:conc:u1", "--older-than", "10m", "--scores", "end"},
		"unknown clock":       {"purge", "rl:conc:u1", "--older-than", "10m", "--clock", "sundial"},
		"zero count":          {"purge", "rl:*", "--older-than", "10m", "--yes", "--count", "0"},
		"no key":              {"purge", "--older-than", "10m"},
		"pattern without yes": {"purge", "rl:*", "--older-than", "10m"},
		"mixed without yes":   {"purge", "rl:conc:u1", "rl:s?", "--older-than", "10m"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, append([]string{"--addr", srv.Addr}, args...)...).wantExit(t, ExitUsage)
			r.wantOneLineError(t, "limitctl:", "purge --help")
			if r.out != "" {
				t.Errorf("stdout %q, want nothing", r.out)
			}
		})
	}
	run(t, "--addr", srv.Addr, "purge", "rl:*", "--older-than", "10m").wantOneLineError(t, "rl:* is a pattern: add --yes")
	checkUntouched(t, rdb)

	// A pattern that matches nothing: an empty report, a note, exit 0.
	r := run(t, "--addr", srv.Addr, "purge", "none:*", "--older-than", "10m", "--yes", "-o", "json").wantExit(t, ExitOK)
	if r.out != "{\n  \"schema_version\": 1,\n  \"dry_run\": false,\n  \"older_than_ms\": 600000,\n  \"keys\": [],\n  \"total_removed\": 0\n}\n" {
		t.Errorf("empty match:\n%s", r.out)
	}
	r.wantOneLineError(t, "note: no key matches none:*: nothing to purge")
}

func TestPurgeConfirmsAPatternOnATerminal(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	a := []string{"--addr", srv.Addr, "purge", "rl:*", "--older-than", "10m", "--clock", "local", "-o", "json"}

	// A no is an answer, not a failure: exit 0, nothing removed, under -o json an empty report.
	no := runIn(t, runConfig{now: fixedNow, tty: true, stdin: "n\n"}, a...).wantExit(t, ExitOK)
	if no.errOut != "Purge members older than 10m from 8 keys on 1 node? [y/N] limitctl: note: purge not confirmed: nothing removed\n" ||
		no.out != "{\n  \"schema_version\": 1,\n  \"dry_run\": false,\n  \"older_than_ms\": 600000,\n  \"keys\": [],\n  \"total_removed\": 0\n}\n" {
		t.Errorf("declined: stdout %q stderr %q", no.out, no.errOut)
	}
	checkUntouched(t, rdb)
	table := runIn(t, runConfig{now: fixedNow, tty: true, stdin: ""}, a[:len(a)-2]...).wantExit(t, ExitOK) // end of input is a no
	if table.out != "" || !strings.HasSuffix(table.errOut, "nothing removed\n") {
		t.Errorf("declined on a terminal: stdout %q stderr %q", table.out, table.errOut)
	}
	checkUntouched(t, rdb)

	yes := runIn(t, runConfig{now: fixedNow, tty: true, stdin: "y\n"}, a...).wantExit(t, ExitOK)
	if yes.errOut != "Purge members older than 10m from 8 keys on 1 node? [y/N] " || yes.out != wantPurgeJSON(false) {
		t.Errorf("confirmed: stdout %s stderr %q", yes.out, yes.errOut)
	}
	checkOnlyFreshLeft(t, rdb)

	// A literal key needs no confirmation.
	runIn(t, runConfig{now: fixedNow, tty: true}, "--addr", srv.Addr, "purge", "rl:conc:u1", "--older-than", "10m", "--clock", "local").wantExit(t, ExitOK)
}

// cancelAfterBatches cancels a context once n purge_stale calls have returned, as Ctrl-C would.
type cancelAfterBatches struct {
	mu     sync.Mutex
	n      int
	calls  int
	cancel context.CancelFunc
}

func (h *cancelAfterBatches) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *cancelAfterBatches) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *cancelAfterBatches) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && err == nil {
			h.mu.Lock()
			if h.calls++; h.calls == h.n {
				h.cancel()
			}
			h.mu.Unlock()
		}
		return err
	}
}

func TestPurgeCtrlCStopsBetweenBatchesAndReports(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hook := &cancelAfterBatches{n: 2, cancel: cancel}
	setup := func(f *Factory) {
		f.Conn.Addrs = []string{srv.Addr}
		c, _, err := f.Client(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.AddHook(hook)
	}
	r := runIn(t, runConfig{now: fixedNow, ctx: ctx, setup: setup},
		"--addr", srv.Addr, "purge", "rl:*", "--older-than", "10m", "--yes", "--batch", "1000", "--clock", "local", "-o", "json").wantExit(t, ExitInterrupted)
	r.wantOneLineError(t, "interrupted: purge stopped between batches after removing 2000 members from 1 key")
	var got purgeDoc
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("the report printed on Ctrl-C is not JSON: %v\n%s", err, r.out)
	}
	if len(got.Keys) != 1 || !sameKeyCounts(got.Keys[0], purgeKey{Key: "rl:big:log", Removed: 2000, Remaining: 502}) || got.TotalRemoved != 2000 {
		t.Errorf("report on Ctrl-C: %+v", got)
	}
	if n, _ := rdb.ZCard(context.Background(), "rl:big:log").Result(); n != 502 {
		t.Errorf("rl:big:log holds %d, want 502: the report must say exactly what was done", n)
	}
}

// purgerACL is the smallest ACL that runs purge (see the comment at the top of purge.go),
// confined to the limiter's keys.
const purgerACL = "user purger on >pw ~rl:* resetchannels -@all +scan +type +zrange +zcount +zcard +evalsha +eval +zremrangebyrank +ping +time"

func TestPurgeACLs(t *testing.T) {
	srv := redistest.Start(t, purgerACL, inspectReader)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	as := func(user string, args ...string) result {
		return runIn(t, runConfig{now: fixedNow}, append([]string{"--addr", srv.Addr, "--username", user, "--password-file", writePasswordFile(t, "pw"), "--clock", "local"}, args...)...)
	}
	// A read-only user cannot purge: one line naming the key and the refused command, nothing removed.
	r := as("reader", "purge", "rl:conc:u1", "--older-than", "10m").wantExit(t, ExitError)
	r.wantOneLineError(t, "rl:conc:u1", "NOPERM", "'eval")
	if strings.Contains(r.errOut, "pw") || r.out != "" {
		t.Errorf("stdout %q stderr %q", r.out, r.errOut)
	}
	// ... though it may count (ZCOUNT and ZCARD are reads).
	as("reader", "purge", "rl:conc:u1", "--older-than", "10m", "--dry-run").wantExit(t, ExitOK)
	checkUntouched(t, rdb)

	// The minimal purge user, with an empty script cache: EVALSHA answers NOSCRIPT, EVAL runs it.
	rdb.ScriptFlush(context.Background())
	r = as("purger", "purge", "rl:*", "--older-than", "10m", "--yes", "-o", "json").wantExit(t, ExitOK)
	if r.out != wantPurgeJSON(false) {
		t.Errorf("purger:\n%s", r.out)
	}
	checkOnlyFreshLeft(t, rdb)
	if denied := aclDenials(t, rdb); len(denied) != 1 || !strings.Contains(denied[0], "evalsha by reader") {
		t.Errorf("refused commands %v, want only the reader's EVALSHA", denied)
	}
}

// TestInspectAndPurgeOnACluster runs both commands against one 3-master cluster (formed once:
// it takes seconds), keys spread over every master.
func TestInspectAndPurgeOnACluster(t *testing.T) {
	skipInShortMode(t)
	cl := redistest.StartCluster(t, 3, 0)
	cc := cl.Client(t)
	seedLimiterKeys(t, cc)
	node := clusterNode(t, cc)
	seed := cl.Masters[0].Addr
	nodes := map[string]bool{}
	for k := range freshMembers {
		nodes[node(k)] = true
	}
	if len(nodes) < 2 {
		t.Fatalf("fixture sorted sets all on one master: the test would not prove SCAN visits every master")
	}
	ctx := context.Background()
	// The read-only user on every master, with what a cluster adds: the slot map (CLUSTER
	// SLOTS), the command table (COMMAND) and INFO, by which a single --addr is recognised
	// as a cluster node.
	for _, m := range cl.Masters {
		c := redis.NewClient(&redis.Options{Addr: m.Addr})
		for _, acl := range []string{inspectReader + " +cluster|slots +command +info", purgerACL + " +cluster|slots +command +info"} {
			args := []any{"ACL", "SETUSER"}
			for _, f := range strings.Fields(strings.TrimPrefix(acl, "user ")) {
				args = append(args, f)
			}
			if err := c.Do(ctx, args...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}

	t.Run("inspect", func(t *testing.T) {
		r := at(t, "--addr", seed, "--cluster", "inspect", "rl:*", "--stale", "10m", "--limit", "3", "--clock", "local", "-o", "json").wantExit(t, ExitOK)
		got := decodeInspect(t, r.out, true)
		sameKeys(t, got.Keys, node)
	})
	t.Run("inspect as the read-only user", func(t *testing.T) {
		// One seed address, no --cluster: recognised as a cluster through HELLO.
		r := runIn(t, runConfig{now: fixedNow}, "--addr", seed, "--username", "reader", "--password-file", writePasswordFile(t, "pw"),
			"inspect", "rl:*", "--stale", "10m", "--limit", "3", "--clock", "local", "-o", "json").wantExit(t, ExitOK)
		sameKeys(t, decodeInspect(t, r.out, true).Keys, node)
		runIn(t, runConfig{}, "--addr", seed, "--username", "reader", "--password-file", writePasswordFile(t, "pw"), "inspect", "rl:*").wantExit(t, ExitOK)
		for _, m := range cl.Masters {
			c := redis.NewClient(&redis.Options{Addr: m.Addr})
			if denied := aclDenials(t, c); len(denied) != 0 {
				t.Errorf("%s refused %v", m.Addr, denied)
			}
			c.Close()
		}
	})
	t.Run("members", func(t *testing.T) {
		r := at(t, "--addr", seed, "inspect", "--members", "rl:sw:u3", "--clock", "local", "-o", "json").wantExit(t, ExitOK)
		if !strings.Contains(r.out, `"node": "`+node("rl:sw:u3")+`"`) || !strings.Contains(r.out, `"score_unit": "us"`) {
			t.Errorf("--members on a cluster:\n%s", r.out)
		}
	})
	t.Run("purge", func(t *testing.T) {
		prompt := runIn(t, runConfig{now: fixedNow, tty: true, stdin: "no\n"}, "--addr", seed, "purge", "rl:*", "--older-than", "10m", "--clock", "local").wantExit(t, ExitOK)
		if want := "from 8 keys on " + itoa(len(allNodes(node))) + " nodes? [y/N]"; !strings.Contains(prompt.errOut, want) {
			t.Errorf("prompt %q lacks %q", prompt.errOut, want)
		}
		dry := at(t, "--addr", seed, "purge", "rl:*", "--older-than", "10m", "--dry-run", "--clock", "local", "-o", "json").wantExit(t, ExitOK)
		if dry.out != wantPurgeJSON(true) {
			t.Errorf("dry run on a cluster:\n%s", dry.out)
		}
		checkUntouched(t, cc)
		r := runIn(t, runConfig{now: fixedNow}, "--addr", seed, "--username", "purger", "--password-file", writePasswordFile(t, "pw"),
			"purge", "rl:*", "--older-than", "10m", "--yes", "--batch", "300", "--clock", "local", "-o", "json").wantExit(t, ExitOK)
		if r.out != wantPurgeJSON(false) {
			t.Errorf("purge on a cluster:\n%s", r.out)
		}
		checkOnlyFreshLeft(t, cc)
	})
}

// allNodes lists the distinct masters holding the fixture's keys.
func allNodes(node func(string) string) []string {
	seen := map[string]bool{}
	for _, k := range wantInspect() {
		seen[node(k.Key)] = true
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sameKeyCounts compares what purge did to a key, leaving out how its scores were read.
func sameKeyCounts(got, want purgeKey) bool {
	return got.Key == want.Key && got.Removed == want.Removed && got.Remaining == want.Remaining && got.Skipped == want.Skipped
}
