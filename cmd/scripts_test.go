package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/scripts"
)

func TestScriptsListNeedsNoServerAndPrintsTheEmbeddedSHA1s(t *testing.T) {
	r := run(t, "--addr", "127.0.0.1:1", "scripts", "list", "-o", "json").wantExit(t, ExitOK)
	var got struct {
		SchemaVersion int `json:"schema_version"`
		Scripts       []struct {
			Name, SHA1  string
			Keys, Args  []string
			Description string
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.out)
	}
	if got.SchemaVersion != 1 {
		t.Errorf("schema_version %d, want 1", got.SchemaVersion)
	}
	want := map[string][]string{
		"concurrency_acquire":    {"limit", "now_ms", "stale_after_ms", "member"},
		"fixed_window":           {"limit", "window_ms"},
		"sliding_window":         {"limit", "now_ms", "window_ms", "member"},
		"token_bucket":           {"rate_per_s", "burst", "now_ms", "cost"},
		"sliding_window_counter": {"limit", "now_ms", "window_ms"},
		"purge_stale":            {"cutoff", "batch"},
	}
	for _, s := range got.Scripts {
		args, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected script %q", s.Name)
			continue
		}
		delete(want, s.Name)
		if strings.Join(s.Args, ",") != strings.Join(args, ",") {
			t.Errorf("%s ARGV %v, want %v", s.Name, s.Args, args)
		}
		shipped, _ := scripts.Lookup(s.Name)
		if s.SHA1 != shipped.SHA1() || len(s.SHA1) != 40 {
			t.Errorf("%s SHA1 %s, want %s", s.Name, s.SHA1, shipped.SHA1())
		}
	}
	for name := range want {
		t.Errorf("script %s missing from the list", name)
	}
	tsv := run(t, "scripts", "list").wantExit(t, ExitOK)
	if !strings.HasPrefix(tsv.out, "name\tsha1\tkeys\targv\tdescription\n") {
		t.Errorf("piped output is not tsv with a header:\n%s", tsv.out)
	}
}

func TestScriptsShowPrintsTheExactSource(t *testing.T) {
	r := run(t, "scripts", "show", "token_bucket").wantExit(t, ExitOK)
	if r.out != scripts.TokenBucket {
		t.Fatalf("show printed something other than the embedded bytes")
	}
	run(t, "scripts", "show", "leaky_bucket").wantExit(t, ExitUsage).wantOneLineError(t, "unknown script", "leaky_bucket")
	run(t, "scripts", "show").wantExit(t, ExitUsage).wantOneLineError(t, "script name")
}

func TestScriptsLoadThenStatusOnOneServer(t *testing.T) {
	srv := redistest.Start(t)
	run(t, "--addr", srv.Addr, "scripts", "status").wantExit(t, ExitCheckFailed).wantOneLineError(t, fmt.Sprintf("%d script(s) missing", len(scripts.All())))

	first := run(t, "--addr", srv.Addr, "scripts", "load", "-o", "json").wantExit(t, ExitOK)
	var loaded struct {
		Loaded []struct {
			Name, SHA1, Node string
			CachedBefore     bool `json:"cached_before"`
		} `json:"loaded"`
	}
	if err := json.Unmarshal([]byte(first.out), &loaded); err != nil {
		t.Fatal(err)
	}
	if len(loaded.Loaded) != len(scripts.All()) {
		t.Fatalf("loaded %d scripts, want every shipped one (%d):\n%s", len(loaded.Loaded), len(scripts.All()), first.out)
	}
	for _, l := range loaded.Loaded {
		if l.CachedBefore || l.Node != srv.Addr {
			t.Errorf("first load of %s: cached_before=%v node=%s, want false on %s", l.Name, l.CachedBefore, l.Node, srv.Addr)
		}
	}
	again := run(t, "--addr", srv.Addr, "scripts", "load", "fixed_window").wantExit(t, ExitOK)
	if !strings.Contains(again.out, "fixed_window\t"+scripts.SHA1(scripts.FixedWindow)+"\t"+srv.Addr+"\tyes") {
		t.Errorf("second load does not say it was cached before:\n%s", again.out)
	}
	status := run(t, "--addr", srv.Addr, "scripts", "status", "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(status.out, `"missing": 0`) || !strings.Contains(status.out, `"role": "master"`) {
		t.Errorf("status after load:\n%s", status.out)
	}
}

func TestScriptsLoadFileAndItsFailures(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "ours.lua")
	os.WriteFile(good, []byte("return redis.call('GET', KEYS[1])\n"), 0o644)
	r := run(t, "--addr", srv.Addr, "scripts", "load", "--file", good).wantExit(t, ExitOK)
	if !strings.Contains(r.out, "ours\t"+scripts.SHA1("return redis.call('GET', KEYS[1])\n")) {
		t.Errorf("--file not loaded under its base name:\n%s", r.out)
	}

	broken := filepath.Join(dir, "broken.lua")
	os.WriteFile(broken, []byte("return redis.call('GET', KEYS[1]\n"), 0o644)
	run(t, "--addr", srv.Addr, "scripts", "load", "--file", broken).wantExit(t, ExitError).wantOneLineError(t, "rejected script broken")

	binary := filepath.Join(dir, "image.lua")
	os.WriteFile(binary, []byte{0x89, 'P', 'N', 'G', 0, 0, 1}, 0o644)
	run(t, "--addr", srv.Addr, "scripts", "load", "--file", binary).wantExit(t, ExitUsage).wantOneLineError(t, "binary data")

	run(t, "--addr", srv.Addr, "scripts", "load", "--file", filepath.Join(dir, "missing.lua")).wantExit(t, ExitUsage).wantOneLineError(t, "cannot read script", "no such file")
	run(t, "--addr", srv.Addr, "scripts", "load", "nope").wantExit(t, ExitUsage).wantOneLineError(t, "unknown script")
}

func TestScriptsLoadFunctionsLibrary(t *testing.T) {
	srv := redistest.Start(t)
	run(t, "--addr", srv.Addr, "scripts", "load", "--functions").wantExit(t, ExitOK)
	libs, err := srv.Client(t).Do(context.Background(), "FUNCTION", "LIST", "LIBRARYNAME", "limitctl").Slice()
	if err != nil || len(libs) != 1 {
		t.Fatalf("library not on the server after load --functions: %v %v", libs, err)
	}
	again := run(t, "--addr", srv.Addr, "scripts", "load", "--functions").wantExit(t, ExitOK)
	if !strings.Contains(again.out, "\tyes") {
		t.Errorf("second --functions load does not report the library as already there:\n%s", again.out)
	}
	run(t, "--addr", srv.Addr, "scripts", "load", "--functions", "fixed_window").wantExit(t, ExitUsage)
}

func TestEveryCommandOnAClusterWithReplicas(t *testing.T) {
	skipInShortMode(t)
	cluster := redistest.StartCluster(t, 3, 1)
	seed := cluster.Masters[0].Addr
	r := run(t, "--addr", seed, "--cluster", "scripts", "load", "concurrency_acquire", "-o", "json").wantExit(t, ExitOK)
	for _, m := range append(cluster.Masters, cluster.Replicas...) {
		if !strings.Contains(r.out, m.Addr) {
			t.Errorf("load did not reach node %s:\n%s", m.Addr, r.out)
		}
	}
	// Redis 7 does not replicate SCRIPT LOAD, so load visits replicas itself; status asks them too.
	status := run(t, "--addr", seed, "--cluster", "scripts", "status", "concurrency_acquire", "-o", "json").wantExit(t, ExitOK)
	if strings.Count(status.out, `"role": "replica"`) != 3 || strings.Count(status.out, `"role": "master"`) != 3 {
		t.Errorf("status does not cover 3 masters and 3 replicas:\n%s", status.out)
	}
	// A single seed address of a cluster node is recognised as a cluster, like redis-cli -c.
	run(t, "--addr", seed, "scripts", "status", "concurrency_acquire").wantExit(t, ExitOK)
	run(t, "--addr", seed, "scripts", "status", "fixed_window").wantExit(t, ExitCheckFailed)

	// The other commands on the same cluster with replicas: keys on every master, each seen once
	// (replicas hold copies, inspect scans masters only), purged exactly, no CROSSSLOT anywhere.
	ctx := context.Background()
	cc := cluster.Client(t)
	old := time.Now().Add(-time.Hour).UnixMilli()
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("rl:conc:{tenant%d}", i)
		cc.ZAdd(ctx, key, redis.Z{Score: float64(old), Member: "stale-1"}, redis.Z{Score: float64(time.Now().UnixMilli()), Member: "fresh-1"})
	}
	waitReplicated(t, cluster)
	in := run(t, "--addr", seed, "inspect", "rl:conc:*", "--stale", "10m", "-o", "json").wantExit(t, ExitOK)
	if n := strings.Count(in.out, `"kind": "concurrency"`); n != 30 {
		t.Errorf("inspect found %d concurrency sets, want 30 (each key once)", n)
	}
	for _, m := range cluster.Masters {
		if !strings.Contains(in.out, `"node": "`+m.Addr+`"`) {
			t.Errorf("no key reported on master %s", m.Addr)
		}
	}
	p := run(t, "--addr", seed, "purge", "rl:conc:*", "--older-than", "10m", "--yes", "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(p.out, `"total_removed": 30`) {
		t.Errorf("purge on the cluster:\n%s", p.out)
	}
	for i := 0; i < 30; i++ {
		members, _ := cc.ZRange(ctx, fmt.Sprintf("rl:conc:{tenant%d}", i), 0, -1).Result()
		if len(members) != 1 || members[0] != "fresh-1" {
			t.Fatalf("tenant%d holds %v after purge, want only fresh-1", i, members)
		}
	}
	execBinary(t, nil, "--addr", seed, "hammer", "--duration", "1s", "--keys", "4", "--limit", "5", "--strategies", "naive,lua,function",
		"--assert", "lua.errors==0", "--assert", "function.errors==0", "--assert", "lua.overshoot==0").wantExit(t, ExitOK)
}

// waitReplicated waits until every replica has caught up with its master's writes.
func waitReplicated(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	ctx := context.Background()
	for _, m := range c.Masters {
		if err := m.Client(t).Do(ctx, "WAIT", 1, 2000).Err(); err != nil {
			t.Fatalf("WAIT on %s: %v", m.Addr, err)
		}
	}
}

func TestConnectionErrorsNameTheAddressAndHideThePassword(t *testing.T) {
	port := redistest.FreePort(t)
	addr := "127.0.0.1:" + itoa(port)
	run(t, "--addr", addr, "scripts", "status").wantExit(t, ExitError).wantOneLineError(t, "cannot connect to "+addr)
	r := run(t, "-u", "redis://bob:hunter2@"+addr+"/0", "scripts", "status").wantExit(t, ExitError)
	if strings.Contains(r.errOut, "hunter2") {
		t.Fatalf("password printed: %s", r.errOut)
	}
	srv := redistest.Start(t, "requirepass hunter2")
	wrong := runEnv(t, map[string]string{"REDISCLI_AUTH": "wrong-pass"}, "--addr", srv.Addr, "scripts", "status").wantExit(t, ExitError)
	if strings.Contains(wrong.errOut, "wrong-pass") {
		t.Fatalf("password printed: %s", wrong.errOut)
	}
	runEnv(t, map[string]string{"REDISCLI_AUTH": "hunter2"}, "--addr", srv.Addr, "scripts", "load").wantExit(t, ExitOK)
}

func TestBadConnectionFlagsAreUsageErrors(t *testing.T) {
	cases := map[string][]string{
		"db with cluster":     {"--db", "3", "--cluster", "scripts", "status"},
		"url and addr":        {"-u", "redis://127.0.0.1:1", "--addr", "127.0.0.1:1", "scripts", "status"},
		"unknown scheme":      {"-u", "http://127.0.0.1:1", "scripts", "status"},
		"addr without port":   {"--addr", "localhost", "scripts", "status"},
		"port out of range":   {"--addr", "127.0.0.1:70000", "scripts", "status"},
		"negative timeout":    {"--timeout", "-1s", "scripts", "status"},
		"cert without key":    {"--tls-cert", "c.pem", "scripts", "status"},
		"unknown output":      {"-o", "yaml", "scripts", "list"},
		"unknown flag":        {"scripts", "list", "--bogus"},
		"bad duration":        {"--timeout", "soon", "scripts", "list"},
		"unknown subcommand":  {"scripts", "frobnicate"},
		"unreadable password": {"--password-file", "/nonexistent/pw", "scripts", "status"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			run(t, args...).wantExit(t, ExitUsage).wantOneLineError(t, "limitctl:")
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestCommandsOverAUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "redis.sock")
	srv := redistest.Start(t, "unixsocket "+sock, "unixsocketperm 700")
	url := "unix://" + sock
	r := run(t, "-u", url, "scripts", "load", "fixed_window", "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(r.out, `"node": "unix:`+sock+`"`) {
		t.Errorf("load over the socket does not name it as the node:\n%s", r.out)
	}
	if cached, _ := srv.Client(t).ScriptExists(context.Background(), scripts.SHA1(scripts.FixedWindow)).Result(); !cached[0] {
		t.Errorf("the script did not reach the server behind the socket")
	}
	execBinary(t, []string{"REDIS_URL=" + url}, "hammer", "--duration", "1s", "--assert", "lua.overshoot==0").wantExit(t, ExitOK)
	run(t, "-u", url+"-missing", "scripts", "status").wantExit(t, ExitError).wantOneLineError(t, "cannot connect to unix:"+sock+"-missing")
}

func TestScriptsReachTheReplicasOfASingleMaster(t *testing.T) {
	skipInShortMode(t)
	master := redistest.Start(t)
	replica := redistest.Start(t, "replicaof 127.0.0.1 "+itoa(master.Port))
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, _ := master.Client(t).Info(ctx, "replication").Result()
		if strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never came online:\n%s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Status through the master sees the replica, and its empty script cache.
	before := run(t, "--addr", master.Addr, "scripts", "status", "fixed_window", "-o", "json").wantExit(t, ExitCheckFailed)
	if !strings.Contains(before.out, `"node": "`+replica.Addr+`"`) || !strings.Contains(before.out, `"role": "replica"`) {
		t.Fatalf("status through the master does not list its replica:\n%s", before.out)
	}
	run(t, "--addr", master.Addr, "scripts", "load", "fixed_window").wantExit(t, ExitOK)
	if cached, _ := replica.Client(t).ScriptExists(ctx, scripts.SHA1(scripts.FixedWindow)).Result(); !cached[0] {
		t.Fatalf("load through the master did not reach the replica")
	}
	run(t, "--addr", master.Addr, "scripts", "status", "fixed_window").wantExit(t, ExitOK)
}
