package cmd

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// sentinelFlags reach a Sentinel set's master as an operator would: the Sentinels and the name.
func sentinelFlags(s *redistest.SentinelSet) []string {
	var args []string
	for _, a := range s.Addrs() {
		args = append(args, "--sentinel", a)
	}
	return append(args, "--master", s.Name)
}

// Every command that talks to Redis works through Sentinels, by flags and by URL, and prints
// no password: the data nodes' from REDISCLI_AUTH, the Sentinels' from their own file.
func TestEveryCommandThroughSentinel(t *testing.T) {
	skipInShortMode(t) // Sentinels and a failover
	s := redistest.StartSentinel(t, redistest.SentinelOptions{Password: serverPassword, SentinelPassword: "sentinel-" + serverPassword})
	env := []string{"REDISCLI_AUTH=" + serverPassword}
	auth := append(sentinelFlags(s), "--sentinel-password-file", writePasswordFile(t, "sentinel-"+serverPassword))
	master := s.NodeClient(t, s.MasterAddr(t))
	seedResetKeys(t, master)
	for _, args := range [][]string{
		{"scripts", "load", "-o", "json"},
		{"scripts", "status", "-o", "json"},
		{"inspect", "rl:*", "-o", "json"},
		{"purge", "rl:*", "--older-than", "10m", "--yes", "-o", "json"},
		{"reset", "rl:*", "--dry-run", "-o", "json"},
		{"hammer", "--requests", "200", "--strategies", "naive,lua", "-o", "json"},
	} {
		t.Run(args[0]+" "+args[1], func(t *testing.T) {
			// The master before and after: on a starved machine the Sentinels may fail over on
			// their own (down-after 10s), and either was then the master the command reached.
			before := s.MasterAddr(t)
			r := execBinary(t, env, append(append([]string{}, auth...), args...)...).wantExit(t, ExitOK).noPassword(t, serverPassword)
			if after := s.MasterAddr(t); args[0] == "inspect" && !strings.Contains(r.out, `"node": "`+before+`"`) && !strings.Contains(r.out, `"node": "`+after+`"`) {
				t.Errorf("inspect does not name the master %s (%s before it ran) as the node:\n%s", after, before, r.out)
			}
			if args[0] == "scripts" && args[1] == "status" && !(strings.Contains(r.out, `"role": "replica"`) && strings.Contains(r.out, s.Nodes[1].Addr)) {
				t.Errorf("scripts status does not reach the replica %s:\n%s", s.Nodes[1].Addr, r.out)
			}
			if args[0] == "hammer" && !strings.Contains(r.errOut, "target: sentinel "+s.Name+"@") {
				t.Errorf("the hammer's target line:\n%s", r.errOut)
			}
		})
	}
	// The URL form: the data nodes' password in the URL, never printed.
	url := "redis+sentinel://:" + serverPassword + "@" + strings.Join(s.Addrs(), ",") + "/" + s.Name
	r := execBinary(t, nil, "--url", url, "--sentinel-password-file", writePasswordFile(t, "sentinel-"+serverPassword),
		"reset", "rl:*", "--yes", "-o", "json").wantExit(t, ExitOK).noPassword(t, serverPassword)
	if n, _ := master.DBSize(context.Background()).Result(); n != 1 || !strings.Contains(r.out, `"total_deleted": 3`) {
		t.Errorf("reset through the URL left %d keys:\n%s", n, r.out)
	}
	// A wrong Sentinel password: one line, no password.
	execBinary(t, env, append(sentinelFlags(s), "--sentinel-password-file", writePasswordFile(t, "wrong-"+serverPassword), "scripts", "status")...).
		wantExit(t, ExitError).noPassword(t, serverPassword).wantOneLineError(t, "refused the credentials", "--sentinel-password")
}

// The hammer through Sentinels across a SENTINEL FAILOVER mid-run: the atomic strategies stay
// at 0 overshoot, and the load goes on on the promoted replica.
//
// Why 0 is the right expectation, and what it takes: the failover client sends every decision
// to the one master the Sentinels name, and drops its connections to the old one when they
// announce the new one (+switch-master). But replication is asynchronous and the announcement
// comes a second or so after the promotion: the promoted replica holds the set as it was at the
// promotion, full (64 workers against a limit of 2), while the old master goes on deciding until
// the switch. Requests admitted there late are missing on the new master, but only while they
// hold their slot (--hold 20ms); the members copied at the promotion, whose releases went to the
// old master, block the new master until --stale-after reclaims them. So the new master admits
// nothing while a late request still holds, provided --stale-after outlasts the time from the
// promotion to the switch plus the hold: 5s here, in a 10s run that fails over after 2s. (With --stale-after 500ms the copied members
// went stale before the switch, and a late request overlapped the new master's admits: peak 3 of
// 2, a real overshoot the witness saw.) The price is a stricter limiter for up to --stale-after.
func TestHammerThroughSentinelSurvivesAFailover(t *testing.T) {
	skipInShortMode(t) // Sentinels and a failover
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	old := s.MasterAddr(t)
	cmd, out, errOut := startBinary(t, append(sentinelFlags(s), "--timeout", "1s", "hammer", "--duration", "10s",
		// A limit of 2 and a hold of 20ms: watch, slow under load (each conflict a retry), still
		// fills its slots (at 5 and 2ms it peaked at 4 beside another load: no evidence).
		"--limit", "2", "--hold", "20ms", "--stale-after", "5s", "--strategies", "watch,lua,function",
		// The failover is a fault the test causes (decisions in flight on the dropped connections
		// fail), so errors are asked for, as --inject would.
		"--on-error", "open", "-o", "json",
		"--assert", "lua.overshoot==0", "--assert", "watch.overshoot==0", "--assert", "function.overshoot==0")...)
	waitUntil(t, 30*time.Second, "two seconds of load", func() bool { return strings.Contains(errOut.String(), "[2s/") }, errOut)
	// Planned: an unplanned failover of asynchronous replication can lose the old master's
	// last admits, and then a correct limiter really admits more than its limit (README).
	promoted := s.PlannedFailover(t)
	// From here the promoted node's counts are its own decisions: as a replica it counted the
	// old master's replicated writes too.
	if err := s.NodeClient(t, promoted).ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 30*time.Second); code != ExitOK {
		t.Fatalf("exit %d across a Sentinel failover\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	h := parseHammer(t, result{out: out.String(), errOut: errOut.String()})
	for _, st := range h.Strategies {
		if st.Admitted == 0 || st.Overshoot != 0 {
			t.Errorf("%s: admitted %d, overshoot %d", st.Name, st.Admitted, st.Overshoot)
		}
		t.Logf("%s: %d attempts, %d admitted, %d errors %v, overshoot %d", st.Name, st.Attempts, st.Admitted, st.Errors, st.ErrorsByKind, st.Overshoot)
	}
	// The load went on on the new master: it ran the scripts and the transactions after the
	// failover.
	stats, err := s.NodeClient(t, promoted).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cmdstat_evalsha", "cmdstat_fcall", "cmdstat_exec"} {
		if !strings.Contains(stats, c+":calls=") {
			t.Errorf("the promoted master %s (was a replica of %s) ran no %s: the load did not follow the failover\n%s", promoted, old, c, stats)
		}
	}
	// And it admitted: each release is a ZREM, and at the switch at most 2 requests per strategy
	// held a slot admitted by the old master; more releases than those 6 are new admits.
	releases := 0
	if _, rest, ok := strings.Cut(stats, "cmdstat_zrem:calls="); ok {
		releases, _ = strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
	}
	if releases <= 6 {
		t.Errorf("the promoted master released %d requests: it admitted nothing of its own\n%s", releases, stats)
	}
	t.Logf("the promoted master %s: %d releases", promoted, releases)
	var summary struct {
		Target struct{ Kind, Addr string } `json:"target"`
	}
	json.Unmarshal(out.Bytes(), &summary)
	if summary.Target.Kind != "sentinel" {
		t.Errorf("target %+v, want kind sentinel", summary.Target)
	}
}

// A master the Sentinels name that is a password-only server older than 6 (HELLO refused): the
// hammer's rounds, which go through rueidis there in RESP2 (no HELLO sent, as on every path),
// authenticate with AUTH and the password alone, as go-redis's connections do, and every call is
// answered.
func TestHammerThroughSentinelToAPasswordOnlyMasterWithoutHELLO(t *testing.T) {
	skipInShortMode(t) // Sentinels
	s := redistest.StartSentinel(t, redistest.SentinelOptions{Password: serverPassword, NoHello: true})
	r := execBinary(t, []string{"REDISCLI_AUTH=" + serverPassword}, append(sentinelFlags(s), "hammer", "--requests", "600",
		"--strategies", "lua,function", "--workers", "32", "--conns", "2", "-o", "json")...).
		wantExit(t, ExitOK).noPassword(t, serverPassword)
	for _, st := range parseHammer(t, r).Strategies {
		if st.Attempts != 600 || st.Errors != 0 || st.Overshoot != 0 {
			t.Errorf("%s: %d attempts, %d errors %v, overshoot %d; want 600, 0, 0", st.Name, st.Attempts, st.Errors, st.ErrorsByKind, st.Overshoot)
		}
	}
	stats, err := s.NodeClient(t, s.MasterAddr(t)).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cmdstat_evalsha:", "cmdstat_fcall:", "cmdstat_auth:"} {
		if !strings.Contains(stats, c) {
			t.Errorf("the master ran no %s\n%s", strings.TrimSuffix(c, ":"), stats)
		}
	}
}
