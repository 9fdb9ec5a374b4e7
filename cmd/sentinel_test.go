package cmd

import (
	"context"
	"encoding/json"
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
	if testing.Short() {
		t.Skip("slow (Sentinels, a failover): make test runs it, -short skips it")
	}
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
			r := execBinary(t, env, append(append([]string{}, auth...), args...)...).wantExit(t, ExitOK).noPassword(t, serverPassword)
			if args[0] == "inspect" && !strings.Contains(r.out, `"node": "`+s.MasterAddr(t)+`"`) {
				t.Errorf("inspect does not name the master %s as the node:\n%s", s.MasterAddr(t), r.out)
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
// Why 0 is the right expectation, not luck: the failover client sends every decision to the one
// master the Sentinels name, and drops its connections to the old one when they announce the
// new one (+switch-master), so no two masters decide at once for long. The promoted replica
// holds the set as it was replicated: members whose release went to the old master stay until
// --stale-after reclaims them (a stricter limiter for a moment, never a looser one), and the
// members of requests admitted on the old master after the promotion are missing there only
// while those requests hold their slot (--hold, 2ms). --stale-after 500ms keeps the first short.
func TestHammerThroughSentinelSurvivesAFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (Sentinels, a failover): make test runs it, -short skips it")
	}
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	old := s.MasterAddr(t)
	cmd, out, errOut := startBinary(t, append(sentinelFlags(s), "--timeout", "1s", "hammer", "--duration", "8s",
		// A limit of 2: watch, slow under load (each conflict a retry), still reaches it.
		"--limit", "2", "--stale-after", "500ms", "--strategies", "watch,lua,function",
		// The failover is a fault the test causes (decisions in flight on the dropped connections
		// fail), so errors are asked for, as --inject would.
		"--on-error", "open", "-o", "json",
		"--assert", "lua.overshoot==0", "--assert", "watch.overshoot==0", "--assert", "function.overshoot==0")...)
	time.Sleep(2 * time.Second)
	promoted := s.Failover(t)
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
	// switch, many times.
	stats, err := s.NodeClient(t, promoted).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cmdstat_evalsha", "cmdstat_fcall", "cmdstat_exec"} {
		if !strings.Contains(stats, c+":calls=") {
			t.Errorf("the promoted master %s (was a replica of %s) ran no %s: the load did not follow the failover\n%s", promoted, old, c, stats)
		}
	}
	var summary struct {
		Target struct{ Kind, Addr string } `json:"target"`
	}
	json.Unmarshal(out.Bytes(), &summary)
	if summary.Target.Kind != "sentinel" {
		t.Errorf("target %+v, want kind sentinel", summary.Target)
	}
}
