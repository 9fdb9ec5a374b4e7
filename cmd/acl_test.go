package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The minimal ACL of each command, read from docs/acl.md and tested against a real
// redis-server: the command works with exactly that rule, and fails with a one-line NOPERM
// error (exit 1) when any single permission is taken away.

// aclDoc is docs/acl.md read back.
type aclDoc struct {
	// setuser maps a section ("scripts load") to its rule after "reset on >PASSWORD".
	setuser map[string][]string
	// table maps a table row's first cell ("concurrency", "watch", "every run") to the rules
	// in its other cells.
	table map[string][][]string
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

func readACLDoc(t *testing.T) aclDoc {
	t.Helper()
	fh, err := os.Open("../docs/acl.md")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	doc := aclDoc{setuser: map[string][]string{}, table: map[string][][]string{}}
	section := ""
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		case strings.HasPrefix(line, "ACL SETUSER "):
			f := strings.Fields(line)
			if len(f) < 6 || f[3] != "reset" || f[4] != "on" || f[5] != ">PASSWORD" {
				t.Fatalf("docs/acl.md: %q does not start ACL SETUSER NAME reset on >PASSWORD", line)
			}
			doc.setuser[section] = f[6:]
		case strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---"):
			cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
			cells = cells[1 : len(cells)-1]
			key := strings.TrimSpace(strings.ReplaceAll(cells[0], "`", ""))
			var rules [][]string
			for _, c := range cells[1:] {
				var rule []string
				for _, m := range codeSpan.FindAllStringSubmatch(strings.ReplaceAll(c, "\x00", "|"), -1) {
					rule = append(rule, strings.Fields(m[1])...)
				}
				rules = append(rules, rule)
			}
			doc.table[key] = rules
		}
	}
	return doc
}

func (d aclDoc) rule(t *testing.T, section string) []string {
	t.Helper()
	r, ok := d.setuser[section]
	if !ok {
		t.Fatalf("docs/acl.md has no ACL SETUSER line under ## %s", section)
	}
	return r
}

func (d aclDoc) cell(t *testing.T, row string, col int) []string {
	t.Helper()
	cells, ok := d.table[row]
	if !ok || col >= len(cells) {
		t.Fatalf("docs/acl.md has no table row %q with %d rule columns", row, col+1)
	}
	return cells[col]
}

const aclPassword = "acl-user-pw-5ecret"

// aclServer is a server whose default user is off, with one user the tests redefine.
type aclServer struct {
	*redistest.Server
}

func startACLServer(t *testing.T) aclServer {
	return aclServer{redistest.StartACL(t)}
}

// runAs runs limitctl as user with rule (after "reset on >password").
func (s aclServer) runAs(t *testing.T, user string, rule []string, args ...string) result {
	t.Helper()
	s.SetUser(t, user+" reset on >"+aclPassword+" "+strings.Join(rule, " "))
	return runEnv(t, map[string]string{"REDISCLI_AUTH": aclPassword},
		append([]string{"--addr", s.Addr, "--username", user}, args...)...)
}

// checkMinimal runs the command with the rule (want exit code ok) and with each permission in
// turn taken away (want NOPERM, exit 1).
func (s aclServer) checkMinimal(t *testing.T, user string, rule []string, ok int, args ...string) {
	t.Helper()
	r := s.runAs(t, user, rule, args...)
	if r.code != ok {
		t.Fatalf("with %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", rule, r.code, ok, r.out, r.errOut)
	}
	for i, perm := range rule {
		less := append(append([]string{}, rule[:i]...), rule[i+1:]...)
		r := s.runAs(t, user, less, args...)
		if r.code != ExitError {
			t.Errorf("without %s: exit %d, want %d\nstderr:\n%s", perm, r.code, ExitError, r.errOut)
			continue
		}
		r.wantNOPERM(t)
	}
}

// wantNOPERM checks stderr ends in one "limitctl: ... NOPERM ..." line, with only the hammer's
// "target:" line before it, no stack trace and no password.
func (r result) wantNOPERM(t *testing.T) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.errOut, "\n"), "\n")
	last := lines[len(lines)-1]
	// Redis 7.0 words a refusal inside a script without NOPERM.
	if !strings.HasPrefix(last, "limitctl: ") || !(strings.Contains(last, "NOPERM") || strings.Contains(last, "user executing the script can't run")) {
		t.Errorf("stderr does not end in a NOPERM error line:\n%s", r.errOut)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "target: ") {
			t.Errorf("stderr has more than the error line:\n%s", r.errOut)
		}
	}
	if strings.Contains(r.errOut, "goroutine ") || strings.Contains(r.errOut, aclPassword) {
		t.Errorf("stderr holds a stack trace or the password:\n%s", r.errOut)
	}
}

func TestACLScriptsListAndShowNeedNoServer(t *testing.T) {
	addr := "127.0.0.1:" + itoa(redistest.FreePort(t))
	run(t, "-u", "redis://nobody:"+aclPassword+"@"+addr, "scripts", "list").wantExit(t, ExitOK)
	run(t, "-u", "redis://nobody:"+aclPassword+"@"+addr, "scripts", "show", "fixed_window").wantExit(t, ExitOK)
}

func TestACLScriptsMinimalRules(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	t.Run("load", func(t *testing.T) {
		srv.checkMinimal(t, "limitctl-load", doc.rule(t, "scripts load"), ExitOK, "scripts", "load")
	})
	t.Run("load --functions", func(t *testing.T) {
		srv.checkMinimal(t, "limitctl-functions", doc.rule(t, "scripts load --functions"), ExitOK, "scripts", "load", "--functions")
	})
	t.Run("status", func(t *testing.T) {
		// Every script is loaded (by the test above), so status exits 0.
		srv.checkMinimal(t, "limitctl-status", doc.rule(t, "scripts status"), ExitOK, "scripts", "status")
	})
}

func TestACLAuthenticationFailuresAreOneLine(t *testing.T) {
	srv := startACLServer(t)
	run(t, "--addr", srv.Addr, "scripts", "status").
		wantExit(t, ExitError).wantOneLineError(t, "cannot connect to "+srv.Addr, "NOAUTH")
	wrong := runEnv(t, map[string]string{"REDISCLI_AUTH": "not-" + aclPassword}, "--addr", srv.Addr, "--username", redistest.AdminUser, "scripts", "status")
	wrong.wantExit(t, ExitError).wantOneLineError(t, "cannot connect to "+srv.Addr, "WRONGPASS")
	if strings.Contains(wrong.errOut, aclPassword) {
		t.Errorf("the wrong password is printed: %s", wrong.errOut)
	}
}

// hammerArgs is a short run: a few decisions per strategy, over a low limit so rejections
// happen too, are enough to use every command. Four workers holding 5ms keep a concurrency
// slot busy while the others ask, even on a loaded machine.
func hammerArgs(extra ...string) []string {
	return append([]string{"hammer", "--requests", "20", "--workers", "4", "--hold", "5ms", "--limit", "1"}, extra...)
}

func TestACLHammerDefaultRun(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	srv.checkMinimal(t, "limitctl-hammer", doc.rule(t, "hammer"), ExitOK,
		hammerArgs("--assert", "naive.errors==0", "--assert", "lua.errors==0")...)
}

func TestACLHammerEveryLimiterAndStrategy(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	every := doc.cell(t, "every run", 0)
	for _, kind := range limiter.Kinds() {
		for _, strategy := range limiter.Strategies() {
			if strategy == limiter.Custom || !limiter.Supports(kind, strategy) {
				continue
			}
			column := 2 // the scripts
			switch strategy {
			case limiter.Naive, limiter.Multi:
				column = 0
			case limiter.Watch:
				column = 1
			}
			data, own := doc.cell(t, string(kind), column), doc.cell(t, string(strategy), 0)
			t.Run(string(kind)+"/"+string(strategy), func(t *testing.T) {
				args := hammerArgs("--limiter", string(kind), "--strategies", string(strategy),
					"--assert", string(strategy)+".errors==0", "--assert", string(strategy)+".rejected>0")
				rule := append(append(append([]string{}, every...), data...), own...)
				r := srv.runAs(t, "limitctl-hammer", rule, args...)
				r.wantExit(t, ExitOK)
				// Every permission of the limiter and the strategy is needed (those of every
				// run are checked by TestACLHammerDefaultRun).
				for _, perm := range append(append([]string{}, data...), own...) {
					r := srv.runAs(t, "limitctl-hammer", without(rule, perm), args...)
					if r.code != ExitError {
						t.Errorf("without %s: exit %d, want %d\nstderr:\n%s", perm, r.code, ExitError, r.errOut)
						continue
					}
					r.wantNOPERM(t)
				}
			})
		}
	}
}

func without(rule []string, perm string) []string {
	var out []string
	for _, p := range rule {
		if p != perm {
			out = append(out, p)
		}
	}
	return out
}

func TestACLHammerRedisWitness(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	base := append(append(append([]string{}, doc.cell(t, "every run", 0)...), doc.cell(t, "concurrency", 0)...), doc.cell(t, "naive", 0)...)
	witness := doc.cell(t, "--witness redis (concurrency)", 0)
	args := hammerArgs("--strategies", "naive", "--witness", "redis", "--assert", "naive.errors==0")
	srv.runAs(t, "limitctl-hammer", append(append([]string{}, base...), witness...), args...).wantExit(t, ExitOK)
	for _, perm := range witness {
		r := srv.runAs(t, "limitctl-hammer", append(append([]string{}, base...), without(witness, perm)...), args...)
		if r.code != ExitError {
			t.Fatalf("without %s: exit %d, want 1\n%s", perm, r.code, r.errOut)
		}
		r.wantNOPERM(t)
	}
}

// A given run id registers the process with the others sharing it (participants.go).
func TestACLHammerSharedRunID(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	base := append(append(append([]string{}, doc.cell(t, "every run", 0)...), doc.cell(t, "fixed-window", 0)...), doc.cell(t, "naive", 0)...)
	shared := doc.cell(t, "--run-id (processes sharing an id)", 0)
	args := hammerArgs("--limiter", "fixed-window", "--strategies", "naive", "--run-id", "acl-shared", "--assert", "naive.errors==0")
	srv.runAs(t, "limitctl-hammer", append(append([]string{}, base...), shared...), args...).wantExit(t, ExitOK)
	for _, perm := range shared {
		if slices.Contains(base, perm) {
			continue // the limiter needs it anyway
		}
		r := srv.runAs(t, "limitctl-hammer", append(append([]string{}, base...), without(shared, perm)...), args...)
		if r.code != ExitError {
			t.Fatalf("without %s: exit %d, want 1\n%s", perm, r.code, r.errOut)
		}
		r.wantNOPERM(t)
	}
}

func TestACLHammerKeepKeysNeedsNoCleanupPermissions(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	rule := without(doc.rule(t, "hammer"), "+unlink") // SCAN still reads what the run left
	srv.runAs(t, "limitctl-hammer", rule, hammerArgs("--keep-keys")...).wantExit(t, ExitOK)
}

// Without +info the hammer still runs; only the server-side cost per call is missing.
func TestACLHammerWithoutINFOReportsNoServerTime(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	rule := append(append(append([]string{}, doc.cell(t, "every run", 0)...), doc.cell(t, "concurrency", 2)...), doc.cell(t, "lua", 0)...)
	serverUsec := func(rule []string) any {
		t.Helper()
		r := srv.runAs(t, "limitctl-hammer", rule, hammerArgs("--strategies", "lua", "--requests", "200", "-o", "json")...).wantExit(t, ExitOK)
		var summary struct {
			Strategies []map[string]any `json:"strategies"`
		}
		if err := json.Unmarshal([]byte(r.out), &summary); err != nil || len(summary.Strategies) != 1 {
			t.Fatalf("summary: %v\n%s", err, r.out)
		}
		v, ok := summary.Strategies[0]["server_usec_per_call"]
		if !ok {
			t.Fatalf("no server_usec_per_call in %v", summary.Strategies[0])
		}
		return v
	}
	if v := serverUsec(rule); v != nil {
		t.Errorf("without +info: server_usec_per_call %v, want null", v)
	}
	if v := serverUsec(append(rule, "+info")); v == nil {
		t.Errorf("with +info: server_usec_per_call is null, want the measured cost")
	}
}

// With lua, +eval is the fallback when the script cache empties mid-run: without it every
// decision after a SCRIPT FLUSH fails; with it none does.
func TestACLHammerLuaNeedsEvalToSurviveAScriptFlush(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	admin := srv.ClientAs(t, redistest.AdminUser, redistest.AdminPassword)
	rule := append(append(append([]string{}, doc.cell(t, "every run", 0)...), doc.cell(t, "concurrency", 2)...), doc.cell(t, "lua", 0)...)
	errorsAfterFlushes := func(rule []string) float64 {
		t.Helper()
		stop := make(chan struct{})
		flushed := make(chan struct{})
		go func() { // flush all along the run, so some flush lands after the hammer's SCRIPT LOAD
			defer close(flushed)
			for {
				select {
				case <-stop:
					return
				case <-time.After(150 * time.Millisecond):
					admin.ScriptFlush(context.Background())
				}
			}
		}()
		r := srv.runAs(t, "limitctl-hammer", rule, "hammer", "--duration", "1s", "--workers", "2", "--strategies", "lua",
			"--on-error", "open", "-o", "json") // the flushes are faults the test causes: errors are asked for
		close(stop)
		<-flushed
		r.wantExit(t, ExitOK)
		var summary struct {
			Strategies []struct{ Attempts, Errors float64 } `json:"strategies"`
		}
		if err := json.Unmarshal([]byte(r.out), &summary); err != nil || len(summary.Strategies) != 1 || summary.Strategies[0].Attempts == 0 {
			t.Fatalf("summary: %v\n%s", err, r.out)
		}
		return summary.Strategies[0].Errors
	}
	if n := errorsAfterFlushes(rule); n == 0 {
		t.Errorf("without +eval: no errors after SCRIPT FLUSH; docs/acl.md says there are")
	}
	if n := errorsAfterFlushes(append(rule, "+eval")); n != 0 {
		t.Errorf("with +eval: %v errors after SCRIPT FLUSH, want 0", n)
	}
}

// On a cluster every node has the user, and the rules need +cluster|slots on top.
func TestACLOnACluster(t *testing.T) {
	skipInShortMode(t)
	doc := readACLDoc(t)
	cluster := redistest.StartCluster(t, 3, 0)
	onCluster := doc.cell(t, "on a cluster", 0)
	runAs := func(rule []string, args ...string) result {
		t.Helper()
		for _, m := range cluster.Masters {
			fields := append([]any{"ACL", "SETUSER", "limitctl-cluster", "reset", "on", ">" + aclPassword}, anys(rule)...)
			if err := m.Client(t).Do(context.Background(), fields...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		return runEnv(t, map[string]string{"REDISCLI_AUTH": aclPassword},
			append([]string{"--addr", cluster.Masters[0].Addr, "--username", "limitctl-cluster"}, args...)...)
	}
	for _, tc := range []struct {
		section string
		args    []string
	}{
		{"scripts load", []string{"scripts", "load", "-o", "json"}},
		{"scripts status", []string{"scripts", "status"}},
		{"hammer", hammerArgs("--keys", "4", "--assert", "naive.errors==0", "--assert", "lua.errors==0")},
	} {
		rule := append(append([]string{}, doc.rule(t, tc.section)...), onCluster...)
		r := runAs(rule, tc.args...).wantExit(t, ExitOK)
		if tc.section == "scripts load" {
			for _, m := range cluster.Masters {
				if !strings.Contains(r.out, `"node": "`+m.Addr+`"`) {
					t.Errorf("scripts load did not reach master %s:\n%s", m.Addr, r.out)
				}
			}
		}
		runAs(without(rule, onCluster[0]), tc.args...).wantExit(t, ExitError).wantNOPERM(t)
	}

	// inspect and purge, on keys spread over every master.
	seedLimiterKeys(t, cluster.Client(t))
	for _, tc := range []struct {
		section string
		args    []string
	}{
		{"inspect", []string{"inspect", "rl:*", "--stale", "10m", "-o", "json"}},
		{"purge", []string{"purge", "rl:*", "--older-than", "10m", "--dry-run"}},
		{"reset", []string{"reset", "rl:*", "--dry-run"}},
	} {
		rule := append(append([]string{}, doc.rule(t, tc.section)...), onCluster...)
		r := runAs(rule, tc.args...).wantExit(t, ExitOK)
		if tc.section == "inspect" && (strings.Count(r.out, `"key":`) != 8 || strings.Contains(r.out, `"memory_bytes": null`)) {
			t.Errorf("inspect on the cluster without +command misses keys or memory:\n%s", r.out)
		}
		runAs(without(rule, onCluster[0]), tc.args...).wantExit(t, ExitError).wantNOPERM(t)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// seedEveryType writes the inspect/purge fixture plus a set and a stream, so inspect needs
// its command for every key type.
func seedEveryType(t *testing.T, admin *redis.Client) {
	t.Helper()
	ctx := context.Background()
	if err := admin.FlushAll(ctx).Err(); err != nil { // a server this test started
		t.Fatal(err)
	}
	admin.ScriptFlush(ctx)
	seedLimiterKeys(t, admin)
	admin.SAdd(ctx, "rl:set", "a")
	admin.XAdd(ctx, &redis.XAddArgs{Stream: "rl:stream", Values: []string{"a", "1"}})
}

func TestACLInspectMinimalRule(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	seedEveryType(t, srv.ClientAs(t, redistest.AdminUser, redistest.AdminPassword))
	rule := doc.rule(t, "inspect")
	args := []string{"inspect", "rl:*", "--stale", "10m", "--limit", "3", "-o", "json"}
	srv.runAs(t, "limitctl-inspect", rule, args...).wantExit(t, ExitOK)
	srv.runAs(t, "limitctl-inspect", rule, "inspect", "--members", "rl:conc:u1").wantExit(t, ExitOK)
	for _, perm := range rule {
		r := srv.runAs(t, "limitctl-inspect", without(rule, perm), args...)
		switch perm {
		case "+memory|usage": // optional: memory unknown
			r.wantExit(t, ExitOK)
			if !strings.Contains(r.out, `"memory_bytes": null`) {
				t.Errorf("without +memory|usage memory is not null:\n%s", r.out)
			}
		default:
			if r.code != ExitError {
				t.Errorf("without %s: exit %d, want %d\nstderr:\n%s", perm, r.code, ExitError, r.errOut)
				continue
			}
			r.wantNOPERM(t)
		}
	}
	srv.runAs(t, "limitctl-inspect", without(rule, "+time"), append(args, "--clock", "local")...).wantExit(t, ExitOK)
}

func TestACLPurgeMinimalRule(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	admin := srv.ClientAs(t, redistest.AdminUser, redistest.AdminPassword)
	rule := doc.rule(t, "purge")
	// Each run starts from the fixture and an empty script cache (a fresh server), so every
	// command of a real purge is sent.
	purge := func(rule []string, extra ...string) result {
		t.Helper()
		seedEveryType(t, admin)
		return srv.runAs(t, "limitctl-purge", rule, append([]string{"purge", "rl:*", "--older-than", "10m", "--yes"}, extra...)...)
	}
	r := purge(rule, "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(r.out, `"total_removed": 2511`) {
		t.Errorf("purge removed other than every member of the fixture (all older than 10m):\n%s", r.out)
	}
	for _, perm := range rule {
		r := purge(without(rule, perm))
		if r.code != ExitError {
			t.Errorf("without %s: exit %d, want %d\nstderr:\n%s", perm, r.code, ExitError, r.errOut)
			continue
		}
		r.wantNOPERM(t)
	}
	purge(without(rule, "+time"), "--clock", "local").wantExit(t, ExitOK)
	purge(without(rule, "+zrange"), "--score-unit", "ms").wantExit(t, ExitOK)
	dry := strings.Fields("~* +ping +time +scan +type +zrange +zcount +zcard")
	if !strings.Contains(string(mustRead(t, "../docs/acl.md")), "`--dry-run` needs only `"+strings.Join(dry, " ")+"`") {
		t.Errorf("docs/acl.md does not give the --dry-run rule %v", dry)
	}
	purge(dry, "--dry-run").wantExit(t, ExitOK)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestACLResetMinimalRule(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	admin := srv.ClientAs(t, redistest.AdminUser, redistest.AdminPassword)
	rule := doc.rule(t, "reset")
	// Every key type, and a two-string bucket whose halves go in one UNLINK (EXISTS says which).
	reset := func(rule []string, extra ...string) result {
		t.Helper()
		seedEveryType(t, admin)
		seedResetKeys(t, admin)
		return srv.runAs(t, "limitctl-reset", rule, append([]string{"reset", "rl:*", "--yes", "--force"}, extra...)...)
	}
	r := reset(rule, "-o", "json").wantExit(t, ExitOK)
	if n, _ := admin.DBSize(context.Background()).Result(); n != 0 || !strings.Contains(r.out, `"total_deleted": 14`) {
		t.Errorf("reset --force left %d keys:\n%s", n, r.out)
	}
	for _, perm := range rule {
		r := reset(without(rule, perm))
		if r.code != ExitError {
			t.Errorf("without %s: exit %d, want %d\nstderr:\n%s", perm, r.code, ExitError, r.errOut)
			continue
		}
		r.wantNOPERM(t)
	}
	reset(without(rule, "+time"), "--clock", "local").wantExit(t, ExitOK)
	reset(without(without(rule, "+exists"), "+unlink"), "--dry-run").wantExit(t, ExitOK)
}

// Sentinels with ACL users of their own: the rule of docs/acl.md's "Through Sentinel" lets every
// command through with nothing refused in the Sentinels' ACL LOG, and each permission taken away
// either fails the command with one NOPERM line or shows up refused in the log (a subscription
// go-redis makes in the background is refused without failing the command: the log says it was
// needed).
func TestACLThroughSentinel(t *testing.T) {
	skipInShortMode(t) // Sentinels and a failover
	doc := readACLDoc(t)
	rule := doc.rule(t, "Through Sentinel")
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	ctx := context.Background()
	sentinels := make([]*redis.Client, len(s.Sentinels))
	for i, p := range s.Sentinels {
		sentinels[i] = p.Client(t)
	}
	setRule := func(rule []string) {
		t.Helper()
		for _, c := range sentinels {
			fields := append([]any{"ACL", "SETUSER", "limitctl-sentinel", "reset", "on", ">" + aclPassword}, anys(rule)...)
			if err := c.Do(ctx, fields...).Err(); err != nil {
				t.Fatal(err)
			}
			c.Do(ctx, "ACL", "LOG", "RESET")
		}
	}
	// refusals lists what the Sentinels' ACL LOG says they refused the user: commands and channels.
	refusals := func() []string {
		t.Helper()
		var out []string
		for _, c := range sentinels {
			entries, err := c.Do(ctx, "ACL", "LOG").Slice()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				switch entry := e.(type) {
				case map[any]any: // RESP3
					out = append(out, fmt.Sprint(entry["object"]))
				case []any: // RESP2: field, value, ...
					for i := 0; i+1 < len(entry); i += 2 {
						if k, _ := entry[i].(string); k == "object" {
							out = append(out, fmt.Sprint(entry[i+1]))
						}
					}
				}
			}
		}
		return out
	}
	pwFile := writePasswordFile(t, aclPassword)
	runAs := func() result {
		t.Helper()
		args := append(sentinelFlags(s), "--sentinel-username", "limitctl-sentinel", "--sentinel-password-file", pwFile,
			"hammer", "--requests", "200", "--strategies", "lua", "-o", "json")
		r := run(t, args...)
		time.Sleep(300 * time.Millisecond) // the background subscription's refusal reaches the log
		return r
	}
	setRule(rule)
	runAs().wantExit(t, ExitOK)
	if refused := refusals(); len(refused) != 0 {
		t.Fatalf("with the documented rule the Sentinels refused %v", refused)
	}
	for _, perm := range rule {
		setRule(without(rule, perm))
		r := runAs()
		refused := refusals()
		switch {
		case r.code == ExitError:
			r.wantNOPERM(t)
		case r.code == ExitOK && slices.Contains(refused, perm[1:]): // "+subscribe" is logged as "subscribe", "&+switch-master" as "+switch-master"
			// Refused in the background: the command went on, the log shows the permission was used.
		default:
			t.Errorf("without %s: exit %d, the Sentinels refused %v: the rule holds a permission nothing needs\nstderr:\n%s", perm, r.code, refused, r.errOut)
		}
	}
}

// The documented hammer user reads what the run left (leaks is a number, not null): SCAN, TYPE
// and PTTL are part of every run's rule, checked before any load.
func TestACLHammerReadsWhatTheRunLeft(t *testing.T) {
	doc := readACLDoc(t)
	srv := startACLServer(t)
	r := srv.runAs(t, "limitctl-hammer", doc.rule(t, "hammer"), hammerArgs("--strategies", "lua", "-o", "json")...).wantExit(t, ExitOK)
	var summary struct {
		Strategies []struct {
			Leaks *struct {
				KeysWithoutTTL int64 `json:"keys_without_ttl"`
			} `json:"leaks"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &summary); err != nil || len(summary.Strategies) != 1 || summary.Strategies[0].Leaks == nil {
		t.Fatalf("leaks not read under the documented rule: %v\n%s\n%s", err, r.out, r.errOut)
	}
}
